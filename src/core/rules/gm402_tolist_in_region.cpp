// GM402: `Tensor.tolist()` inside a compiled region.
#include "edits/helpers.h"
#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM402 tensor-tolist-in-region

## What it detects
A call `t.tolist()` inside a compiled region, unless `t`
is proven not to be a tensor.

## Why Dynamo breaks there
`.tolist()` copies every element into Python
numbers, which the graph cannot hold. Dynamo (torch 2.13) breaks with
"Tensor.tolist() with non-integer tensor" for floating tensors and with
"Data dependent operator" (`aten._local_scalar_dense`) for integer and
boolean ones.

## Not reported: `.numpy()`
The numpy round trip (`t.numpy()`, numpy ops,
`torch.from_numpy`) does *not* break on torch 2.13: Dynamo traces numpy
through `torch._numpy`. It was dropped from this rule after checking.

## What to do instead
Keep the data a tensor (index, reduce and compare
with torch ops); if Python values are really needed (e.g. as sizes), compute
them before the region and pass them in.

## The rewrite
One form has a fixed-shape equivalent and is fixed (safe): a loop that
fills each row of a tensor up to (or from) that row's length,

    for i, n in enumerate(lengths.tolist()):
        mask[i, :n] = True
->
    _graphmend_rt.fill_lengths(mask, lengths, True)

(`mask[i, n:] = v` gives `tail=True`). `_graphmend_rt.fill_lengths`
(docs/runtime.md) runs exactly that loop eagerly; while tracing, when
`lengths` is a 1-D integer or bool tensor with no more rows than `mask`,
`mask` a tensor of two or more dimensions that does not require grad and
the value a Python number, it writes the same elements with one
`masked_fill_` of the comparison of `torch.arange(mask.shape[1])` with the
lengths (negative lengths and lengths past the end select what the slice
selects). Otherwise it runs the loop, graph break included.

## When it declines
Every other use of the list: a Python list is used by Python code, and
whether a tensor can replace it depends on every use. For the loop above it
declines when the loop variables are read after the loop (or declared
`global`/`nonlocal`), the loop has an `else:`, the body is anything but that
one store of a constant number, or a comment is inside the loop.

## Example

```python
def forward(self, x, lengths):
    for n in lengths.tolist():   # GM402
        ...
```
)md";

class TolistInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM402"; }
  std::string_view name() const override { return "tensor-tolist-in-region"; }
  std::string_view summary() const override {
    return "`Tensor.tolist()` inside a compiled region breaks the graph";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    for_each_in_region(ctx, [&](NodeId n) {
      const NodeId recv = method_receiver(tree, n, "tolist");
      if (!recv || not_tensor(*ctx.model(), recv)) return;
      if (!tree.children(n, GM_F(Call, args)).empty()) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`.tolist()` copies tensor data into Python numbers");
      d.why =
          "Dynamo: Tensor.tolist() with non-integer tensor / Data dependent operator "
          "(aten._local_scalar_dense); the graph breaks at the call";
      std::string why;
      if (fill_lengths_fix(ctx, n, recv, d, why)) return;
      d.declined_reason = why.empty() ? "replacing the Python list with a tensor depends on "
                                        "every use of the list (only a loop filling rows up to "
                                        "their lengths is rewritten)"
                                      : why;
    });
  }

 private:
  // `for i, n in enumerate(L.tolist()): M[i, :n] = V` (or `M[i, n:]`) ->
  // `_graphmend_rt.fill_lengths(M, L, V[, tail=True])`. False when `call` is
  // not in that form (`why` empty) or the form cannot be rewritten (`why`).
  static bool fill_lengths_fix(const lint::RuleContext& ctx, NodeId call, NodeId lengths,
                               lint::Diagnostic& d, std::string& why) {
    const auto& tree = ctx.tree();
    const sema::Model& m = *ctx.model();
    const NodeId en = m.parent(call);
    if (!en || tree.kind(en) != NodeKind::Call ||
        m.qualified_name(tree.child(en, GM_F(Call, func))) !=
            std::optional<std::string>("builtins.enumerate"))
      return false;
    if (tree.children(en, GM_F(Call, args)).size() != 1 ||
        !tree.children(en, GM_F(Call, keywords)).empty())
      return false;
    const NodeId loop = m.parent(en);
    if (!loop || tree.kind(loop) != NodeKind::For || tree.child(loop, GM_F(For, iter)) != en)
      return false;
    const NodeId target = tree.child(loop, GM_F(For, target));
    const auto body = tree.children(loop, GM_F(For, body));
    if (tree.kind(target) != NodeKind::Tuple || body.size() != 1 ||
        tree.kind(body[0]) != NodeKind::Assign)
      return false;
    const auto names = tree.children(target, GM_F(Tuple, elts));
    const auto targets = tree.children(body[0], GM_F(Assign, targets));
    if (names.size() != 2 || tree.kind(names[0]) != NodeKind::Name ||
        tree.kind(names[1]) != NodeKind::Name || targets.size() != 1 ||
        tree.kind(targets[0]) != NodeKind::Subscript)
      return false;
    const std::string_view row = name_id(tree, names[0]), len = name_id(tree, names[1]);
    const NodeId out = tree.child(targets[0], GM_F(Subscript, value));
    const NodeId index = tree.child(targets[0], GM_F(Subscript, slice));
    if (row == len || tree.kind(out) != NodeKind::Name || tree.kind(index) != NodeKind::Tuple)
      return false;
    const auto idx = tree.children(index, GM_F(Tuple, elts));
    if (idx.size() != 2 || tree.kind(idx[0]) != NodeKind::Name || name_id(tree, idx[0]) != row ||
        tree.kind(idx[1]) != NodeKind::Slice || tree.child(idx[1], GM_F(Slice, step)))
      return false;
    const NodeId lower = tree.child(idx[1], GM_F(Slice, lower));
    const NodeId upper = tree.child(idx[1], GM_F(Slice, upper));
    auto is_len = [&](NodeId e) {
      return e && tree.kind(e) == NodeKind::Name && name_id(tree, e) == len;
    };
    const bool tail = is_len(lower) && !upper;
    if (!tail && !(is_len(upper) && !lower)) return false;
    const std::string_view out_name = name_id(tree, out);
    if (out_name == row || out_name == len) return false;
    // The form is ours from here: say why when it cannot be rewritten.
    NodeId value = tree.child(body[0], GM_F(Assign, value));
    if (tree.kind(value) == NodeKind::UnaryOp &&
        static_cast<NodeKind>(tree.field(value, GM_F(UnaryOp, op)).a) == NodeKind::USub)
      value = tree.child(value, GM_F(UnaryOp, operand));
    using K = ast::ConstantValue::Kind;
    const auto kind = tree.kind(value) == NodeKind::Constant
                          ? tree.constant_at(tree.field(value, GM_F(Constant, value))).kind
                          : K::None;
    if (kind != K::True && kind != K::False && kind != K::Int && kind != K::Float)
      return why = "the value stored is not a constant number or bool", false;
    if (!tree.children(loop, GM_F(For, orelse)).empty())
      return why = "the loop has an `else:` block", false;
    const NodeId func = predication::enclosing_function(m, loop);
    const auto& r = tree.at(loop);
    if (!func) return why = "not inside a function", false;
    for (std::string_view v : {row, len}) {
      if (predication::declared_nonlocal(ctx, func, v))
        return why = "the loop variable `" + std::string(v) + "` is declared global or nonlocal",
               false;
      if (predication::live_after(ctx, func, loop, v))
        return why = "the loop variable `" + std::string(v) + "` is read after the loop", false;
    }
    if (!edits::comments_in(ctx.file(), r.begin, r.end).empty())
      return why = "a comment inside the loop the fix would rewrite", false;
    std::string len_text(ctx.text_of(lengths));
    const NodeKind lk = tree.kind(lengths);
    if (lk == NodeKind::NamedExpr || lk == NodeKind::Yield || lk == NodeKind::YieldFrom)
      len_text = "(" + len_text + ")";
    std::string text = std::string(runtime_rewrite::kRuntimeAlias) + ".fill_lengths(" +
                       std::string(out_name) + ", " + len_text + ", " +
                       std::string(ctx.text_of(tree.child(body[0], GM_F(Assign, value)))) +
                       (tail ? ", tail=True)" : ")");
    runtime_rewrite::attach_fix(ctx, d,
                                "Fill the rows up to their lengths with one `masked_fill_` "
                                "(`_graphmend_rt.fill_lengths`)",
                                {edits::Edit::replace(r.begin, r.end, std::move(text))});
    return true;
  }
};

}  // namespace

const lint::Rule& gm402_tolist_in_region() {
  static const TolistInRegion rule;
  return rule;
}

}  // namespace gm::rules

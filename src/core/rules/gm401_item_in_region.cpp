// GM401: `Tensor.item()` inside a compiled region.
#include "edits/edit.h"
#include "rules/matching.h"
#include "rules/rules.h"
#include "semantic/ops.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM401 tensor-item-in-region

## What it detects
A call `t.item()` inside a compiled region (a `forward`,
a `torch.compile`d function, or what they call), unless `t` is proven not to
be a tensor.

## Why Dynamo breaks there
`.item()` turns tensor data into a Python
number. With the default `capture_scalar_outputs=False`, Dynamo cannot keep
an unbacked scalar in the graph: it ends the graph before the call, runs
`.item()` eagerly and starts a new graph after it. Dynamo (torch 2.13) says
"Unsupported Tensor.item() call with capture_scalar_outputs=False"
(graph-break type GB0124).

## What to do instead
Keep the value a tensor: `x * s` instead of
`x * s.item()`; `torch.where(c, a, b)` instead of branching on
`c.item()`; pass 0-d tensors to torch functions that accept them. If the
scalar is really needed, compute it outside the region and pass it in.

## The rewrite
`.item()` becomes `.detach()` when the number provably behaves as the
0-d tensor would (safe fix):
- the receiver is a whole-tensor reduction (`x.abs().max()`, `h.sum()`,
  `torch.amax(x)`, no arguments): a 0-d tensor, fresh (nothing else holds
  it, so no later in-place update can change it);
- the number is used directly, or through a local name bound once to it,
  only as an operand of `+`, `-`, `*` or of a single comparison, whose
  other operand is a tensor of the same dtype (`Model::same_dtype`:
  both derive from one parameter or local through dtype-keeping ops). A
  Python number and a 0-d tensor of the tensor's own dtype then give the
  same result dtype and the same values (the scalar is cast from that dtype
  exactly), eagerly and compiled;
- `.detach()`: the original number carried no gradient, nor does the tensor.

## When it declines
The receiver is not a whole-tensor reduction; the number meets Python
arithmetic (`s * 2`, float64 in Python), a division (`t / s`: CUDA
multiplies by the reciprocal of a Python number but divides by a tensor,
which can differ in the last bit; `s / t` is `t.reciprocal() * s`),
formatting, a size, an index,
`range()`, a return, a call, or a tensor whose dtype is not proven the
same (a Python number does not promote a tensor, a 0-d tensor of another
dtype can: `int32 + int64 0-d`); the name is rebound or not local.

## Example

```python
def forward(self, x):
    peak = x.abs().max().item()   # GM401
    return x * (x.abs() < peak)
# fixed
def forward(self, x):
    peak = x.abs().max().detach()
    return x * (x.abs() < peak)
```
)md";

class ItemInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM401"; }
  std::string_view name() const override { return "tensor-item-in-region"; }
  std::string_view summary() const override {
    return "`Tensor.item()` inside a compiled region breaks the graph";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    for_each_in_region(ctx, [&](NodeId n) {
      const NodeId recv = method_receiver(tree, n, "item");
      if (!recv || not_tensor(*ctx.model(), recv)) return;
      if (!tree.children(n, GM_F(Call, args)).empty() ||
          !tree.children(n, GM_F(Call, keywords)).empty())
        return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`.item()` reads tensor data into a Python scalar");
      d.why =
          "Dynamo: Unsupported Tensor.item() call with capture_scalar_outputs=False; "
          "the graph ends before the call and a new one starts after it";
      fix(ctx, d, n, recv);
    });
  }

 private:
  static void fix(const lint::RuleContext& ctx, lint::Diagnostic& d, NodeId call, NodeId recv) {
    const auto& t = ctx.tree();
    if (std::string why = KeepTensor(ctx, recv).why(call); !why.empty()) {
      d.declined_reason = "the number cannot stay a tensor: " + why;
      return;
    }
    const NodeId func = t.child(call, GM_F(Call, func));
    const std::uint32_t end = t.at(func).end;  // `item` ends the callee
    d.fix = edits::Fix::safe("Keep the reduction a 0-d tensor (`.detach()`)",
                             {edits::Edit::replace(end - 4, end, "detach")});
  }

  // Why the number of `recv.item()` cannot be the 0-d tensor `recv`; empty
  // when it can.
  class KeepTensor {
   public:
    KeepTensor(const lint::RuleContext& ctx, NodeId recv)
        : ctx_(ctx), t_(ctx.tree()), m_(*ctx.model()), recv_(recv) {}

    std::string why(NodeId call) {
      if (!whole_reduction()) return "`.item()` of something other than a whole-tensor reduction";
      const NodeId p = m_.parent(call);
      if (t_.kind(p) != NodeKind::Assign) return use(call);
      const auto targets = t_.children(p, GM_F(Assign, targets));
      if (targets.size() != 1 || t_.kind(targets[0]) != NodeKind::Name)
        return "the number is stored other than in a local name";
      // A local bound here only, every read in this scope and a permitted use.
      const sema::Binding* b = m_.resolve(targets[0]);
      if (!b || b->kind != sema::BindingKind::Assign ||
          m_.bindings_of(b->scope, b->name).size() != 1 || b->scope != m_.scope_of(p))
        return "`" + std::string(b ? b->name : "") + "` is bound more than once or is not local";
      NodeId fn = m_.parent(p);
      while (fn && t_.kind(fn) != NodeKind::FunctionDef &&
             t_.kind(fn) != NodeKind::AsyncFunctionDef)
        fn = m_.parent(fn);
      if (!fn) return "the number is not bound in a function";
      std::string out;
      int reads = 0;
      walk(t_, fn, [&](NodeId n) {
        if (!out.empty() || t_.kind(n) != NodeKind::Name || name_id(t_, n) != b->name ||
            ctx_of(t_, n) != NodeKind::Load)
          return;
        if (m_.resolve(n) != b) return;  // another variable of that name
        ++reads;
        out = use(n);
      });
      if (out.empty() && reads == 0) return "the number is not used";
      return out;
    }

   private:
    // `x.max()`, `x.abs().sum()`, `torch.amax(x)`: a reduction over every
    // element (no dim, no keyword), a fresh 0-d tensor.
    bool whole_reduction() const {
      return t_.kind(recv_) == NodeKind::Call && t_.children(recv_, GM_F(Call, keywords)).empty() &&
             m_.one_element(recv_);
    }

    // `u` (the number) as an operand beside a tensor of the same dtype.
    std::string use(NodeId u) const {
      const NodeId p = m_.parent(u);
      NodeId other;
      if (t_.kind(p) == NodeKind::BinOp) {
        const auto op = static_cast<NodeKind>(t_.field(p, GM_F(BinOp, op)).a);
        const NodeId l = t_.child(p, GM_F(BinOp, left));
        if (op == NodeKind::Div)
          return l == u ? "the number divides a tensor (`s / t` is `t.reciprocal() * s`)"
                        : "a tensor is divided by the number (CUDA multiplies by the "
                          "reciprocal of a Python number, but divides by a tensor)";
        if (op != NodeKind::Add && op != NodeKind::Sub && op != NodeKind::Mult)
          return "the number meets `" + std::string(ctx_.text_of(p)) +
                 "` (an operator kept for tensors)";
        other = l == u ? t_.child(p, GM_F(BinOp, right)) : l;
      } else if (t_.kind(p) == NodeKind::Compare) {
        const auto ops = t_.raw_list(p, GM_F(Compare, ops));
        const auto rhs = t_.children(p, GM_F(Compare, comparators));
        const auto k = ops.size() == 1 ? static_cast<NodeKind>(ops[0].index) : NodeKind::Is;
        if (k != NodeKind::Lt && k != NodeKind::LtE && k != NodeKind::Gt && k != NodeKind::GtE &&
            k != NodeKind::Eq && k != NodeKind::NotEq)
          return "the number is compared by a chain, identity or membership";
        const NodeId l = t_.child(p, GM_F(Compare, left));
        other = l == u ? rhs[0] : l;
      } else {
        return "the number is used as a Python value (`" + std::string(ctx_.text_of(p)) + "`)";
      }
      if (!m_.same_dtype(other, recv_))
        return "`" + std::string(ctx_.text_of(other)) +
               "` is not proven a tensor of the reduction's dtype";
      return {};
    }

    const lint::RuleContext& ctx_;
    const ast::Tree& t_;
    const sema::Model& m_;
    NodeId recv_;
  };
};

}  // namespace

const lint::Rule& gm401_item_in_region() {
  static const ItemInRegion rule;
  return rule;
}

}  // namespace gm::rules

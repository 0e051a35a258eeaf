// GM506: `self.buf = self.buf.to(...)` on a registered buffer inside a region.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "rules/matching.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "rules/traps.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM506 buffer-to-store-in-region

## What it detects
Inside a compiled region, the statement `self.NAME = self.NAME.to(ARGS)`
where the file registers `NAME` as an `nn.Buffer` object
(`self.NAME = nn.Buffer(...)`): the usual way to keep a non-persistent buffer
on the input's device and dtype (CTRL's `pos_encoding`). A buffer registered
with `register_buffer` holds a plain tensor, whose store Dynamo traces: not
reported.

## Why Dynamo breaks there
Once the buffer is on the right device and dtype, `.to()` returns the
buffer itself, an `nn.Buffer`; storing it runs `nn.Module.__setattr__`, which
reads the object's `persistent` flag, and Dynamo (torch 2.13) cannot trace
that ("Unsupported python_type() call", GB4841, `GetAttrVariable(
TensorVariable(), persistent)`): a graph break at every call, with or without
`capture_scalar_outputs` and `capture_dynamic_output_shape_ops`. That store
changes nothing.

## The rewrite
`_graphmend_rt.assign_to(self, "NAME", ARGS)`: eagerly exactly
`self.NAME = self.NAME.to(ARGS)`. While compiling the same `.to()`, and the
store only when it could change something: it is skipped when `.to()`
returned the very tensor already stored (Dynamo knows that identity at trace
time), the module's class keeps `nn.Module`'s own `__setattr__`,
`register_buffer` and `register_parameter`, and no global buffer or
parameter registration hook is installed (a store of the same object then
leaves every field of the module as it was). On another device or dtype the
store runs (its graph break, as before). **Safe.**

## When it declines
- `*args` or `**kwargs` in the `.to()` call;
- an argument other than a name, a constant, a `torch.` attribute, a
  `.device` / `.dtype` read, `torch.device(...)` of those or a conditional
  expression of those (`x.device if x is not None else y.device`): the
  original reads `self.NAME` before evaluating the arguments, the runtime
  after, so the arguments must run no code that could rebind the buffer;
- a comment inside the statement.

## Example
Before:

    def forward(self, x: torch.Tensor):
        self.pos = self.pos.to(device=x.device, dtype=x.dtype)
        return x + self.pos

After:

    def forward(self, x: torch.Tensor):
        _graphmend_rt.assign_to(self, "pos", device=x.device, dtype=x.dtype)
        return x + self.pos
)md";

// The names the file assigns `self.N = [torch.]nn.Buffer(...)`: then the
// buffer object itself is an `nn.Buffer`, and a `.to()` that changes nothing
// returns it. Computed once per file.
struct BufferNames {
  bool done = false;
  std::set<std::string, std::less<>> names;
};

bool assigns_buffer_object(const lint::RuleContext& ctx, std::string_view name) {
  auto& memo = ctx.scratch<BufferNames>();
  if (!memo.done) {
    memo.done = true;
    const sema::Model& m = *ctx.model();
    const auto& tree = ctx.tree();
    walk(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Assign) return;
      const auto targets = tree.children(n, GM_F(Assign, targets));
      const NodeId v = tree.child(n, GM_F(Assign, value));
      if (targets.size() != 1 || tree.kind(targets[0]) != NodeKind::Attribute ||
          tree.kind(v) != NodeKind::Call)
        return;
      const auto q = callee_name(m, v);
      if (q && (*q == "torch.nn.Buffer" || *q == "torch.nn.parameter.Buffer"))
        memo.names.emplace(tree.text(tree.field(targets[0], GM_F(Attribute, attr))));
    });
  }
  return memo.names.find(name) != memo.names.end();
}

thread_local int metadata_depth = 0;  // ast::DepthGuard's counter

bool metadata_read(const lint::RuleContext& ctx, NodeId e) {
  const auto& tree = ctx.tree();
  const ast::DepthGuard guard(metadata_depth);
  if (guard.exceeded()) return false;  // unknown: no fix
  switch (tree.kind(e)) {
    case NodeKind::Name:
    case NodeKind::Constant: return true;
    case NodeKind::Attribute: {
      const std::string_view attr = tree.text(tree.field(e, GM_F(Attribute, attr)));
      if (attr == "device" || attr == "dtype")
        return metadata_read(ctx, tree.child(e, GM_F(Attribute, value)));
      const auto q = ctx.model()->qualified_name(e);
      return q && q->starts_with("torch.");
    }
    case NodeKind::IfExp:
      return metadata_read(ctx, tree.child(e, GM_F(IfExp, test))) &&
             metadata_read(ctx, tree.child(e, GM_F(IfExp, body))) &&
             metadata_read(ctx, tree.child(e, GM_F(IfExp, orelse)));
    case NodeKind::Compare: {
      // `x is not None` in a conditional expression's test.
      if (!metadata_read(ctx, tree.child(e, GM_F(Compare, left)))) return false;
      for (NodeId c : tree.children(e, GM_F(Compare, comparators)))
        if (!metadata_read(ctx, c)) return false;
      for (NodeId op : tree.raw_list(e, GM_F(Compare, ops))) {
        const auto k = static_cast<NodeKind>(op.index);
        if (k != NodeKind::Is && k != NodeKind::IsNot) return false;
      }
      return true;
    }
    case NodeKind::Call: {
      const auto q = callee_name(*ctx.model(), e);
      if (!q || *q != "torch.device" || !tree.children(e, GM_F(Call, keywords)).empty())
        return false;
      for (NodeId a : tree.children(e, GM_F(Call, args)))
        if (!metadata_read(ctx, a)) return false;
      return true;
    }
    default: return false;
  }
}

class BufferToStore final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM506"; }
  std::string_view name() const override { return "buffer-to-store-in-region"; }
  std::string_view summary() const override {
    return "`self.buf = self.buf.to(...)` stores a buffer inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Assign) return;
      const auto targets = tree.children(n, GM_F(Assign, targets));
      const NodeId call = tree.child(n, GM_F(Assign, value));
      if (targets.size() != 1 || tree.kind(targets[0]) != NodeKind::Attribute) return;
      const NodeId target = targets[0];
      const NodeId read = method_receiver(tree, call, "to");
      if (!read || tree.kind(read) != NodeKind::Attribute) return;
      const NodeId self = tree.child(target, GM_F(Attribute, value));
      const std::string_view attr = tree.text(tree.field(target, GM_F(Attribute, attr)));
      const NodeId read_self = tree.child(read, GM_F(Attribute, value));
      if (tree.kind(self) != NodeKind::Name || tree.kind(read_self) != NodeKind::Name ||
          tree.text(tree.field(self, GM_F(Name, id))) != "self" ||
          tree.text(tree.field(read_self, GM_F(Name, id))) != "self" ||
          tree.text(tree.field(read, GM_F(Attribute, attr))) != attr)
        return;
      if (!assigns_buffer_object(ctx, attr)) return;
      auto& d = sink.report(tree.at(n).begin, tree.at(n).end,
                            "storing the buffer `self." + std::string(attr) +
                                "` inside a compiled region breaks the graph");
      d.why =
          "Dynamo: Unsupported python_type() call (GB4841): nn.Module.__setattr__ of a buffer "
          "calls register_buffer, which Dynamo cannot trace; no config switch avoids it";
      fix(ctx, d, n, call, attr);
    });
  }

 private:
  static void fix(const lint::RuleContext& ctx, lint::Diagnostic& d, NodeId stmt, NodeId call,
                  std::string_view attr) {
    const auto& tree = ctx.tree();
    const std::string_view text = ctx.text();
    if (traps::has_starred(tree, tree.children(call, GM_F(Call, args))) ||
        has_double_star(tree, call)) {
      d.declined_reason = "the `.to()` call has `*args` or `**kwargs`";
      return;
    }
    std::vector<NodeId> values(tree.children(call, GM_F(Call, args)).begin(),
                               tree.children(call, GM_F(Call, args)).end());
    for (NodeId k : tree.children(call, GM_F(Call, keywords)))
      values.push_back(tree.child(k, GM_F(keyword, value)));
    for (NodeId v : values) {
      if (!metadata_read(ctx, v)) {
        d.declined_reason =
            "the runtime evaluates the arguments before reading the buffer; `" +
            std::string(ctx.text_of(v)) +
            "` is not a name, a constant, a torch dtype or device, or a `.device` / `.dtype` read";
        return;
      }
    }
    const auto paren = runtime_rewrite::open_paren(ctx, call);
    const std::uint32_t begin = tree.at(stmt).begin, end = tree.at(stmt).end;
    if (!paren || text.substr(begin, end - begin).find('#') != std::string_view::npos) {
      d.declined_reason = "a comment inside the statement the fix would rewrite";
      return;
    }
    const bool no_args = tree.children(call, GM_F(Call, args)).empty() &&
                         tree.children(call, GM_F(Call, keywords)).empty();
    const bool breaks = text[*paren + 1] == '\n' || text[*paren + 1] == '\r';
    std::string head = std::string(runtime_rewrite::kRuntimeAlias) + ".assign_to(self, \"" +
                       std::string(attr) + "\"" +
                       (no_args  ? ""
                        : breaks ? ","
                                 : ", ");
    runtime_rewrite::attach_fix(
        ctx, d, "Store only when `.to()` returns another tensor (`_graphmend_rt.assign_to`)",
        {edits::Edit::replace(begin, *paren + 1, std::move(head))});
  }
};

}  // namespace

const lint::Rule& gm506_buffer_to_store() {
  static const BufferToStore rule;
  return rule;
}

}  // namespace gm::rules

// GM505: `requires_grad` mutation inside a region.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM505 requires-grad-mutation-in-region

## What it detects
Inside a compiled region: an assignment to
`t.requires_grad` (`t.requires_grad = True` or `= False`), and a call
`t.requires_grad_()` / `t.requires_grad_(True)` — unless `t` is proven not to
be a tensor. `t.requires_grad_(False)` (literal `False`) is not reported: it
traces with no break on torch 2.13.

## Why Dynamo breaks there
Dynamo cannot change autograd metadata in the
middle of a graph: "setattr() on Tensor.requires_grad" for the assignment,
"Unsupported Tensor.requires_grad_() call" on a graph input and
"requires_grad_() intermediate leaked as output" when the tensor escapes the
graph (torch 2.13). A `requires_grad_()` on an intermediate that never leaves
the graph does not break; that is not proven statically, so it is reported.

## What to do instead
Set `requires_grad` outside the region (on the
parameters, in `__init__` or before calling the model); use `t.detach()` for a
tensor that must not be differentiated.

## When it declines
Always: report-only, no automatic fix is offered.
Moving the mutation out of the region changes when it
happens. Report only.

## Example

```python
def forward(self, x):
    x.requires_grad_()        # GM505
    ...
```
)md";

class RequiresGradMutation final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM505"; }
  std::string_view name() const override { return "requires-grad-mutation-in-region"; }
  std::string_view summary() const override {
    return "`requires_grad` mutation inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) == NodeKind::Attribute) {
        if (static_cast<NodeKind>(tree.field(n, GM_F(Attribute, ctx)).a) != NodeKind::Store) return;
        if (tree.text(tree.field(n, GM_F(Attribute, attr))) != "requires_grad") return;
        if (not_tensor(m, tree.child(n, GM_F(Attribute, value)))) return;
        auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                              "assignment to `requires_grad` inside a compiled region");
        d.why = "Dynamo: setattr() on Tensor.requires_grad";
        d.declined_reason =
            declined("moving the mutation out of the region changes when it happens");
        return;
      }
      const NodeId recv = method_receiver(tree, n, "requires_grad_");
      if (!recv || not_tensor(m, recv)) return;
      const auto args = tree.children(n, GM_F(Call, args));
      NodeId flag = keyword(tree, n, "requires_grad");
      if (!flag && !args.empty()) flag = args[0];
      if (is_false_constant(tree, flag)) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`requires_grad_()` inside a compiled region");
      d.why =
          "Dynamo: Unsupported Tensor.requires_grad_() call (graph input) / requires_grad_() "
          "intermediate leaked as output";
      d.declined_reason = declined("moving the mutation out of the region changes when it happens");
    });
  }
};

}  // namespace

const lint::Rule& gm505_requires_grad_mutation() {
  static const RequiresGradMutation rule;
  return rule;
}

}  // namespace gm::rules

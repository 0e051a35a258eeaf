// GM401: `Tensor.item()` inside a compiled region.
#include "rules/gm4_gm5_common.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace gm45;

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

## When it declines
Always: report-only, no automatic fix is offered.
Whether the Python number can stay a tensor depends on
every later use (formatting, `range`, shape arguments); graphmend reports only.

## Example

```python
def forward(self, x):
    scale = x.abs().max().item()   # GM401
    return x / scale
# instead
def forward(self, x):
    return x / x.abs().max()
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
      d.declined_reason = declined(
          "keeping the value a tensor depends on every later use of the scalar");
    });
  }
};

}  // namespace

const lint::Rule& gm401_item_in_region() {
  static const ItemInRegion rule;
  return rule;
}

}  // namespace gm::rules

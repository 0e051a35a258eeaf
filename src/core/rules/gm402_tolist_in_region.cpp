// GM402: `Tensor.tolist()` inside a compiled region.
#include "rules/gm4_gm5_common.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace gm45;

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

## When it declines
Always: report-only, no automatic fix is offered.
A Python list is used by Python code; whether a tensor
can replace it depends on every use. Report only.

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
      d.declined_reason =
          declined("replacing the Python list with a tensor depends on every use of the list");
    });
  }
};

}  // namespace

const lint::Rule& gm402_tolist_in_region() {
  static const TolistInRegion rule;
  return rule;
}

}  // namespace gm::rules

// GM403: `torch.nonzero(x)`, `x.nonzero()`, one-argument `torch.where(c)`.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM403 nonzero-in-region

## What it detects
Inside a compiled region: `torch.nonzero(x)`,
`x.nonzero()` (unless `x` is proven not to be a tensor), `torch.argwhere(x)`
and `torch.where(cond)` with a single argument (which is
`torch.nonzero(cond, as_tuple=True)`). `torch.where(c, a, b)` with three
arguments has a fixed shape and is not reported.

## Why Dynamo breaks there
The number of rows of the result depends on the
data. With the default `capture_dynamic_output_shape_ops=False` Dynamo
breaks: "Dynamic shape operator" (torch 2.13).

## What to do instead
Use fixed-shape equivalents: masks with
`torch.where(m, x, 0)` instead of gathering the selected elements, `topk`
with a known `k`, or `torch.nonzero_static(x, size=k)` when an upper bound
is known.

## When it declines
Always: report-only, no automatic fix is offered.
What replaces the variable-length index list depends
on how it is used. Report only.

## Example

```python
idx = torch.nonzero(mask)          # GM403
# instead, if only a sum is needed
total = torch.where(mask, x, 0).sum()
```
)md";

class NonzeroInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM403"; }
  std::string_view name() const override { return "nonzero-in-region"; }
  std::string_view summary() const override {
    return "`nonzero` / one-argument `torch.where` has a data-dependent output shape";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      std::string what;
      if (auto q = callee_name(m, n)) {
        if (*q == "torch.nonzero" || *q == "torch.argwhere") {
          what = "`" + *q + "`";
        } else if (*q == "torch.where") {
          if (tree.children(n, GM_F(Call, args)).size() != 1 ||
              !tree.children(n, GM_F(Call, keywords)).empty())
            return;
          what = "one-argument `torch.where`";
        }
      }
      if (what.empty()) {
        const NodeId recv = method_receiver(tree, n, "nonzero");
        if (!recv || not_tensor(m, recv)) return;
        what = "`.nonzero()`";
      }
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            what + " has a data-dependent output shape");
      d.why =
          "Dynamo: Dynamic shape operator (capture_dynamic_output_shape_ops=False); the "
          "number of result rows depends on tensor data";
      d.declined_reason =
          declined("a fixed-shape replacement depends on how the index list is used");
    });
  }
};

}  // namespace

const lint::Rule& gm403_nonzero_in_region() {
  static const NonzeroInRegion rule;
  return rule;
}

}  // namespace gm::rules

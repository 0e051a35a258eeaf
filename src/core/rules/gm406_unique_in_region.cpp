// GM406: `torch.unique` / `.unique()` / `unique_consecutive`.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM406 unique-in-region

## What it detects
Inside a compiled region: `torch.unique(...)`,
`torch.unique_consecutive(...)`, and the methods `x.unique()` /
`x.unique_consecutive()` (unless `x` is proven not to be a tensor).

## Why Dynamo breaks there
The number of distinct values depends on the
data. Dynamo (torch 2.13) breaks with "Dynamic shape operator".

## What to do instead
Work with fixed-size encodings (one-hot /
`scatter` into a buffer of the known number of classes, `bincount` with
`minlength`), or move the deduplication out of the region.

## When it declines
Always: report-only, no automatic fix is offered.
There is no fixed-shape equivalent in general. Report
only.

## Example

```python
labels = targets.unique()   # GM406
```
)md";

class UniqueInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM406"; }
  std::string_view name() const override { return "unique-in-region"; }
  std::string_view summary() const override {
    return "`unique` / `unique_consecutive` has a data-dependent output shape";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      std::string what;
      auto q = callee_name(m, n);
      if (q && (*q == "torch.unique" || *q == "torch.unique_consecutive")) {
        what = "`" + *q + "`";
      } else {
        for (std::string_view name : {"unique", "unique_consecutive"}) {
          const NodeId recv = method_receiver(tree, n, name);
          if (recv && !not_tensor(m, recv)) what = "`." + std::string(name) + "()`";
        }
      }
      if (what.empty()) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            what + " has a data-dependent output shape");
      d.why =
          "Dynamo: Dynamic shape operator; the number of distinct values depends on tensor data";
      d.declined_reason = declined("there is no fixed-shape equivalent in general");
    });
  }
};

}  // namespace

const lint::Rule& gm406_unique_in_region() {
  static const UniqueInRegion rule;
  return rule;
}

}  // namespace gm::rules

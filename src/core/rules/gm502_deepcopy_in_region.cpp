// GM502: `copy.deepcopy` of a tensor (or of something that may hold one).
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM502 deepcopy-in-region

## What it detects
Inside a compiled region, `copy.deepcopy(obj)` unless
`obj` is proven to hold no tensor (a Python scalar, string or `None`, or a
container whose items are proven not to be tensors).

## Why Dynamo breaks there
Dynamo refuses to deep-copy a tensor:
"Attempted to copy.deepcopy a tensor" (torch 2.13) — also when the tensor is
inside a list or dict being copied. A deep copy of plain Python data traces
fine and is not reported.

## What to do instead
`t.clone()` (or `t.detach().clone()`) for a tensor;
for modules or containers, copy outside the region (e.g. in `__init__`).

## When it declines
Always: report-only, no automatic fix is offered.
`clone()` equals `deepcopy` only for a plain
tensor (not a subclass, not a Parameter whose identity or `requires_grad`
matters); that is not proven. Report only.

## Example

```python
saved = copy.deepcopy(hidden)   # GM502
saved = hidden.clone()
```
)md";

class DeepcopyInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM502"; }
  std::string_view name() const override { return "deepcopy-in-region"; }
  std::string_view summary() const override {
    return "`copy.deepcopy` of a tensor inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      auto q = callee_name(m, n);
      if (!q || *q != "copy.deepcopy") return;
      const auto args = tree.children(n, GM_F(Call, args));
      if (args.empty() || tree.kind(args[0]) == NodeKind::Starred) return;
      const sema::TensorFact f = m.fact(args[0]);
      if (f.kind == sema::TensorKind::NotTensor &&
          (f.is_none || f.element == sema::TensorKind::NotTensor ||
           tree.kind(args[0]) == NodeKind::Constant || f.dtype != sema::DType::Unknown))
        return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            f.kind == sema::TensorKind::Tensor
                                ? "`copy.deepcopy` of a tensor inside a compiled region"
                                : "`copy.deepcopy` of a value that may hold a tensor inside a "
                                  "compiled region");
      d.why = "Dynamo: Attempted to copy.deepcopy a tensor";
      d.declined_reason =
          declined("`clone()` equals `deepcopy` only for a plain tensor, which is not proven");
    });
  }
};

}  // namespace

const lint::Rule& gm502_deepcopy_in_region() {
  static const DeepcopyInRegion rule;
  return rule;
}

}  // namespace gm::rules

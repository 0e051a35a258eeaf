// GM404: reading `x[mask]` with a boolean tensor mask.
#include "rules/gm4_gm5_common.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace gm45;

constexpr std::string_view kDoc = R"md(# GM404 bool-mask-index-in-region

## What it detects
Inside a compiled region, a subscript *read* `x[mask]`
whose index is proven to be a boolean tensor (a comparison of tensors,
`torch.isnan(...)`, `~m`, `m1 & m2`, a `torch.BoolTensor` parameter, ...).

## Why Dynamo breaks there
Boolean-mask indexing returns as many elements
as the mask has `True`s: a data-dependent shape. Dynamo (torch 2.13) breaks
with "Dynamic shape operator" (it is `aten.nonzero` underneath).

## Not reported: plain assignment through a mask
`x[mask] = v` traces as
`index_put_` with no break on torch 2.13 and is not reported; the *read*
`x[mask]` on the right of `y[m] = x[m]` still is, and so is the augmented
assignment `x[mask] += v`, which reads `x[mask]` first (it breaks on 2.13).
Masks that are not proven boolean tensors (unknown facts, integer index
tensors, slices) are not reported.

## What to do instead
Keep the full shape: `torch.where(mask, x, 0).sum()`
instead of `x[mask].sum()`, `(x * mask).sum() / mask.sum()` for a masked mean,
`x.masked_fill(~mask, v)`.

## When it declines
Always: report-only, no automatic fix is offered.
A fixed-shape rewrite is only equivalent when the
selection flows into a reduction; that proof is not implemented. Report only.

## Example

```python
valid = x[x > 0].sum()               # GM404
valid = torch.where(x > 0, x, 0).sum()
```
)md";

class BoolMaskIndex final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM404"; }
  std::string_view name() const override { return "bool-mask-index-in-region"; }
  std::string_view summary() const override {
    return "boolean-mask indexing `x[mask]` has a data-dependent output shape";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Subscript) return;
      if (static_cast<NodeKind>(tree.field(n, GM_F(Subscript, ctx)).a) != NodeKind::Load) {
        // x[m] = v is index_put_ (no break); x[m] += v reads x[m] first.
        const NodeId p = m.parent(n);
        if (!p || tree.kind(p) != NodeKind::AugAssign ||
            tree.child(p, GM_F(AugAssign, target)) != n)
          return;
      }
      const NodeId index = tree.child(n, GM_F(Subscript, slice));
      const sema::TensorFact f = m.fact(index);
      if (f.kind != sema::TensorKind::Tensor || f.dtype != sema::DType::Bool) return;
      if (not_tensor(m, tree.child(n, GM_F(Subscript, value)))) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "indexing with a boolean mask has a data-dependent output shape");
      d.why =
          "Dynamo: Dynamic shape operator (boolean-mask indexing is aten.nonzero "
          "underneath; capture_dynamic_output_shape_ops=False)";
      d.declined_reason = declined(
          "a fixed-shape rewrite (torch.where) is only equivalent when the selection "
          "feeds a reduction, which is not proven");
    });
  }
};

}  // namespace

const lint::Rule& gm404_bool_mask_index() {
  static const BoolMaskIndex rule;
  return rule;
}

}  // namespace gm::rules

// GM405: `repeat_interleave` with tensor repeats and no `output_size=`.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM405 repeat-interleave-without-output-size

## What it detects
Inside a compiled region, `torch.repeat_interleave(x,
repeats)`, `torch.repeat_interleave(repeats)` or `x.repeat_interleave(repeats)`
without an `output_size=` keyword, where `repeats` is shown to be a tensor
(annotated or computed as one). An `int` repeat count has a static shape, and
repeats nothing shows to be a tensor (`self.heads`, a config value, an
unannotated parameter) are not reported: most are counts, and a report there
would claim a break Dynamo does not make.

## Why Dynamo breaks there
With a tensor of repeat counts the length of
the result is `repeats.sum()`, a data-dependent shape. Dynamo (torch 2.13)
breaks with "Dynamic shape operator". Passing `output_size=` makes the shape
known and the call traces with no break.

## What to do instead
Pass `output_size=` when the total is known (e.g.
the sequence length), or repeat by an `int`.

## When it declines
Always: report-only, no automatic fix is offered.
graphmend cannot know the total length. Report only.

## Example

```python
y = x.repeat_interleave(counts, dim=0)                   # GM405
y = x.repeat_interleave(counts, dim=0, output_size=n)    # no break
```
)md";

class RepeatInterleave final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM405"; }
  std::string_view name() const override { return "repeat-interleave-without-output-size"; }
  std::string_view summary() const override {
    return "`repeat_interleave` with tensor repeats and no `output_size=`";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      const auto args = tree.children(n, GM_F(Call, args));
      NodeId repeats = keyword(tree, n, "repeats");
      auto q = callee_name(m, n);
      if (q && *q == "torch.repeat_interleave") {
        // torch.repeat_interleave(x, repeats) or torch.repeat_interleave(repeats)
        if (!repeats && args.size() >= 2) repeats = args[1];
        if (!repeats && args.size() == 1) repeats = args[0];
      } else {
        const NodeId recv = method_receiver(tree, n, "repeat_interleave");
        if (!recv || not_tensor(m, recv)) return;
        if (!repeats && !args.empty()) repeats = args[0];
      }
      if (!repeats || tree.kind(repeats) == NodeKind::Starred) return;
      // output_size is keyword-only; **kwargs may carry it.
      if (keyword(tree, n, "output_size") || has_double_star(tree, n)) return;
      const auto evidence = m.tensor_evidence(repeats);
      if (evidence == sema::TensorEvidence::Unknown || evidence == sema::TensorEvidence::NotTensor)
        return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`repeat_interleave` with tensor repeats and no `output_size=` "
                            "has a data-dependent output shape");
      d.why =
          "Dynamo: Dynamic shape operator; the result length is repeats.sum(), known only "
          "from tensor data";
      d.declined_reason = declined("the total length for `output_size=` is not known statically");
    });
  }
};

}  // namespace

const lint::Rule& gm405_repeat_interleave() {
  static const RepeatInterleave rule;
  return rule;
}

}  // namespace gm::rules

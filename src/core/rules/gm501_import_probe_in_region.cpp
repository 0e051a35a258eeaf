// GM501: `importlib.import_module` / `pkgutil` probes inside a region.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM501 import-probe-in-region

## What it detects
Inside a compiled region, a call of
`importlib.import_module(...)` or of any `pkgutil.*` function
(`find_loader`, `get_loader`, `iter_modules`, ...), resolved through the
file's imports (a local name that shadows them is not reported).

## Why Dynamo breaks there
Dynamo marks `importlib.import_module` as a
skipped function ("Attempted to call function marked as skipped") and
cannot build variables for what `pkgutil` returns ("Unexpected type in
sourceless builder"; `iter_modules` is a generator and makes Dynamo skip the
frame).

## Not reported
`importlib.util.find_spec(...)` and transformers'
`is_*_available()` helpers: `find_spec` traces without a break on torch
2.13 (checked with a counting backend), and the `is_*_available()` helpers
are cached constants.

## What to do instead
Probe once at module import time and keep the result
in a module-level constant; inside `forward` read the constant.

## When it declines
Always: report-only, no automatic fix is offered.
Hoisting the probe to module level is only
equivalent when its result does not change between calls; that is not
proven. Report only.

## Example

```python
def forward(self, x):
    mod = importlib.import_module("apex")    # GM501
# instead, at module level
_APEX = importlib.import_module("apex")
```
)md";

class ImportProbeInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM501"; }
  std::string_view name() const override { return "import-probe-in-region"; }
  std::string_view summary() const override {
    return "`importlib.import_module` / `pkgutil` probe inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      auto q = callee_name(m, n);
      if (!q) return;
      std::string why;
      if (*q == "importlib.import_module") {
        why = "Dynamo: Attempted to call function marked as skipped (importlib.import_module)";
      } else if (q->rfind("pkgutil.", 0) == 0 && q->size() > 8) {
        why = "Dynamo cannot trace `" + *q +
              "` (Unexpected type in sourceless builder / generator: frame skipped)";
      } else {
        return;
      }
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`" + *q + "` probes the import system inside a compiled region");
      d.why = why;
      d.declined_reason = declined(
          "hoisting the probe to module level needs its result to be constant across calls");
    });
  }
};

}  // namespace

const lint::Rule& gm501_import_probe_in_region() {
  static const ImportProbeInRegion rule;
  return rule;
}

}  // namespace gm::rules

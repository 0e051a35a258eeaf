// GM503: `try: import ... except ImportError:` inside a region.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM503 try-import-in-region

## What it detects
Inside a compiled region, a `try` statement whose body
imports a module (`import m` / `from m import x`, not inside a nested
function) and that catches the failure: a bare `except:`, or `except`
naming `ImportError`, `ModuleNotFoundError`, `Exception` or `BaseException`
(alone or in a tuple). The diagnostic covers the whole `try` statement.

## Why only this form
`try`/`except` as such is traced by Dynamo on torch
2.13: a `try` whose body raises `ValueError`, `KeyError`, `AttributeError`
(or a Python exception from `int("a")`) and is caught in the same function
compiles to one graph with no break (checked with a counting backend). What
does break is a *failing import* inside the region: "Import failure"
(GB0069), after which Dynamo skips the frame (zero graphs). An optional
dependency probed with `try: import ... except ImportError:` is exactly an
import that is expected to fail on some machines.

## What to do instead
Probe at module level once
(`try: import apex; HAS_APEX = True except ImportError: HAS_APEX = False`) and
branch on the constant inside the region.

## When it declines
Always: report-only, no automatic fix is offered.
Hoisting the `try` changes when the import runs
(module import time instead of first call), and the body may do more than
import. Report only.

## Example

```python
def forward(self, x):
    try:                                  # GM503
        from apex.normalization import FusedLayerNorm
    except ImportError:
        FusedLayerNorm = None
```
)md";

bool imports(const ast::Tree& tree, std::span<const NodeId> stmts) {
  bool found = false;
  for (NodeId s : stmts) {
    walk(tree, s, [&](NodeId n) {
      const NodeKind k = tree.kind(n);
      if (k == NodeKind::Import || k == NodeKind::ImportFrom) found = true;
    });
  }
  return found;
}

bool catches_import_error(const sema::Model& m, NodeId type) {
  const ast::Tree& tree = m.tree();
  if (!type) return true;  // bare except
  if (tree.kind(type) == NodeKind::Tuple) {
    for (NodeId e : tree.children(type, GM_F(Tuple, elts)))
      if (catches_import_error(m, e)) return true;
    return false;
  }
  auto q = m.qualified_name(type);
  return q && (*q == "builtins.ImportError" || *q == "builtins.ModuleNotFoundError" ||
               *q == "builtins.Exception" || *q == "builtins.BaseException");
}

class TryImportInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM503"; }
  std::string_view name() const override { return "try-import-in-region"; }
  std::string_view summary() const override {
    return "`try: import ... except ImportError` inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      const NodeKind k = tree.kind(n);
      if (k != NodeKind::Try && k != NodeKind::TryStar) return;
      const auto body = k == NodeKind::Try ? tree.children(n, GM_F(Try, body))
                                           : tree.children(n, GM_F(TryStar, body));
      const auto handlers = k == NodeKind::Try ? tree.children(n, GM_F(Try, handlers))
                                               : tree.children(n, GM_F(TryStar, handlers));
      bool catches = false;
      for (NodeId h : handlers)
        if (catches_import_error(m, tree.child(h, GM_F(ExceptHandler, type)))) catches = true;
      if (!catches || !imports(tree, body)) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "`try`/`except` around an import inside a compiled region");
      d.why =
          "Dynamo: Import failure when the import fails; the frame is then skipped (runs "
          "eagerly)";
      d.declined_reason =
          declined("hoisting the probe to module level changes when the import runs");
    });
  }
};

}  // namespace

const lint::Rule& gm503_try_import_in_region() {
  static const TryImportInRegion rule;
  return rule;
}

}  // namespace gm::rules

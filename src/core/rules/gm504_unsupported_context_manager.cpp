// GM504: context managers Dynamo cannot enter.
#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM504 unsupported-context-manager

## What it detects
Inside a compiled region, a `with` item whose context
expression resolves (through the file's imports) to a context manager that
Dynamo cannot enter on torch 2.13:

| context expression | Dynamo 2.13 |
|---|---|
| `open(...)`, `io.open(...)` | Unsupported context manager / Failed to trace builtin operator |
| `torch.device(...)` | Unsupported context manager (frame skipped) |
| `threading.Lock()`, `threading.RLock()` | Unsupported context manager (frame skipped) |

## The principle
Report only context managers *known* to fail. Dynamo
2.13 supports (checked with a counting backend, no break): `torch.no_grad`,
`torch.enable_grad`, `torch.set_grad_enabled`, `torch.inference_mode`,
`torch.autocast`, `torch.amp.autocast`, `torch.cuda.amp.autocast`,
`contextlib.nullcontext`, `contextlib.suppress`, `warnings.catch_warnings`,
`torch.profiler.record_function` (ignored), `torch.nn.attention.sdpa_kernel`,
and it *inlines* user-defined context managers (classes with
`__enter__`/`__exit__`, `@contextlib.contextmanager` generators). What it cannot
enter are objects implemented in C whose `__enter__` it does not model
(`torch.device`, locks, file objects). So an unknown context manager is not
reported: it is most likely Python that Dynamo inlines, and a report would
be a guess.

## What to do instead
Do file I/O and locking outside the region; pass
`device=` to factory functions instead of `with torch.device(...)`.

## When it declines
Always: report-only, no automatic fix is offered.
Removing a context manager changes behaviour. Report
only.

## Example

```python
with torch.device("cuda"):           # GM504
    buf = torch.zeros(n)
buf = torch.zeros(n, device="cuda")
```
)md";

// Qualified names of context managers Dynamo 2.13 cannot enter (verified).
constexpr std::string_view kUnsupported[] = {
    "builtins.open", "io.open", "torch.device", "threading.Lock", "threading.RLock",
};

class UnsupportedContextManager final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM504"; }
  std::string_view name() const override { return "unsupported-context-manager"; }
  std::string_view summary() const override {
    return "a context manager Dynamo cannot enter inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::withitem) return;
      const NodeId e = tree.child(n, GM_F(withitem, context_expr));
      if (tree.kind(e) != NodeKind::Call) return;
      auto q = callee_name(m, e);
      if (!q) return;
      bool known = false;
      for (std::string_view u : kUnsupported) known = known || *q == u;
      if (!known) return;
      auto& d = sink.report(begin_of(tree, e), end_of(tree, e),
                            "Dynamo cannot enter the context manager `" + *q + "`");
      d.why = "Dynamo: Unsupported context manager (it does not know how to enter `" + *q +
              "`); the frame is skipped or the graph breaks";
      d.declined_reason = declined("removing or moving a context manager changes behaviour");
    });
  }
};

}  // namespace

const lint::Rule& gm504_unsupported_context_manager() {
  static const UnsupportedContextManager rule;
  return rule;
}

}  // namespace gm::rules

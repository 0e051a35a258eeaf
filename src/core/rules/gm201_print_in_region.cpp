// GM201: `print(...)` inside a compiled region -> `_graphmend_rt.print(...)`.
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM201 print-in-compiled-region

## What it detects
A call of the builtin `print` (not a local or imported function named
`print`) evaluated inside a compiled region: the `forward` of an
`nn.Module` subclass, a `torch.compile`d function, or a function they call.

## Why Dynamo breaks there
`print` is a Python side effect Dynamo cannot put in a graph: it breaks the
graph at the call, runs the `print` eagerly, and resumes tracing in a new
graph after it.

## The rewrite
Only the callee changes, and the runtime import is added once:

    print(a, b, sep=s)   ->   _graphmend_rt.print(a, b, sep=s)
    import graphmend.runtime as _graphmend_rt

`_graphmend_rt.print` prints immediately when run eagerly; while Dynamo
traces it records the call (tensor arguments snapshotted at the call) and
prints after the graph, in call order, the same text (a tensor's repr keeps
its `grad_fn=<...>`, `requires_grad=True`, `Parameter containing:`;
docs/runtime.md). Starred arguments are kept.

Arguments that read tensor data are deferred too, each expression still
evaluated once, at the call, in the same order:

    print("loss", loss.item())     ->   _graphmend_rt.print("loss", _graphmend_rt.item(loss))
    print(f"n={int(n)} h={h!r}")   ->   _graphmend_rt.print(_graphmend_rt.fmt("n={} h={!r}", _graphmend_rt.item(n, int), h))
    print("{:.3f}".format(v))      ->   _graphmend_rt.print(_graphmend_rt.fmt("{:.3f}", v))
    print("%.3f" % t.item())       ->   _graphmend_rt.print(_graphmend_rt.fmt_percent("%.3f", _graphmend_rt.item(t)))

(`int`, `float`, `bool`, `complex` of a tensor, `.item()`, f-strings with
conversions, format specs and `=`, `str.format` with positional
arguments, `%` with one value or a tuple). The runtime converts and formats the snapshots after the graph:
the same Python numbers, the same text. A value it cannot snapshot exactly
(an object whose `__str__`/`__format__` may read state that changes later)
is formatted at the call, as before, and that call keeps its break.

## When it declines
Arguments are left as they are (the call is still deferred) when an
f-string has a field in its format spec (`{x:{w}}`), `str.format` takes
keywords or `*args`, `%` takes a mapping, or the read is inside an
expression (`{loss.item() * 100:.1f}`, a nested f-string): Python needs the
number at the call, so that call still breaks.

The fix is declined when:
- `file=` is neither `sys.stdout` nor `sys.stderr`: under compilation the
  stream must be an object Dynamo can reconstruct from a source; an arbitrary
  stream (a local `io.StringIO`, an open file) is not proven to be one.
- `**kwargs` in the call: it may carry such a `file=`.
- `_graphmend_rt` is already bound to something else in the file.

## Example
Before:

    class M(nn.Module):
        def forward(self, x):
            print("x", x.shape)
            return x + 1

After:

    import graphmend.runtime as _graphmend_rt

    class M(nn.Module):
        def forward(self, x):
            _graphmend_rt.print("x", x.shape)
            return x + 1
)md";

class PrintInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM201"; }
  std::string_view name() const override { return "print-in-compiled-region"; }
  std::string_view summary() const override { return "`print` inside a compiled region"; }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    const sema::Model* model = ctx.model();
    runtime_rewrite::for_each_region_call(ctx, [&](NodeId call) {
      const NodeId func = tree.child(call, GM_F(Call, func));
      if (tree.kind(func) != NodeKind::Name) return;
      const auto q = model->qualified_name(func);
      if (!q || *q != "builtins.print") return;
      auto& d = sink.report(tree.at(call).begin, tree.at(call).end,
                            "`print` in a compiled region breaks the graph");
      d.why =
          "print is a Python side effect Dynamo cannot put in a graph: it breaks the graph "
          "and runs the call eagerly";
      if (runtime_rewrite::has_double_star(tree, call)) {
        d.declined_reason = "`**kwargs` may pass a `file=` Dynamo cannot reconstruct";
        return;
      }
      if (NodeId kw = runtime_rewrite::keyword(tree, call, "file")) {
        const NodeId v = tree.child(kw, GM_F(keyword, value));
        const auto fq = model->qualified_name(v);
        const bool none = tree.kind(v) == NodeKind::Constant && ctx.text_of(v) == "None";
        if (!none && !(fq && (*fq == "sys.stdout" || *fq == "sys.stderr"))) {
          d.declined_reason = "`file=` is not sys.stdout or sys.stderr";
          return;
        }
      }
      const std::string callee = std::string(runtime_rewrite::kRuntimeAlias) + ".print";
      std::vector<edits::Edit> edits{
          edits::Edit::replace(tree.at(func).begin, tree.at(func).end, callee)};
      std::vector<std::pair<NodeId, predication::Doc>> rewritten;
      for (NodeId a : tree.children(call, GM_F(Call, args)))
        if (auto e = runtime_rewrite::defer_reads(ctx, a)) {
          edits.push_back(std::move(*e));
          rewritten.emplace_back(a, *runtime_rewrite::deferred_doc(ctx, a));
        }
      runtime_rewrite::attach_fix(
          ctx, d, "Defer `print` with `_graphmend_rt.print`",
          runtime_rewrite::fit_call(ctx, call, callee, {}, rewritten, std::move(edits)));
    });
  }
};

}  // namespace

const lint::Rule& gm201_print_in_region() {
  static const PrintInRegion rule;
  return rule;
}

}  // namespace gm::rules

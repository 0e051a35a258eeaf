// GM203: `warnings.warn(...)` inside a compiled region -> `_graphmend_rt.warn(...)`.
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM203 warnings-warn-in-compiled-region

## What it detects
A call of `warnings.warn` (however it is imported: `warnings.warn`,
`import warnings as w; w.warn`, `from warnings import warn`) evaluated
inside a compiled region (the `forward` of an `nn.Module` subclass, a
`torch.compile`d function, or a function they call).

## Why Dynamo breaks there
`warnings.warn` is a Python side effect (filters, the module registry,
`showwarning`) Dynamo cannot put in a graph: it breaks the graph at the call
and runs it eagerly.

## The rewrite
Only the callee changes, and the runtime import is added once:

    warnings.warn(msg, UserWarning, stacklevel=2)
      ->   _graphmend_rt.warn(msg, UserWarning, stacklevel=2)

Eagerly the runtime warns at once with the same filename, line, registry and
filter decision; under compilation it records the warning and issues it
after the graph, in order, with `warnings.warn_explicit` and the filename,
line, module and registry of the frame `stacklevel` names (recorded at trace
time), so filters and "once per location" act as before (docs/runtime.md).

A message that reads tensor data is deferred as in GM201:
`warnings.warn(f"loss is {loss.item():.3f}")` ->
`_graphmend_rt.warn(_graphmend_rt.fmt("loss is {:.3f}", _graphmend_rt.item(loss)))`.

## When it declines
- A keyword other than `message`, `category`, `stacklevel`, `source`
  (e.g. Python 3.12's `skip_file_prefixes`): `_graphmend_rt.warn` does not
  take it.
- `**kwargs` in the call (same reason).
- `_graphmend_rt` is already bound to something else in the file.

## Example
Before:

    class M(nn.Module):
        def forward(self, x):
            warnings.warn("slow path")
            return x + 1

After:

    import graphmend.runtime as _graphmend_rt

    class M(nn.Module):
        def forward(self, x):
            _graphmend_rt.warn("slow path")
            return x + 1
)md";

class WarnInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM203"; }
  std::string_view name() const override { return "warnings-warn-in-compiled-region"; }
  std::string_view summary() const override { return "`warnings.warn` inside a compiled region"; }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    const sema::Model* model = ctx.model();
    runtime_rewrite::for_each_region_call(ctx, [&](NodeId call) {
      const NodeId func = tree.child(call, GM_F(Call, func));
      const auto kind = tree.kind(func);
      if (kind != NodeKind::Name && kind != NodeKind::Attribute) return;
      const auto q = model->qualified_name(func);
      if (!q || *q != "warnings.warn") return;
      auto& d = sink.report(tree.at(call).begin, tree.at(call).end,
                            "`warnings.warn` in a compiled region breaks the graph");
      d.why =
          "warnings.warn is a Python side effect Dynamo cannot put in a graph: it breaks the "
          "graph and runs the call eagerly";
      if (runtime_rewrite::has_double_star(tree, call)) {
        d.declined_reason = "`**kwargs` may pass a keyword `_graphmend_rt.warn` does not take";
        return;
      }
      for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
        const auto name = tree.text(tree.field(k, GM_F(keyword, arg)));
        if (name != "message" && name != "category" && name != "stacklevel" && name != "source") {
          d.declined_reason = "`_graphmend_rt.warn` does not take `" + std::string(name) + "=`";
          return;
        }
      }
      const std::string callee = std::string(runtime_rewrite::kRuntimeAlias) + ".warn";
      std::vector<edits::Edit> edits{
          edits::Edit::replace(tree.at(func).begin, tree.at(func).end, callee)};
      std::vector<std::pair<NodeId, predication::Doc>> rewritten;
      NodeId message;
      if (const auto args = tree.children(call, GM_F(Call, args)); !args.empty())
        message = args[0];
      else if (NodeId k = runtime_rewrite::keyword(tree, call, "message"))
        message = tree.child(k, GM_F(keyword, value));
      if (message)
        if (auto e = runtime_rewrite::defer_reads(ctx, message)) {
          edits.push_back(std::move(*e));
          rewritten.emplace_back(message, *runtime_rewrite::deferred_doc(ctx, message));
        }
      runtime_rewrite::attach_fix(
          ctx, d, "Defer the warning with `_graphmend_rt.warn`",
          runtime_rewrite::fit_call(ctx, call, callee, {}, rewritten, std::move(edits)));
    });
  }
};

}  // namespace

const lint::Rule& gm203_warn_in_region() {
  static const WarnInRegion rule;
  return rule;
}

}  // namespace gm::rules

// GM303: `torch._check_tensor_all(cond[, message])` and
// `torch._check_tensor_all_with(error_type, cond[, message])` inside a compiled
// region -> the same call of `_graphmend_rt.check_tensor_all[_with]`, which
// checks after the graph.
#include "rules/matching.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "rules/traps.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM303 tensor-check-call

## What it detects
Inside a compiled region, a call of `torch._check_tensor_all(cond[, message])`
or `torch._check_tensor_all_with(error_type, cond[, message])`, resolved
through the file's imports (`from torch import _check_tensor_all` too; a
local name that shadows them is not reported). These are the checks libraries
use to validate tensor data ("every row is a valid index", "the sizes add up
to the sequence length"); transformers' `torch_check` helper calls
`torch._check_tensor_all` whenever it runs under `torch.compile`.

## Why Dynamo breaks there
torch implements the check in Python as `cond._is_all_true().item()`: on
torch 2.13 Dynamo breaks the graph at that `.item()` (*Unsupported
Tensor.item() call with capture_scalar_outputs=False*, GB0124), inside a loop
the whole frame is skipped. With `capture_scalar_outputs=True` it is traced
as an unbacked boolean with a runtime assert instead.

## The rewrite
Only the callee changes; the arguments stay as written:

    torch._check_tensor_all(COND, MSG)   ->   _graphmend_rt.check_tensor_all(COND, MSG)

Eagerly the runtime calls torch's own function, so nothing changes. While
Dynamo traces, the static part of torch's check runs at once (`cond` is a
tensor of dtype `torch.bool`, else torch's own `TypeError` at the call) and
`cond.all()` stays in the graph as a 0-d output; right after the graph the
runtime raises exactly what torch raises (the type given, `RuntimeError` by
default, with torch's default text or `message()`, called only on failure as
torch calls it). One graph, for any backend, no config switch needed.

## When it declines
- the call's result is used (it is not a statement of its own): torch
  returns `None`, but the rewrite is kept to the statement form;
- the call has `*args` or `**kwargs`;
- the call is inside a `try` with `except` handlers, or the code after it
  changes state visible on the error path: exactly as in GM301 (stores to
  attributes or items of non-locals, in-place methods, mutating container
  methods, `setattr`, `out=`, `global`/`nonlocal`); the reason names the
  line;
- `_graphmend_rt` is already bound to something else in the file.

## What is not checked (the error path)
As in GM301: the code after the check (and in the callers, to the end of the
graph) runs before a failing check raises; if it raises itself on failing
inputs, its error surfaces instead, and effects inside calls are not
inspected. `message` is called after the graph, so it sees the values its
closure refers to at that point.

## Example
Before:

    def forward(self, spatial_shapes, sequence_length):
        torch._check_tensor_all((spatial_shapes.prod(1).sum() == sequence_length).reshape(()))
        return spatial_shapes

After:

    def forward(self, spatial_shapes, sequence_length):
        _graphmend_rt.check_tensor_all((spatial_shapes.prod(1).sum() == sequence_length).reshape(()))
        return spatial_shapes
)md";

class TensorCheckCall final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM303"; }
  std::string_view name() const override { return "tensor-check-call"; }
  std::string_view summary() const override {
    return "`torch._check_tensor_all` inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const sema::Model* model = ctx.model();
    if (model == nullptr) return;
    runtime_rewrite::for_each_region_call(ctx, [&](NodeId call) {
      const auto q = matching::callee_name(*model, call);
      if (!q) return;
      std::string_view helper;
      if (*q == "torch._check_tensor_all")
        helper = "check_tensor_all";
      else if (*q == "torch._check_tensor_all_with")
        helper = "check_tensor_all_with";
      else
        return;
      // The fix takes the statement form: an expression statement of the call.
      const NodeId parent = model->parent(call);
      const bool own = parent && ctx.tree().kind(parent) == NodeKind::Expr;
      report(ctx, sink, call, own ? parent : NodeId{}, helper);
    });
  }

 private:
  static void report(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId call,
                     NodeId stmt, std::string_view helper) {
    const auto& tree = ctx.tree();
    auto& d = sink.report(
        tree.at(call).begin, tree.at(call).end,
        "`torch._" + std::string(helper) + "` reads tensor data inside a compiled region");
    d.why =
        "torch checks the condition with `.item()` in Python: Dynamo breaks the graph there "
        "(Unsupported Tensor.item() call with capture_scalar_outputs=False, GB0124); inside a "
        "loop it skips the whole frame";
    if (!stmt) {
      d.declined_reason = "the call is not a statement of its own (its result is used)";
      return;
    }
    if (traps::has_starred(tree, tree.children(call, GM_F(Call, args)))) {
      d.declined_reason = "the call has `*args`";
      return;
    }
    if (matching::has_double_star(tree, call)) {
      d.declined_reason = "the call has `**kwargs`";
      return;
    }
    if (auto why = traps::scan_after(ctx, stmt, "check"); !why.empty()) {
      d.declined_reason = std::move(why);
      return;
    }
    const NodeId func = tree.child(call, GM_F(Call, func));
    runtime_rewrite::attach_fix(ctx, d,
                                "Check after the graph with `_graphmend_rt." + std::string(helper) +
                                    "`, raising what torch raises",
                                {edits::Edit::replace(tree.at(func).begin, tree.at(func).end,
                                                      std::string(runtime_rewrite::kRuntimeAlias) +
                                                          "." + std::string(helper))});
  }
};

}  // namespace

const lint::Rule& gm303_tensor_check_call() {
  static const TensorCheckCall rule;
  return rule;
}

}  // namespace gm::rules

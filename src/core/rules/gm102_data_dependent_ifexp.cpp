// GM102: a conditional expression on tensor data -> `_graphmend_rt.where`.
#include <algorithm>

#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM102 data-dependent-conditional-expression

## What it detects
Inside a compiled region, `a if cond else b` where `cond` is tensor data
(`.any()`, `.all()`, a compared reduction, a proven bool tensor, and
`and`/`or`/`not` over those; the same tests as GM101).

## Why Dynamo breaks there
Choosing the arm needs the tensor's value in Python: "Data-dependent
branching" (GB0170). The graph ends at the expression.

## The rewrite

    y = x.clamp(min=0) if (x < 0).any() else x
->
    y = _graphmend_rt.where((x < 0).any(), x.clamp(min=0), x)

Both arms are now evaluated. `_graphmend_rt.where` is exactly the
conditional expression when run eagerly; while tracing it is `torch.where`
when the condition is 0-d and both arms are tensors of one dtype, shape and
device (and autograd is safe, see GM101), else the original expression
(graph break included). `not c` swaps the arms.

## When it declines
- an arm is not proven pure and total (the GM101 allow-list: no calls with
  effects, no submodule calls, no indexing that may raise, no Python
  division; the arm not taken now runs too);
- an arm is a bare name updated in place later in the function (`where`
  returns a new tensor: aliasing would change);
- `and`/`or`/`not` over operands not proven bool-valued.

## Example
Before:

    scale = self.big if (x.abs() > 1).any() else self.small

After (when `self.big` and `self.small` are assigned in the file):

    scale = _graphmend_rt.where((x.abs() > 1).any(), self.big, self.small)
)md";

class DataDependentIfExp final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM102"; }
  std::string_view name() const override { return "data-dependent-conditional-expression"; }
  std::string_view summary() const override {
    return "`a if cond else b` on tensor data (predicated with `torch.where`)";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    if (!ctx.model()) return;
    const ast::Tree& tree = ctx.tree();
    matching::for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::IfExp) return;
      NodeId test = tree.child(n, GM_F(IfExp, test));
      if (!predication::tensor_evidence(ctx, test) || predication::static_value(ctx, test)) return;
      auto& d = sink.report(tree.at(n).begin, tree.at(n).end,
                            "conditional expression on tensor data breaks the graph");
      d.why =
          "choosing the arm needs the tensor's value in Python: Data-dependent branching "
          "(GB0170); Dynamo ends the graph there";
      std::string why;
      if (!fix(ctx, n, d, why)) d.declined_reason = why;
    });
  }

 private:
  bool fix(const lint::RuleContext& ctx, NodeId e, lint::Diagnostic& d, std::string& why) const {
    const ast::Tree& tree = ctx.tree();
    auto sel = predication::select_arms(
        ctx, tree.child(e, GM_F(IfExp, test)), tree.child(e, GM_F(IfExp, body)),
        tree.child(e, GM_F(IfExp, orelse)), "both arms would now always run: ", &why);
    if (!sel) return false;
    const NodeId a = sel->if_true, b = sel->if_false;
    const NodeId func = predication::enclosing_function(*ctx.model(), e);
    if (func)
      for (NodeId arm : {a, b})
        if (tree.kind(arm) == NodeKind::Name) {
          const std::string name(tree.text(tree.field(arm, GM_F(Name, id))));
          const std::string use = predication::in_place_use(ctx, func, name);
          if (!use.empty())
            return why = "`" + name + "` is updated in place (" + use +
                         "); `where` would return a new tensor and change aliasing",
                   false;
        }
    std::string call =
        predication::where_call(sel->cond, ctx.text_of(a), ctx.text_of(b), sel->grad_safe);
    // Keep the line count (line numbers after the expression must not move):
    // pad inside the call's parentheses.
    const std::string_view old_text = ctx.text_of(e);
    const auto old_lines = std::count(old_text.begin(), old_text.end(), '\n');
    const auto new_lines = std::count(call.begin(), call.end(), '\n');
    if (new_lines > old_lines) return why = "the predicated form does not fit the lines", false;
    if (new_lines < old_lines) {
      call.pop_back();
      call.append(static_cast<std::size_t>(old_lines - new_lines), '\n');
      call += ')';
    }
    runtime_rewrite::attach_fix(ctx, d, "Predicate the expression with `_graphmend_rt.where`",
                                {edits::Edit::replace(tree.at(e).begin, tree.at(e).end, call)});
    return true;
  }
};

}  // namespace

const lint::Rule& gm102_data_dependent_ifexp() {
  static const DataDependentIfExp rule;
  return rule;
}

}  // namespace gm::rules

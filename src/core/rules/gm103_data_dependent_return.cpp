// GM103: an early `return` under a test on tensor data, followed by another
// `return` -> one `return _graphmend_rt.where(...)`.
#include "edits/text.h"
#include "edits/tree_query.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM103 data-dependent-return

## What it detects
Inside a compiled region, a choice between two returned values on tensor
data:

    if cond:                 if cond:
        return a                 return a
    return b                 else:
                                 return b

where `cond` is tensor data (the same tests as GM101).

## Why Dynamo breaks there
Which `return` runs depends on the tensor's value: "Data-dependent
branching" (GB0170). Dynamo ends the graph at the `if`.

## The rewrite

    return _graphmend_rt.where(cond, a, b)

in place of the `if` and the last `return` (their comments go above it; a
call that does not fit the file's longest line is split as black splits
calls). `_graphmend_rt.where`
is the conditional expression when run eagerly, and `torch.where` while
tracing when both values are tensors of one dtype, shape and device (see
GM101 and docs/runtime.md); otherwise the original branch, graph break
included. `not cond` swaps the values.

## When it declines
- a returned value is missing, `None`, a constant or a proven Python value;
- a returned value is not proven pure and total (the GM101 allow-list): `b`
  now also runs when `cond` holds, `a` when it does not;
- `and`/`or`/`not` over operands not proven bool-valued;
- the `if` has more than one statement in a branch, or the `return b` does
  not follow it directly.

## Example
Before:

    def forward(self, x):
        y = x * 2
        if (y > 0).all():
            return y
        return -y

After:

    def forward(self, x):
        y = x * 2
        return _graphmend_rt.where((y > 0).all(), y, -y)
)md";

class DataDependentReturn final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM103"; }
  std::string_view name() const override { return "data-dependent-return"; }
  std::string_view summary() const override {
    return "early `return` on tensor data (predicated with `torch.where`)";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    predication::for_each_region_if(ctx, [&](NodeId, NodeId stmt) { check_if(ctx, sink, stmt); });
  }

 private:
  void check_if(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId stmt) const {
    const ast::Tree& tree = ctx.tree();
    const auto pair = predication::return_pair(ctx, stmt);
    if (!pair) return;  // GM101 reports other shapes of `if`
    NodeId test = tree.child(stmt, GM_F(If, test));
    if (!predication::tensor_evidence(ctx, test) || predication::static_value(ctx, test)) return;
    auto& d = sink.report(tree.at(test).begin, tree.at(test).end,
                          "`return` chosen by tensor data breaks the graph");
    d.why =
        "which `return` runs depends on the tensor's value: Data-dependent branching (GB0170); "
        "Dynamo ends the graph at the `if`";
    std::string why;
    if (!fix(ctx, stmt, test, *pair, d, why)) d.declined_reason = why;
  }

  bool fix(const lint::RuleContext& ctx, NodeId stmt, NodeId test,
           const predication::ReturnPair& pair, lint::Diagnostic& d, std::string& why) const {
    const ast::Tree& tree = ctx.tree();
    const NodeId a = tree.child(pair.if_return, GM_F(Return, value));
    const NodeId b = tree.child(pair.else_return, GM_F(Return, value));
    for (NodeId v : {a, b}) {
      if (!v) return why = "a bare `return` (None) is not a tensor", false;
      if (tree.kind(v) == NodeKind::Constant ||
          ctx.model()->fact(v).kind == sema::TensorKind::NotTensor)
        return why = "`return " + std::string(ctx.text_of(v)) + "` returns a Python value", false;
    }
    auto sel = predication::select_arms(ctx, test, a, b,
                                        "both values would now always be computed: ", &why);
    if (!sel) return false;

    // The rewrite replaces the `if` through the last `return`.
    const std::uint32_t begin = tree.at(stmt).begin, end = tree.at(pair.else_return).end;
    const auto indent = edits::statement_indentation(ctx.text(), begin);
    if (!indent) return why = "the `if` does not start its line", false;
    std::vector<std::string> lines;
    for (std::string_view c : edits::comments_in(ctx.file(), begin, end)) lines.emplace_back(c);
    auto ret = predication::layout(
        predication::wrap_of(ctx, stmt), "", "return ",
        predication::where_doc(predication::Doc::atom(sel->cond),
                               predication::source_doc(ctx, sel->if_true),
                               predication::source_doc(ctx, sel->if_false), sel->grad_safe));
    lines.insert(lines.end(), ret.begin(), ret.end());
    runtime_rewrite::attach_fix(
        ctx, d, "Return `_graphmend_rt.where(...)`",
        {edits::Edit::replace(begin, end, edits::render_lines(lines, *indent, ctx.style()))});
    return true;
  }
};

}  // namespace

const lint::Rule& gm103_data_dependent_return() {
  static const DataDependentReturn rule;
  return rule;
}

}  // namespace gm::rules

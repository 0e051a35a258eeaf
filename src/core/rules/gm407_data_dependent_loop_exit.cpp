// GM407: a loop whose exit depends on tensor data.
#include <vector>

#include "rules/matching.h"
#include "rules/rules.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM407 data-dependent-loop-exit

## What it detects
Inside a compiled region: `while cond:` where `cond` is
proven to be a tensor (e.g. `while (x > eps).any():`), and `if cond: ...
break` inside a loop where `cond` is proven to be a tensor. Conditions whose
kind is unknown or that are Python values are not reported.

## Why Dynamo breaks there
Dynamo cannot trace a jump on tensor data
("Data-dependent branching", GB0170). In a loop this is worse than in
straight-line code: for `while` the graph splits on every evaluation of the
condition; for a `break` under a tensor `if` in a `for` loop Dynamo reports
"graph break in loop" and skips the whole frame (zero graphs, the function
runs eagerly) on torch 2.13.

## What to do instead
Iterate a fixed number of times and freeze the
finished elements with `torch.where`; use `torch._higher_order_ops.while_loop`
where available; or move the loop out of the compiled region.

## When it declines
Always: report-only, no automatic fix is offered.
A fixed trip count changes the amount of work and, in
general, the result. Report only.

## Example

```python
while (delta > tol).any():      # GM407
    x, delta = step(x)
for _ in range(n):
    x = step(x)
    if x.norm() < tol:          # GM407
        break
```
)md";

// A `break` that exits the innermost loop around `stmts` (nested loops,
// functions and classes excluded).
// An explicit work list, not recursion: an `elif` chain nests as deep as it
// is long.
bool has_break(const ast::Tree& tree, std::span<const NodeId> stmts) {
  std::vector<std::span<const NodeId>> todo{stmts};
  while (!todo.empty()) {
    const auto cur = todo.back();
    todo.pop_back();
    for (NodeId s : cur) {
      switch (tree.kind(s)) {
        case NodeKind::Break: return true;
        case NodeKind::If:
          todo.push_back(tree.children(s, GM_F(If, body)));
          todo.push_back(tree.children(s, GM_F(If, orelse)));
          break;
        case NodeKind::With: todo.push_back(tree.children(s, GM_F(With, body))); break;
        case NodeKind::Try:
          todo.push_back(tree.children(s, GM_F(Try, body)));
          todo.push_back(tree.children(s, GM_F(Try, orelse)));
          todo.push_back(tree.children(s, GM_F(Try, finalbody)));
          for (NodeId h : tree.children(s, GM_F(Try, handlers)))
            todo.push_back(tree.children(h, GM_F(ExceptHandler, body)));
          break;
        default: break;
      }
    }
  }
  return false;
}

class DataDependentLoopExit final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM407"; }
  std::string_view name() const override { return "data-dependent-loop-exit"; }
  std::string_view summary() const override {
    return "a loop exit (`while` / `break`) that depends on tensor data";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      NodeId test;
      std::string message;
      if (tree.kind(n) == NodeKind::While) {
        test = tree.child(n, GM_F(While, test));
        message = "`while` condition depends on tensor data";
      } else if (tree.kind(n) == NodeKind::If &&
                 has_break(tree, tree.children(n, GM_F(If, body)))) {
        test = tree.child(n, GM_F(If, test));
        message = "loop `break` under a condition on tensor data";
      } else {
        return;
      }
      if (!is_tensor(m, test)) return;
      auto& d = sink.report(begin_of(tree, test), end_of(tree, test), message);
      d.why =
          "Dynamo: Data-dependent branching (attempted to jump with TensorVariable); "
          "inside a for loop the frame is skipped (graph break in loop)";
      d.declined_reason =
          declined("a fixed trip count changes the work done and, in general, the result");
    });
  }
};

}  // namespace

const lint::Rule& gm407_data_dependent_loop_exit() {
  static const DataDependentLoopExit rule;
  return rule;
}

}  // namespace gm::rules

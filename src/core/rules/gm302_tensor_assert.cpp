// GM302: `assert <tensor condition>[, "msg"]` inside a compiled region ->
// `if __debug__: _graphmend_rt.trap_unless(COND, AssertionError[, "msg"])`.
#include "edits/text.h"
#include "edits/tree_query.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "rules/traps.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM302 tensor-assert

## What it detects
Inside a compiled region, `assert COND` or `assert COND, msg` where `COND` is
tensor data, recognised as in GM301: a proven tensor, a comparison with a
reduction (`x.sum() == n`, `x.abs().max() < tol`), `.any()` / `.all()`,
`torch.equal`, and these under `not` / `and` / `or`, and one comparison
with `t.item()` on either side (`assert lengths.max().item() <= slen`).
Asserts on shapes, lengths, types and `None` are Python-level and not
reported.

## Why it matters under torch.compile
What happens depends on the form (measured on torch 2.13, CPU):

- `assert COND` or `assert COND, "literal"` with `COND` a plain tensor
  expression (`(x >= 0).all()`, `x.sum() < n`): Dynamo does **not** break.
  It rewrites the assert into `torch._assert_async` in the graph
  (`torch._dynamo.config.rewrite_assert_with_torch_assert`). A failing check
  then raises `RuntimeError` (with the message, or "assertion error"), not
  `AssertionError`, under every backend, Inductor included. Code that
  catches `AssertionError`, and tests that expect it, see a different
  exception than in eager mode. For this form the diagnostic is about the
  exception type, not a graph break.
- `assert not COND`: the `not` takes the tensor's truth value, and Dynamo
  breaks the graph (*Data-dependent branching*, GB0170). The same for
  `and`/`or` in the condition.
- `assert torch.equal(a, b)`: `torch.equal` returns a Python bool and Dynamo
  breaks the graph (*Data dependent operator*, GB0033).
- any message that is not a literal (an f-string, even without tensor
  placeholders, or a name bound to a string): Dynamo cannot rewrite the
  assert and breaks the graph (*Data-dependent branching*, GB0170); the fix
  declines (see below).

## The rewrite
For a constant or absent message:

    assert COND, "msg"   ->   if __debug__: _graphmend_rt.trap_unless(COND, AssertionError, "msg")
    assert not COND      ->   if __debug__: _graphmend_rt.trap_if(COND, AssertionError)

`assert [not] torch.equal(a, b)` passes `_graphmend_rt.equal(a, b)`.
An assert whose test starts with Python-level operands splits in two, so
that the tensor test runs exactly when it ran before:

    assert mask is not None and (mask.sum(-1) > 0).all(), "m"
    ->
    assert mask is not None, "m"
    if __debug__:
        _graphmend_rt.trap_unless((mask.sum(-1) > 0).all(), AssertionError, "m")

(one tensor operand after them; several are lowered as a whole, below).
A condition combining tests with `and`/`or`/`not` is passed as one
expression with the same truth value: `a and b` -> `(a) & (b)`, `a or b`
-> `(a) | (b)`, an inner `not a` -> `~(a)` (as GM101 lowers conditions).
Every operand must be bool-valued (a comparison, `.any()`/`.all()`, a
predicate, a proven bool tensor), `~` only applies to an operand proven a
tensor (`~` of a Python bool is an int), and an operand that `and`/`or`
could skip now always runs, so it must be pure and total, its names proven
tensors or used as tensors by an operand before it
(`x.isnan().any() or x.isinf().any()`). Operands spanning lines are
joined onto one line.
`assert t.item() <= n` passes `_graphmend_rt.compare_item(t, "<=", n)`
(`n <= t.item()`: `compare_item(n, "<=", t, item=1)`): while tracing, the
comparison is made on the tensor whenever that gives Python's answer for
every value (float64 for floating tensors against floats, bools and ints of
magnitude at most 2**53; int64 for bool and integer tensors against ints in
int64's range), else the runtime takes the original `.item()`; eagerly it
is exactly the original comparison. The other operand must be a plain
name, constant or attribute: it is now evaluated before the `.item()`.
`if __debug__:` keeps the behaviour under `python -O` (the condition is not
evaluated). When the one-line form does not fit the file's longest line,
the call goes inside the `if __debug__:` block, split as black splits
calls (both forms compile to the same bytecode). Under compilation
the condition stays in the graph as a 0-d bool output and the runtime raises
`AssertionError(msg)` right after the graph, for any backend.

## When it declines
- the message is neither a constant (strings, bytes, numbers, `True`,
  `False`, `None`, f-strings without placeholders) nor a formatted string
  whose values are pure and total where the assert runs: an f-string,
  `.format` or `%` message becomes `_graphmend_rt.message(...)`, formatted
  only when the trap raises (as in GM301);
- the condition combines tests with `and`/`or`/`not` and an operand is not
  proven bool-valued, a `not` is applied to something not proven a tensor,
  or an operand that could be skipped is not proven pure and total (a call
  outside the op table's pure, total ops, a subscript, a name not proven a
  tensor); the reason names it;
- the condition is a chained comparison, nests `torch.equal` in a larger
  expression, or is `allclose` (not yet lowered);
- the `assert` shares its line with other statements (`x = 1; assert c`,
  `if p: assert c`);
- the assert is inside a `try` with `except` handlers, or the code after it
  changes state visible on the error path: exactly as in GM301 (stores to
  attributes or items of non-locals, in-place methods, mutating container
  methods, `setattr`, `out=`, `global`/`nonlocal`); the reason names the
  line;
- `_graphmend_rt` is already bound to something else in the file.

## What is not checked (the error path)
As in GM301: the code after the assert (and in the callers, to the end of
the graph) runs before the check; if it raises on failing inputs, its error
surfaces instead, and effects inside calls are not inspected.

## Example
Before:

    def forward(self, x):
        assert (x >= 0).all(), "inputs must be non-negative"
        return x.sqrt()

After:

    def forward(self, x):
        if __debug__:
            _graphmend_rt.trap_unless(
                (x >= 0).all(), AssertionError, "inputs must be non-negative"
            )
        return x.sqrt()
)md";

class TensorAssert final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM302"; }
  std::string_view name() const override { return "tensor-assert"; }
  std::string_view summary() const override {
    return "`assert` on tensor data inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const sema::Model* model = ctx.model();
    if (model == nullptr) return;
    const auto& tree = ctx.tree();
    std::vector<NodeId> asserts;
    for (NodeId n : model->region_nodes()) {
      if (tree.kind(n) != NodeKind::Assert) continue;
      if (!traps::tensor_evidence(*model, tree.child(n, GM_F(Assert, test)))) continue;
      asserts.push_back(n);
    }
    for (NodeId a : asserts) report(ctx, sink, a);
  }

 private:
  static void report(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId stmt) {
    const auto& tree = ctx.tree();
    const NodeId whole = tree.child(stmt, GM_F(Assert, test));
    const NodeId msg = tree.child(stmt, GM_F(Assert, msg));
    const std::string msg_why = msg ? traps::non_constant_reason(ctx, msg) : std::string();
    // `assert <Python test> and <tensor test>, m` splits into `assert <Python
    // test>, m` and the trap: the tensor test runs exactly when it ran.
    const traps::PythonPrefix prefix = traps::python_prefix(ctx, whole);
    const NodeId test = prefix.data;
    const traps::Condition cond = traps::analyze_condition(ctx, test);
    auto& d = sink.report(tree.at(stmt).begin, tree.at(stmt).end,
                          "`assert` on tensor data in a compiled region");
    const char* kBranch = "Dynamo must take the truth value of tensor data: ";
    if (!msg_why.empty())
      d.why =
          "the message is not a literal constant, so Dynamo cannot rewrite the assert into "
          "torch._assert_async: it breaks the graph (Data-dependent branching, GB0170)";
    else if (!cond.declined.empty())
      d.why = std::string(kBranch) + "it breaks the graph (Data-dependent branching, GB0170)";
    else if (cond.equal == traps::Condition::Equal::Lowered)
      d.why = std::string(kBranch) +
              "`and`/`or`/`not` on a tensor break the graph (Data-dependent branching, GB0170)";
    else if (cond.equal == traps::Condition::Equal::Item)
      d.why = traps::kItemWhy;
    else if (cond.equal != traps::Condition::Equal::None)
      d.why =
          "torch.equal returns a Python bool computed from tensor data: Dynamo breaks the "
          "graph there (Data dependent operator, GB0033)";
    else if (cond.negated)
      d.why = std::string(kBranch) +
              "`not` on a tensor breaks the graph (Data-dependent branching, GB0170)";
    else
      d.why =
          "Dynamo rewrites the assert into torch._assert_async (no graph break): under "
          "torch.compile a failing check raises RuntimeError instead of AssertionError";

    std::optional<traps::Piece> lazy_msg;  // `_graphmend_rt.message(...)`
    if (!msg_why.empty()) {
      std::string lazy_why;
      lazy_msg = traps::lazy_argument(ctx, msg, test, stmt, lazy_why);
      if (!lazy_msg) {
        d.declined_reason = "the message is not a constant (" + msg_why + "): " + lazy_why;
        return;
      }
    }
    if (!cond.declined.empty()) {
      d.declined_reason = cond.declined;
      return;
    }
    const auto& node = tree.at(stmt);
    if (!edits::statement_indentation(ctx.text(), node.begin) ||
        !edits::only_trivia_after(ctx.text(), node.end)) {
      d.declined_reason = "the `assert` shares its line with other statements";
      return;
    }
    if (auto why = traps::scan_after(ctx, stmt, "assert"); !why.empty()) {
      d.declined_reason = std::move(why);
      return;
    }
    std::string before;
    if (!prefix.statics.empty()) {
      before = "assert " + predication::join_and(ctx, prefix.statics);
      if (msg) before += ", " + std::string(ctx.text_of(msg));
      if (before.find('\n') != std::string::npos) {
        d.declined_reason = "the Python test before the tensor test, or the message, spans lines";
        return;
      }
    }
    std::string declined;
    std::vector<traps::Piece> pieces{
        traps::Piece::literal(std::string(before.empty() ? "if __debug__: " : "") +
                              std::string(runtime_rewrite::kRuntimeAlias) +
                              (cond.negated ? ".trap_if(" : ".trap_unless("))};
    for (auto& p : traps::condition_pieces(ctx, cond, declined)) pieces.push_back(std::move(p));
    if (!declined.empty()) {
      d.declined_reason = std::move(declined);
      return;
    }
    pieces.push_back(traps::Piece::separator());
    pieces.push_back(traps::Piece::literal("AssertionError"));
    if (msg) {
      pieces.push_back(traps::Piece::separator());
      pieces.push_back(lazy_msg ? *lazy_msg
                                : traps::Piece::source(tree.at(msg).begin, tree.at(msg).end));
    }
    const auto text = before.empty()
                          ? traps::render(ctx, stmt, pieces, ")")
                          : traps::render(ctx, stmt, pieces, ")", "if __debug__:", before);
    if (!text) {
      d.declined_reason = "cannot lay the trap call out on the assert's lines";
      return;
    }
    runtime_rewrite::attach_fix(ctx, d,
                                std::string("Check after the graph with `_graphmend_rt.") +
                                    (cond.negated ? "trap_if`" : "trap_unless`") +
                                    ", raising AssertionError",
                                {edits::Edit::replace(node.begin, node.end, *text)});
  }
};

}  // namespace

const lint::Rule& gm302_tensor_assert() {
  static const TensorAssert rule;
  return rule;
}

}  // namespace gm::rules

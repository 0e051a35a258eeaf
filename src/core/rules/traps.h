// Traps: validation guards on tensor data (`if c: raise`, `assert c`,
// torch's checks) lowered to graphmend.runtime traps that raise after the
// graph: docs/runtime.md, section [Trap].
//
// The three questions every trap rewrite asks, in this order:
//  1. Is the guard's condition tensor data? (tensor_evidence: a proven
//     Tensor fact, or syntax that only tensors produce: reductions compared
//     with something, `.any()` / `.all()`, `torch.equal`.) Only this decides
//     whether to report: the rewrite itself is exact for any condition type.
//  2. Can the condition be passed as one expression? (analyze_condition: as
//     is; `and`/`or`/`not` lowered to `&`/`|`/`~` where that keeps the truth
//     value (predication::lower_condition); no chained comparison; `torch.equal(a, b)`
//     is rewritten to `_graphmend_rt.equal(a, b)`.)
//  3. Is deferring the failure to the end of the graph invisible? (scan_after:
//     the code after the guard, to the end of its function, stores nothing
//     outside the function's own locals.)
// Then render() writes the trap call, wrapped the way the file wraps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ast/tree.h"
#include "lint/rule.h"
#include "semantic/model.h"

namespace gm::rules::traps {

using ast::NodeId;

// Whether a call's positional arguments include `*args`.
bool has_starred(const ast::Tree& tree, std::span<const NodeId> args);

// Whether the guard condition `test` is tensor data (see 1. above). Looks
// through `not`, `and` and `or`, so that combined conditions are reported
// (and then declined). A comparison with `t.item()` counts (the `.item()`
// reads tensor data) unless `t` is proven not a tensor.
bool tensor_evidence(const sema::Model& m, NodeId test);

// What the trap gets as its condition.
struct Condition {
  NodeId expr;           // COND, after stripping one outermost `not`
  bool negated = false;  // there was an outermost `not`
  // Function / Method: `torch.equal(a, b)` / `a.equal(b)`. Item: a single
  // comparison with `t.item()` on one side (`item_side` 0: left, 1: right),
  // passed as `_graphmend_rt.compare_item(left, "op", right[, item=1])`.
  // Lowered: `and`/`or`/inner `not` written as `&`/`|`/`~` (predication::lower_condition),
  // the text in `lowered`.
  enum class Equal : std::uint8_t { None, Function, Method, Item, Lowered } equal = Equal::None;
  int item_side = 0;
  std::string lowered;
  std::string declined;  // non-empty: why it cannot be passed as is
};
Condition analyze_condition(const lint::RuleContext& ctx, NodeId test);

// `<Python test> and ... and <tensor test>`: the leading Python-level
// operands (predication::static_value, no tensor evidence), kept as a real test
// around the trap so that the tensor test runs exactly when it ran before,
// and the one tensor operand after them. No statics (and `data` the whole
// test) for any other form, or when more than one operand follows them.
struct PythonPrefix {
  std::vector<NodeId> statics;
  NodeId data;
};
PythonPrefix python_prefix(const lint::RuleContext& ctx, NodeId test);

// `t.item()` with no arguments, t not proven a non-tensor: its receiver,
// else None.
NodeId item_receiver(const sema::Model& m, NodeId e);

// `t.item() OP x` / `x OP t.item()`: one rich comparison of a `.item()`
// (receiver not proven a non-tensor) with a plain operand that is not tensor
// data (a name, constant or attribute: evaluating it before the `.item()`
// changes nothing). The side of the `.item()` (0 left, 1 right), else nullopt.
std::optional<int> item_comparison(const sema::Model& m, NodeId e);
// `_graphmend_rt.compare_item(t, "OP", x[, item=1])` for such a comparison:
// eagerly exactly the comparison; while tracing, the comparison made on the
// tensor where that is Python's answer for every value.
std::string compare_item_call(const lint::RuleContext& ctx, NodeId e, int side);

// Why a guard comparing `t.item()` breaks the graph.
inline constexpr std::string_view kItemWhy =
    "`.item()` reads tensor data into a Python scalar: Dynamo breaks the graph there "
    "(Unsupported Tensor.item() call with capture_scalar_outputs=False, GB0124) and the check "
    "runs eagerly";

// A constant argument of an exception or an assert message: str / bytes /
// number / bool / None constants (implicit concatenation included), f-strings
// without placeholders, and `-`/`+` of a number. Empty when constant, else
// the reason.
std::string non_constant_reason(const lint::RuleContext& ctx, NodeId e);

// Checks that the code which runs after the guard statement `guard` (the rest
// of its block and of the enclosing blocks to the end of its function; a
// whole loop body when the guard is in a loop) makes no state change visible
// on the error path, and that no `except` around the guard could catch its
// exception. Empty when fine, else the declined_reason (naming the line;
// `noun` names the statement in it: "guard", "assert").
std::string scan_after(const lint::RuleContext& ctx, NodeId guard, std::string_view noun);

// Statements that render() lays out: literal text, a separator `,` (followed
// by a space when the next piece stays on the same line), or a source range
// copied verbatim and placed on its original line.
struct Piece {
  enum class Kind : std::uint8_t { Literal, Separator, Source, Call } kind = Kind::Literal;
  std::string text;          // Literal; Call: the callee through its `(`
  std::uint32_t begin = 0;   // Source
  std::uint32_t end = 0;
  std::vector<std::string> args;  // Call: a whole argument, split like any call
  static Piece literal(std::string s) { return {Kind::Literal, std::move(s), 0, 0, {}}; }
  static Piece separator() { return {Kind::Separator, {}, 0, 0, {}}; }
  static Piece source(std::uint32_t b, std::uint32_t e) { return {Kind::Source, {}, b, e, {}}; }
  static Piece call(std::string head, std::vector<std::string> args) {
    return {Kind::Call, std::move(head), 0, 0, std::move(args)};
  }
};

// A trap's exception argument or assert message `arg` that is not a
// constant: when it is a formatted string (f-string, `str.format`, `%`), the
// `_graphmend_rt.message(...)` call (a Call piece) that formats it only when the trap
// raises (runtime_rewrite::lazy_message), provided every value it formats is pure and
// total where the trap runs (names `cond` uses as tensors count as tensors;
// an attribute `cond` itself reads counts as present; a local must be bound
// on every path to `stmt`, the guard). Else nullopt, with
// `why` saying what stops it.
std::optional<Piece> lazy_argument(const lint::RuleContext& ctx, NodeId arg, NodeId cond,
                                   NodeId stmt, std::string& why);

// Text replacing statement `stmt` ([begin, end)): the call the pieces make
// (the first a literal through its `(`, top-level separators between its
// arguments, `close` = ")"), on one line when it fits the file's longest
// line, else split as black and ruff split calls (predication::layout); source
// ranges spanning lines keep their inner layout; comments of the statement
// outside the copied ranges go on their own lines above it. nullopt if the
// pieces are not in source order within the statement.
// `block` (e.g. "if mask is not None:"): the call goes on the next line,
// one level deeper, under that head. `before`: a statement line put first
// (`assert x is not None, "m"` when an assert is split).
std::optional<std::string> render(const lint::RuleContext& ctx, NodeId stmt,
                                  const std::vector<Piece>& pieces, std::string_view close,
                                  std::string_view block = {}, std::string_view before = {});

// Pieces for the trap's condition argument: COND verbatim, or with
// `torch.equal(a, b)` / `a.equal(b)` rewritten to `_graphmend_rt.equal(a, b)`.
// Empty (and `declined` set) when the argument list cannot be located.
std::vector<Piece> condition_pieces(const lint::RuleContext& ctx, const Condition& c,
                                    std::string& declined);

}  // namespace gm::rules::traps

// Predication: the legality of rewriting data-dependent control flow to
// `_graphmend_rt.where(cond, if_true, if_false)` (the paper's [Where]), and
// what any rule needs to write one: conditions lowered to one expression,
// purity and liveness queries, where-call layout, comments kept with their
// statements (GM101-GM105 predicate; GM30x, GM40x lower conditions with it). See docs/runtime.md,
// section [Where].
//
// Division of labour between the static rule and the runtime helper:
//  - statically (here) we prove what only the source can tell: the code that
//    now runs unconditionally is pure and total (no side effects, no
//    value-dependent exceptions), every name is bound when read, names that
//    leave the statement are merged, nothing later updates a merged tensor in
//    place (aliasing would change), and the condition can be written as one
//    expression with the same truth value;
//  - at trace time the runtime checks what only the real tensors can tell:
//    the condition is 0-d, both arms are tensors of one dtype, shape and
//    device, and autograd is safe (see grad_safe below). When any of that
//    fails it evaluates `if_true if cond else if_false`, i.e. the original
//    branch, graph break included. Eagerly it is always that expression.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ast/tree.h"
#include "edits/edit.h"
#include "lint/rule.h"
#include "semantic/model.h"

namespace gm::rules::predication {

using ast::NodeId;

// ---- where the rules look

// Calls f(func, if_stmt) for every `if` statement in the body of a region
// function (nested defs and classes are region functions of their own when
// they are reached, so they are not entered here).
void for_each_region_if(const lint::RuleContext& ctx,
                        const std::function<void(NodeId func, NodeId stmt)>& f);

// GM103's shape: `if c: return a` directly followed by `return b`, or
// `if c: return a` / `else: return b`. The two returns, else nullopt.
struct ReturnPair {
  NodeId if_return;    // `return a`
  NodeId else_return;  // `return b` (the else branch's or the next statement)
};
std::optional<ReturnPair> return_pair(const lint::RuleContext& ctx, NodeId if_stmt);

// GM104's shape: `if c:` / `else:` (not an `elif` chain) whose two branches
// end in the same statement but for some tensor values, e.g.
//   self.register_buffer("f", a, persistent=False)  /  ... ("f", b, ...)
//   self.scale = a                                   /  self.scale = b
// The last statement is a call statement (same callee text, same argument
// count, same keyword names in order) or an assignment to one attribute or
// subscript target (same target text); `holes` pairs the arguments (or the
// assigned values) whose texts differ, at least one. Bare-name assignments
// are GM101's.
struct TailPair {
  NodeId if_tail, else_tail;
  std::vector<std::pair<NodeId, NodeId>> holes;  // (if-branch expr, else-branch expr)
};
std::optional<TailPair> tail_pair(const lint::RuleContext& ctx, NodeId if_stmt);

// ---- the condition

// `not c` -> c (the caller swaps the arms); anything else as it is.
// Sets *negated when a `not` was removed.
NodeId strip_not(const ast::Tree& tree, NodeId test, bool* negated);

// Whether `e` is (or contains, as a condition operand) tensor data: a proven
// tensor fact, or a reduction/predicate call whose result is a tensor
// whenever its receiver is one (`.any()`, `.sum() > n`, `torch.isinf(x)`, ...).
// Used to decide whether Dynamo breaks on a test (report) — never as proof.
bool tensor_evidence(const lint::RuleContext& ctx, NodeId e);

// `e` is, or has as a `not`/`and`/`or` operand, a comparison one of whose
// operands has a proven value range (sema::value_range: a random draw).
// GM105 owns such tests (a guard on the threshold, not predication).
bool range_compare(const lint::RuleContext& ctx, NodeId e);

// A Python value Dynamo specialises on (no graph break): a proven non-tensor
// fact, `is`/`is not` tests, comparisons of tensor metadata (`x.dtype ==
// torch.float16`, `x.shape[0] > 1`, `x.dim() == 3`), `self.training`,
// `isinstance`/`hasattr`/`len`, and `not`/`and`/`or` over those.
bool static_value(const lint::RuleContext& ctx, NodeId e);

// A condition written as one expression with the truth value of `e`:
// `a and b` -> `(a) & (b)`, `a or b` -> `(a) | (b)`, `not a` -> `~(a)`,
// everything else as written. nullopt (with *why) when that is not proven to
// keep the truth value: `&`/`|`/`~` need bool-valued operands (comparisons,
// `.any()`/`.all()`, predicates, proven bool tensors), and operands that
// `and`/`or` skipped now always run, so they must be pure and total.
// `known`: names already proven tensors where `e` runs (earlier operands
// used them as tensors).
std::optional<std::string> lower_condition(const lint::RuleContext& ctx, NodeId e, std::string* why,
                                           const std::set<std::string>* known = nullptr);

// The operand texts of a static `and` prefix joined back with " and "
// (parenthesised where an operand would not be one on its own).
std::string join_and(const lint::RuleContext& ctx, std::span<const NodeId> values);

// ---- code that now runs unconditionally

struct Purity {
  bool ok = true;
  bool grad_safe = true;  // every op has a gradient bounded independently of values
  std::string why;        // when !ok: what is not pure or total, with its line
  // Names known to hold tensors here although their fact is not proven: the
  // condition, evaluated first, already used them as tensors
  // (`torch.isinf(h)`, `h.any()`); see tensor_names_of.
  std::set<std::string> tensor_names;
};
// Names the evaluation of `cond` proves to be tensors (or arrays): first
// arguments of torch functions and receivers of tensor-only methods.
std::set<std::string> tensor_names_of(const lint::RuleContext& ctx, NodeId cond);
// Whether `e` is a tensor for purity purposes (its fact, or a name in p).
bool known_tensor(const lint::RuleContext& ctx, NodeId e, const Purity& p);
// Accumulates into `p` whether evaluating `e` can have an effect or raise
// depending on values (calls outside the allow-list, submodule calls,
// tensor-indexed subscripts, integer division, attribute reads that may be
// absent, walrus, lambdas, comprehensions, ...).
void check_pure_total(const lint::RuleContext& ctx, NodeId e, Purity& p);

// Values a rewrite evaluates whenever `stmt` runs where the original
// evaluated them only when the test (`conds`, the operands of an `and`)
// held: the arguments of a `*_if` call, the values of a trap's message.
// Each must be pure and total (check_pure_total; names the test proves
// tensors count as tensors; an attribute the test reads on every evaluation
// is present) and every local it reads bound on every path to `stmt`.
// False with `why` (what stops it, with its line) otherwise.
bool evaluable_unconditionally(const lint::RuleContext& ctx, std::span<const NodeId> values,
                               std::span<const NodeId> conds, NodeId stmt, std::string& why);

// Both arms of a select that now always run: `not` stripped (arms swapped),
// the condition lowered, both arms checked pure and total (names the
// condition proves tensors count as tensors).
struct Select {
  std::string cond;
  NodeId if_true, if_false;
  bool grad_safe = true;
};
// nullopt with *why set (an impure arm: `impure_prefix` + what is impure).
std::optional<Select> select_arms(const lint::RuleContext& ctx, NodeId test, NodeId if_true,
                                  NodeId if_false, std::string_view impure_prefix,
                                  std::string* why);

// ---- names

// The (Async)FunctionDef whose body contains `node` (NodeId{} at module level).
NodeId enclosing_function(const sema::Model& m, NodeId node);

// Loads of `name` that refer to `func`'s local (nested functions and lambdas
// included), outside the byte range [begin, end).
bool read_outside(const lint::RuleContext& ctx, NodeId func, std::string_view name,
                  std::uint32_t begin, std::uint32_t end);
// Loads of `name` inside [begin, end).
bool read_inside(const lint::RuleContext& ctx, NodeId func, std::string_view name,
                 std::uint32_t begin, std::uint32_t end);

// `name` is certainly bound when `stmt` runs: a parameter of `func`, or an
// unconditional assignment to it earlier in `stmt`'s block or in a block
// enclosing it (within `func`).
// Only assignments starting at or after `min_offset` count.
bool bound_before(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name,
                  std::uint32_t min_offset = 0);

// `name` holds None when `stmt` runs: `stmt` sits in the body of an `if`
// whose test is `name is None` (or a conjunction with it), with no binding
// of `name` between that test and `stmt` and no loop in between.
bool none_before(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name);

// The value `stmt` leaves in `name` may be read later: a load of `name`
// outside `stmt` that is not preceded, on every path from `stmt`, by an
// unconditional rebinding that follows `stmt` (conservative: loads before
// `stmt`, e.g. in a loop, count as reads).
bool live_after(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name);

// Something in `func` may update `name`'s tensor in place: `name.op_(...)`,
// `name[...] = `, `name.attr = `, `name += `, `out=name`, `del name[...]`.
// Returns a description ("`x.add_(...)` at line 12") or "".
std::string in_place_use(const lint::RuleContext& ctx, NodeId func, std::string_view name);
// The same for attribute `attr` of any object, anywhere in the file
// (`self.attr.copy_(...)`, `m.attr[i] = `, `self.attr += `, `out=self.attr`).
std::string attr_in_place_use(const lint::RuleContext& ctx, std::string_view attr);

// `func` has a `global`/`nonlocal` declaration of `name`.
bool declared_nonlocal(const lint::RuleContext& ctx, NodeId func, std::string_view name);

// The names read by `e` (Name loads, in order, unique).
std::vector<std::string> names_read(const lint::RuleContext& ctx, NodeId e);

// A fresh local name starting with `base` unused anywhere in `func`.
std::string fresh_name(const lint::RuleContext& ctx, NodeId func, std::string_view base);

// ---- text

// Source text of `e`, parenthesised when `|`, `&`, `~` or a call argument
// list could rebind it (comparisons, boolean ops, lambdas, conditional
// expressions, walrus, starred, unary `not`, tuples without parentheses).
std::string operand_text(const lint::RuleContext& ctx, NodeId e);

// `_graphmend_rt.where(c, t, f[, grad_safe=False])`.
std::string where_call(std::string_view cond, std::string_view if_true, std::string_view if_false,
                       bool grad_safe);

// 1-based line of a byte offset.
std::uint32_t line_of(const lint::RuleContext& ctx, std::uint32_t offset);
// " (line N)" for node n, to end a decline reason.
std::string line_suffix(const lint::RuleContext& ctx, NodeId n);

// ---- layout of the mended code

// How the file wraps: its longest line (at least 79 columns) is the limit a
// generated line must fit, `base` the columns before the relative
// indentation of the lines being written (the replaced statement's own).
struct Wrap {
  std::size_t limit = 79;
  std::size_t base = 0;
};
Wrap wrap_of(const lint::RuleContext& ctx, NodeId stmt);

// An expression to lay out: an atom (source or generated text) or a call
// (`head` ends with its `(`; the arguments are Docs; `)` closes it).
struct Doc {
  std::string text;  // the atom, or the call's head through `(`
  std::vector<Doc> args;
  bool call = false;
  // An atom copied from the source spanning several lines: the column its
  // text started at there and the indentation of that line (its
  // continuation lines move with the one or the other), or `verbatim` when
  // they must stay as they are (a triple-quoted string, a backslash-newline
  // that may lie inside a string).
  std::size_t col = 0;
  std::size_t line_indent = 0;
  bool verbatim = false;
  static Doc atom(std::string t) { return Doc{std::move(t), {}, false, 0, 0, false}; }
  static Doc call_of(std::string head, std::vector<Doc> args) {
    return Doc{std::move(head), std::move(args), true, 0, 0, false};
  }
};
// Source text whose line breaks must stay as they are when it moves: a
// triple-quoted string, or a backslash-newline (it may lie inside a string).
bool keep_verbatim(std::string_view text);
// The source text of `e` as an atom (operand_text's parentheses when
// `parens`), remembering its column.
Doc source_doc(const lint::RuleContext& ctx, NodeId e, bool parens = false);
// The same for the source range [begin, end) with `prefix` put before it.
Doc range_doc(const lint::RuleContext& ctx, std::uint32_t begin, std::uint32_t end,
              std::string prefix = {});
// `_graphmend_rt.where(c, t, f[, grad_safe=False])` as a Doc; `head_prefix`
// goes before the callee (`persistent=` for a keyword argument).
Doc where_doc(Doc cond, Doc if_true, Doc if_false, bool grad_safe,
              std::string_view head_prefix = {});

// The lines of `lead` + `d` + `trail` at relative indentation `indent` (four
// spaces a level, as replace_statement takes them): one line when it fits
// `w.limit`, else the call is split the way black and ruff format split it
// (all arguments on one indented line, else one per line with a trailing
// comma (none after a sole argument), nested calls likewise, `)` back at
// `indent`).
std::vector<std::string> layout(const Wrap& w, std::string_view indent, std::string_view lead,
                                const Doc& d, std::string_view trail = {});

// Anchors the copies of the source text of `nodes` in `edit`'s replacement
// (edits::anchor_copy, in this order; what is not copied verbatim, or out of
// order, is skipped), so under the import hook a branch's value merged into a
// `where` keeps its own line and columns, not the `if`'s.
void anchor_copies(const lint::RuleContext& ctx, edits::Edit& edit, std::span<const NodeId> nodes);

// Comments of a replaced statement assigned to the statements they
// annotate: the comment lines directly above a statement (within the
// replaced range) and the comments at the end of its lines. What no
// statement claims (`if ...:  # note`, `else:  # note`) is `loose`.
struct Comments {
  std::vector<std::string> loose;
  // per statement: the lines above it, and its trailing comments
  std::vector<std::pair<NodeId, std::vector<std::string>>> above, trailing;
  const std::vector<std::string>* above_of(NodeId s) const;
  const std::vector<std::string>* trailing_of(NodeId s) const;
};
// For the comments in [begin, end) and the statements `stmts` inside it.
Comments attach_comments(const lint::RuleContext& ctx, std::uint32_t begin, std::uint32_t end,
                         std::span<const NodeId> stmts);

}  // namespace gm::rules::predication

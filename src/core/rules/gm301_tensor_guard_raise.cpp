// GM301: `if <tensor condition>: raise E("...")` inside a compiled region ->
// `_graphmend_rt.trap_if(COND, E, "...")` (or trap_unless for `if not COND`).
#include <algorithm>

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

constexpr std::string_view kDoc = R"md(# GM301 tensor-guard-raise

## What it detects
Inside a compiled region (the `forward` of an `nn.Module` subclass, a
`torch.compile`d function, or a function they call), an `if` whose body ends
in `raise` and whose condition is tensor data:

- an expression the semantic model proves to be a tensor;
- a comparison where one side is a reduction: a method call with no
  positional argument (`.sum()`, `.any()`, `.all()`, `.max()`, `.min()`,
  `.mean()`, `.prod()`, `.norm()`, `.count_nonzero()`, `.amax()`, `.amin()`)
  or `torch.sum(x)`-style call with one, also inside arithmetic
  (`(a * b).sum() != n`);
- `.any()` / `.all()` (e.g. `torch.isnan(x).any()`), `torch.any(x)`;
- `torch.equal(a, b)` / `a.equal(b)`, `torch.allclose(a, b)`;
- any of these under `not`, `and`, `or`.

Python-level checks are not reported: `len(x)`, `x.shape`, `x.size()`,
`x.dim()`, `x.ndim`, `isinstance`, `is None`. Dynamo evaluates those at trace
time and does not break.

## Why Dynamo breaks there
Dynamo cannot branch on a value that exists only when the graph runs. On
torch 2.13 `if <tensor>:` stops the graph: *Data-dependent branching*
(GB0170). The code before and after the `if` becomes two graphs, and the
check itself runs eagerly. `torch.equal` is worse: it returns a Python
`bool` computed from tensor data, and Dynamo breaks on it as a *Data
dependent operator* (GB0033, `aten.equal.default`).

## The rewrite
The guard becomes one call of the runtime, and the import is added once:

    if COND:                     _graphmend_rt.trap_if(COND,
        raise E("msg")     ->        E, "msg")

    if not COND:                 _graphmend_rt.trap_unless(COND,
        raise E("msg")     ->        E, "msg")

A test that starts with Python-level operands (`if labels is not None and
labels.max() >= n:`, `if mask is not None and self.training and ...`)
keeps them as a real `if` around the trap, so the tensor test runs exactly
when it ran before (one tensor operand after them; several are lowered as a
whole, below):

    if labels is not None and labels.max() >= n:     if labels is not None:
        raise ValueError("...")               ->          _graphmend_rt.trap_if(labels.max() >= n, ValueError, "...")

`if [not] torch.equal(a, b)` (or `a.equal(b)`) passes
`_graphmend_rt.equal(a, b)` as the condition. A condition combining tests
with `and`/`or`/`not` is passed as one expression with the same truth
value, as GM302 does (`if x.isnan().any() or x.isinf().any():` ->
`trap_if(x.isnan().any() | x.isinf().any(), ...)`).

`trap_if(c, E, *args)` is exactly `if c: raise E(*args)` when run eagerly,
for a condition of any type. While Dynamo traces, a tensor condition stays in
the graph as a 0-d bool output, and the runtime checks it right after the
graph and raises `E(*args)`: the same type and message, for any backend,
Inductor included (docs/runtime.md, [Trap]). A condition that is a Python
`bool` at trace time (`_graphmend_rt.equal` of tensors with different
shapes) raises at once, as the original did.

The call goes on one line when it fits the file's longest line, else it is
split as black splits calls (the arguments on one indented line, else one
per line with a trailing comma). Comments of the guard go above the call.

## When it declines
- the `if` has an `else` or `elif` branch, or is itself an `elif`;
- the body does more than `raise` (more than one statement);
- a bare `raise`, or `raise ... from ...` (the trap carries no cause);
- the exception is not a builtin exception class (resolved through the
  model, so a shadowed `ValueError` does not count), is an object rather
  than a class or class call, or is constructed with keyword or starred
  arguments; `StopIteration`, `StopAsyncIteration`, `GeneratorExit`,
  `SystemExit` and `KeyboardInterrupt` steer control flow and are left alone;
- an argument is neither a constant (string, bytes and number constants,
  implicit concatenation included, f-strings without placeholders, `True`,
  `False`, `None`) nor a formatted string the runtime can build later: an
  f-string, `"...".format(a, b)` or `"..." % v` becomes
  `_graphmend_rt.message(...)` (docs/runtime.md), formatted only when the
  trap raises, but its values are evaluated on every call, so each must be
  pure and total there (a name, metadata of a proven tensor, an attribute the
  condition reads or the class assigns; not a `.item()`, a subscript that
  may raise, a call outside the op table). A name bound to a string, a call
  or `+` concatenation is declined;
- the condition combines tests with `and`/`or`/`not` and cannot be written
  as one expression with the same truth value (as in GM302: every operand
  bool-valued, `not` only of a proven tensor, an operand that `and`/`or`
  could skip pure and total since it now always runs); the reason names
  the operand;
- the condition is a chained comparison, or nests `torch.equal` in a
  larger expression (not yet lowered); `allclose` (no trap helper yet);
- the guard is inside a `try` with `except` handlers: the trap raises at the
  end of the graph, where the handlers cannot catch it;
- the code after the guard, up to the end of its function (the whole loop
  when the guard is in a loop), changes state that stays visible when the
  check fails: a store to an attribute or item of anything but a local of
  the function (`self.x = ...`, `cache[k] = ...` with `cache` a parameter or
  an alias of one), an in-place tensor method (`.add_()`, `.copy_()`,
  `.zero_()`, `torch.nn.init.*_`) or `+=` on such a value, a mutating
  container method (`.append()`, `.update()`, `.pop()`, ...) on one,
  `setattr`/`delattr`, an `out=` argument, or a `global`/`nonlocal`
  declaration in the function. The reason names the line;
- `_graphmend_rt` is already bound to something else in the file.

## What is not checked (the error path)
Under compilation the check runs after the graph, so the code after the
guard runs first, also on inputs where the guard fails. The rule rejects
the state changes listed above, but it does not look into calls: if a call
after the guard raises on such inputs (a shape error in a later `view`, an
assertion in a helper), that error surfaces instead of the guard's; side
effects inside submodules and helpers (BatchNorm running statistics, caches)
are not inspected; in-place updates of a local that is a *view* of an input
(`y = x.view(-1); y.add_(1)`) are not recognised as such. Code in the
*callers* of the guard's function, up to the end of the graph, also runs
before the check. Run eagerly, the mended code behaves exactly as the
original.

## Example
Before (transformers 4.52.4, `GroundingDinoMultiscaleDeformableAttention`):

    if (spatial_shapes[:, 0] * spatial_shapes[:, 1]).sum() != sequence_length:
        raise ValueError(
            "Make sure to align the spatial shapes with the sequence length of the encoder hidden states"
        )

After:

    _graphmend_rt.trap_if(
        (spatial_shapes[:, 0] * spatial_shapes[:, 1]).sum() != sequence_length,
        ValueError,
        "Make sure to align the spatial shapes with the sequence length of the encoder hidden states",
    )
)md";

// Builtin exception classes whose construction with constant arguments has
// no side effect and which carry no control-flow meaning (StopIteration,
// GeneratorExit, SystemExit and KeyboardInterrupt are left alone).
constexpr std::string_view kBuiltinExceptions[] = {"ArithmeticError",
                                                   "AssertionError",
                                                   "AttributeError",
                                                   "BaseException",
                                                   "BlockingIOError",
                                                   "BrokenPipeError",
                                                   "BufferError",
                                                   "BytesWarning",
                                                   "ChildProcessError",
                                                   "ConnectionAbortedError",
                                                   "ConnectionError",
                                                   "ConnectionRefusedError",
                                                   "ConnectionResetError",
                                                   "DeprecationWarning",
                                                   "EOFError",
                                                   "EncodingWarning",
                                                   "EnvironmentError",
                                                   "Exception",
                                                   "FileExistsError",
                                                   "FileNotFoundError",
                                                   "FloatingPointError",
                                                   "FutureWarning",
                                                   "IOError",
                                                   "ImportError",
                                                   "ImportWarning",
                                                   "IndentationError",
                                                   "IndexError",
                                                   "InterruptedError",
                                                   "IsADirectoryError",
                                                   "KeyError",
                                                   "LookupError",
                                                   "MemoryError",
                                                   "ModuleNotFoundError",
                                                   "NameError",
                                                   "NotADirectoryError",
                                                   "NotImplementedError",
                                                   "OSError",
                                                   "OverflowError",
                                                   "PendingDeprecationWarning",
                                                   "PermissionError",
                                                   "ProcessLookupError",
                                                   "RecursionError",
                                                   "ReferenceError",
                                                   "ResourceWarning",
                                                   "RuntimeError",
                                                   "RuntimeWarning",
                                                   "SyntaxError",
                                                   "SyntaxWarning",
                                                   "SystemError",
                                                   "TabError",
                                                   "TimeoutError",
                                                   "TypeError",
                                                   "UnboundLocalError",
                                                   "UnicodeDecodeError",
                                                   "UnicodeEncodeError",
                                                   "UnicodeError",
                                                   "UnicodeTranslateError",
                                                   "UnicodeWarning",
                                                   "UserWarning",
                                                   "ValueError",
                                                   "Warning",
                                                   "ZeroDivisionError"};

constexpr std::string_view kControlFlowExceptions[] = {
    "StopIteration", "StopAsyncIteration", "GeneratorExit", "SystemExit", "KeyboardInterrupt"};

bool is_control_flow_exception(const std::optional<std::string>& q) {
  if (!q || !q->starts_with("builtins.")) return false;
  const std::string_view name = std::string_view(*q).substr(9);
  return std::find(std::begin(kControlFlowExceptions), std::end(kControlFlowExceptions), name) !=
         std::end(kControlFlowExceptions);
}

bool is_builtin_exception(const std::optional<std::string>& q) {
  if (!q || !q->starts_with("builtins.")) return false;
  const std::string_view name = std::string_view(*q).substr(9);
  return std::find(std::begin(kBuiltinExceptions), std::end(kBuiltinExceptions), name) !=
         std::end(kBuiltinExceptions);
}

// `elif` parses as an If nested in the outer If's orelse.
bool is_elif(const lint::RuleContext& ctx, NodeId if_stmt) { return ctx.model()->is_elif(if_stmt); }

class TensorGuardRaise final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM301"; }
  std::string_view name() const override { return "tensor-guard-raise"; }
  std::string_view summary() const override {
    return "`if <tensor condition>: raise` (a validation guard on tensor data) inside a "
           "compiled region";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const sema::Model* model = ctx.model();
    if (model == nullptr) return;
    const auto& tree = ctx.tree();
    std::vector<NodeId> guards;
    for (NodeId n : model->region_nodes()) {
      if (tree.kind(n) != NodeKind::If) continue;
      const auto body = tree.children(n, GM_F(If, body));
      if (body.empty() || tree.kind(body.back()) != NodeKind::Raise) continue;
      if (!traps::tensor_evidence(*model, tree.child(n, GM_F(If, test)))) continue;
      guards.push_back(n);
    }
    for (NodeId g : guards) report(ctx, sink, g);
  }

 private:
  static void report(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId guard) {
    const auto& tree = ctx.tree();
    const sema::Model& m = *ctx.model();
    const NodeId test = tree.child(guard, GM_F(If, test));
    // `if <Python test> and <tensor test>:` keeps the Python test as a real
    // `if` around the trap, so the tensor test runs exactly when it ran.
    const traps::PythonPrefix prefix = traps::python_prefix(ctx, test);
    const std::vector<NodeId>& statics = prefix.statics;
    const NodeId data_test = prefix.data;
    const traps::Condition cond = traps::analyze_condition(ctx, data_test);
    auto& d = sink.report(tree.at(test).begin, tree.at(test).end,
                          "validation guard on tensor data breaks the graph");
    d.why = cond.equal == traps::Condition::Equal::Item ? std::string(traps::kItemWhy)
            : cond.equal != traps::Condition::Equal::None &&
                    cond.equal != traps::Condition::Equal::Lowered
                ? "torch.equal returns a Python bool computed from tensor data: Dynamo breaks "
                  "the graph there (Data dependent operator, GB0033) and runs the check eagerly"
                : "Dynamo cannot branch on tensor data: the `if` breaks the graph "
                  "(Data-dependent branching, GB0170) and the check runs eagerly";

    if (is_elif(ctx, guard)) {
      d.declined_reason = "the guard is an `elif` branch of an earlier test (not yet lowered)";
      return;
    }
    if (!tree.children(guard, GM_F(If, orelse)).empty()) {
      d.declined_reason = "the `if` has an `else`/`elif` branch";
      return;
    }
    const auto body = tree.children(guard, GM_F(If, body));
    if (body.size() != 1) {
      d.declined_reason = "the guard's body does more than `raise` (" +
                          std::to_string(body.size()) + " statements)";
      return;
    }
    const NodeId raise = body[0];
    const NodeId exc = tree.child(raise, GM_F(Raise, exc));
    if (!exc) {
      d.declined_reason = "a bare `raise` re-raises the exception being handled";
      return;
    }
    if (tree.child(raise, GM_F(Raise, cause))) {
      d.declined_reason = "`raise ... from ...`: the trap does not carry an exception cause";
      return;
    }
    NodeId cls = exc;
    std::span<const NodeId> args;
    if (tree.kind(exc) == NodeKind::Call) {
      cls = tree.child(exc, GM_F(Call, func));
      args = tree.children(exc, GM_F(Call, args));
      if (!tree.children(exc, GM_F(Call, keywords)).empty()) {
        d.declined_reason = "the exception is constructed with keyword arguments";
        return;
      }
    }
    const auto cls_name = m.qualified_name(cls);
    if (is_control_flow_exception(cls_name)) {
      d.declined_reason = "`" + std::string(ctx.text_of(cls)) +
                          "` steers control flow (iteration, generator or interpreter exit): "
                          "not deferred";
      return;
    }
    if (!is_builtin_exception(cls_name)) {
      d.declined_reason = "`" + std::string(ctx.text_of(cls)) +
                          "` is not a builtin exception class (only those are known to be "
                          "constructed without side effects)";
      return;
    }
    // A formatted argument is passed as `_graphmend_rt.message(...)`: built
    // only when the trap raises.
    std::vector<std::optional<traps::Piece>> lazy(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const NodeId a = args[i];
      if (tree.kind(a) == NodeKind::Starred) {
        d.declined_reason = "the exception is constructed with starred arguments";
        return;
      }
      if (auto why = traps::non_constant_reason(ctx, a); !why.empty()) {
        std::string lazy_why;
        lazy[i] = traps::lazy_argument(ctx, a, data_test, guard, lazy_why);
        if (!lazy[i]) {
          d.declined_reason =
              "the exception's arguments are not constants (" + why + "): " + lazy_why;
          return;
        }
      }
    }
    if (!cond.declined.empty()) {
      d.declined_reason = cond.declined;
      return;
    }
    if (auto why = traps::scan_after(ctx, guard, "guard"); !why.empty()) {
      d.declined_reason = std::move(why);
      return;
    }

    std::string declined;
    std::vector<traps::Piece> pieces{
        traps::Piece::literal(std::string(runtime_rewrite::kRuntimeAlias) +
                              (cond.negated ? ".trap_unless(" : ".trap_if("))};
    for (auto& p : traps::condition_pieces(ctx, cond, declined)) pieces.push_back(std::move(p));
    if (!declined.empty()) {
      d.declined_reason = std::move(declined);
      return;
    }
    pieces.push_back(traps::Piece::separator());
    pieces.push_back(traps::Piece::source(tree.at(cls).begin, tree.at(cls).end));
    for (std::size_t i = 0; i < args.size(); ++i) {
      pieces.push_back(traps::Piece::separator());
      pieces.push_back(
          lazy[i] ? *lazy[i] : traps::Piece::source(tree.at(args[i]).begin, tree.at(args[i]).end));
    }
    std::string block;
    if (!statics.empty()) {
      block = "if " + predication::join_and(ctx, statics) + ":";
      if (block.find('\n') != std::string::npos) {
        d.declined_reason = "the Python test before the tensor test spans lines";
        return;
      }
    }
    const auto text = traps::render(ctx, guard, pieces, ")", block);
    if (!text) {
      d.declined_reason = "cannot lay the trap call out on the guard's lines";
      return;
    }
    // The trap call stands for the `raise`, so a traceback through it names
    // the `raise`'s line under the import hook, as the original did.
    edits::Edit edit = edits::Edit::replace(tree.at(guard).begin, tree.at(guard).end, *text);
    edits::anchor(edit, pieces.front().text, tree.at(raise).begin);
    runtime_rewrite::attach_fix(ctx, d,
                                std::string("Check after the graph with `_graphmend_rt.") +
                                    (cond.negated ? "trap_unless`" : "trap_if`"),
                                {std::move(edit)});
  }
};

}  // namespace

const lint::Rule& gm301_tensor_guard_raise() {
  static const TensorGuardRaise rule;
  return rule;
}

}  // namespace gm::rules

// GM101: an `if` statement on tensor data whose branches only assign local
// names -> predication with `_graphmend_rt.where`.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "edits/tree_query.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM101 data-dependent-if

## What it detects
Inside a compiled region, an `if` statement whose test is tensor data:
`.any()`/`.all()`, a compared reduction (`x.sum() > 0`,
`torch.max(ids) + 1 > n`), `torch.isinf(x).any()`, a proven bool tensor, a
`.item()` compared with a plain name, constant or attribute
(`x.sum().item() > 0`), a local whose only assignment reaching the test is
such a call (`total = x.sum()` then `if total > 0:`, also on unannotated
parameters, and when later code or the `if`'s own arms rebind it), and
`and`/`or`/`not` over those. Tests that are Python values (`x.shape[0] > 1`,
`self.training`, `mask is None`) are not reported: Dynamo specialises on
them. (A test guarding a lone `raise` is GM301; one guarding a loop `break`
is GM407; branches that end in the same call or attribute store with
different values are GM104.)

## Why Dynamo breaks there
Python must know which branch to run, so Dynamo needs the tensor's value:
"Data-dependent branching" (GB0170, attempted to jump with TensorVariable).
It ends the graph before the `if`, runs the branch eagerly and starts a new
graph after it; inside a loop it gives up on the whole frame.

## The rewrite
Both branches run unconditionally and every name that leaves the statement
is selected with `_graphmend_rt.where(cond, if_true, if_false)`:

    if torch.isinf(h).any() or torch.isnan(h).any():
        h = torch.clamp(h, min=-m, max=m)
->
    h = _graphmend_rt.where(torch.isinf(h).any() | torch.isnan(h).any(), torch.clamp(h, min=-m, max=m), h)

- `t.item() > n` becomes `_graphmend_rt.compare_item(t, ">", n)`: eagerly
  exactly the comparison; while tracing, the comparison made on the tensor
  (as float64 / int64) where that is Python's answer for every value, a
  0-d bool tensor `where` takes (otherwise the original `.item()` and its
  break).
- `and`/`or`/`not` become `&`/`|`/`~`; leading operands of `and` that are
  Python values stay a real `if` around the predicated body
  (`if h.dtype == torch.float16 and h.isinf().any():` keeps
  `if h.dtype == torch.float16:`).
- Every name that leaves the statement is merged once:
  `x = where(c, <x's value in the if branch>, <in the else branch>)`, the
  old value standing in for a branch that does not assign it. The wheres
  come in an order where an arm that reads another merged name sees what
  its branch saw (that name's old value, or the value its branch left in it,
  which the earlier where selected exactly when this arm is taken). Names
  used only inside a branch are assigned as they are, before the wheres.
  Only a name assigned twice in one branch (or arms that need each other's
  values both ways) falls back to predicating assignment by assignment.
- The condition stays inline when one where uses it; with several it is
  computed once into `_graphmend_cond` (a fresh local) first.
- Comments stay with the statement they annotate (above it or at its end);
  comments on the `if`/`else` lines go above the merged code. A where that
  does not fit the file's longest line is split as black splits calls.

An `if`/`elif`/`else` chain is predicated from its last link up, one link
per round of the fix loop: the last `elif` becomes an `else:` block holding
its predicated form, and the link before it is then a plain `if`/`else`
whose arms select among the wheres already written, so every name ends as
one nested select:

    if x.sum() > 10:
        s = x * 0.1
    elif x.sum() < -10:
        s = -x
    else:
        s = x
->
    s = _graphmend_rt.where(x.sum() > 10, x * 0.1, _graphmend_rt.where(x.sum() < -10, -x, x))

Every test of the chain is then evaluated, as every arm is; each must be
pure and total like the arms.

A branch (without `else`) made only of deferred side effects, i.e. the
`_graphmend_rt.print/log/warn(...)` calls GM201-GM203 write, becomes their
conditional forms, decided after the graph (docs/runtime.md):

    if x.sum() < 0:
        warnings.warn("negative input")
->  (GM203)  _graphmend_rt.warn("negative input") inside the `if`
->  (GM101)  _graphmend_rt.warn_if(x.sum() < 0, "negative input")

`graphmend fix` applies both steps; the calls' arguments now always run,
so they must be pure and total, and every local they read bound on every
path to the `if`. A formatted message (an f-string, `str.format`, `%`, or
the `fmt` GM201-GM203 wrote for a tensor read) becomes
`_graphmend_rt.message(...)`: its values run on every call, the string is
built only when the test holds, as in the original:

    if loss > 100:
        warnings.warn(f"huge loss {loss.item():.3f} at step {self.step}")
->  _graphmend_rt.warn_if(
        loss > 100,
        _graphmend_rt.message("huge loss {:.3f} at step {}", _graphmend_rt.item(loss), self.step),
    )

A deferred `.item()`, `float(t)` or `bool(t)` among the values is taken
only of a tensor proven to hold one element (a reduction over every
element, `loss = x.pow(2).mean()`); `int(t)` is not (it raises for NaN).

`_graphmend_rt.where` (docs/runtime.md) is exactly `if_true if cond else
if_false` when run eagerly. While tracing it emits `torch.where` only when
that provably gives the same value: a 0-d condition, both arms tensors of one
dtype, shape and device, and, under autograd, the same `requires_grad` on both
arms and (for arms whose ops have unbounded derivatives: `exp`, `log`, `/`,
products of tensors, ...; the rewrite passes `grad_safe=False`) no arm that
requires grad, because a NaN or Inf in the arm not taken would reach the
gradient. Otherwise it evaluates the original branch, graph break included.

## When it declines
- a branch holds anything but assignments of one local name (`x = ...`,
  `x: T = ...`, `pass`) or only deferred side effects: other calls for
  effect (a print, logging or warnings call not deferred yet is reported as
  such: `graphmend fix` defers it first), attribute or subscript stores,
  `return`, nested `if`, loops, augmented assignment (which updates a tensor in
  place);
- code that would now always run is not proven pure and total: calls outside
  an allow-list of pure, deterministic torch operations (no RNG, no in-place,
  no `out=`; `torch.zeros`/`ones` and `new_zeros`/`new_ones` only with
  int-literal sizes and `dtype=`/`device=`), submodule and user-function calls, indexing with possibly
  tensor-valued or out-of-range indices, Python division, `//`, `%`,
  attribute reads that may be absent, reads of values that may be `None`;
- a name bound only in the branch that runs is used after the `if` (it would
  now be bound when it was not), or a branch reads it before binding it;
- a merged name is updated in place anywhere in the function (`x.add_()`,
  `x[i] = v`, `x += v`, `out=x`): `where` returns a new tensor, so aliasing
  would change;
- a name is declared `global` or `nonlocal`;
- a branch binds a Python value (`flag = True`), or a name the other branch
  leaves as it was is None there, as inside `if mask is None and ...:` (with
  no binding of `mask` since that test): `where` needs a tensor in both arms
  and would only ever fall back to the `if`;
- `and`/`or`/`not` over operands not proven bool-valued (`x.sum() and y`);
- Python-valued operands of `and` together with an `else` branch, and
  tests that do not start their line;
- an `if` whose `elif` is not predicated (see below: the chain is mended
  from its last link up, so one link that declines keeps the links before
  it as they are), and chains of more than 8 links (one link is mended per
  round of the fix loop; the rounds and the nesting stay bounded).

## Example
Before:

    def forward(self, x):
        y = self.proj(x)
        if (y > 100).any():
            y = y.clamp(max=100)
        else:
            y = y * 0.5
        return y

After:

    def forward(self, x):
        y = self.proj(x)
        y = _graphmend_rt.where((y > 100).any(), y.clamp(max=100), y * 0.5)
        return y
)md";

// An explicit work list, not recursion: an `elif` chain nests as deep as it
// is long.
bool has_break(const ast::Tree& tree, std::span<const NodeId> stmts) {
  std::vector<std::span<const NodeId>> todo{stmts};
  while (!todo.empty()) {
    const auto cur = todo.back();
    todo.pop_back();
    for (NodeId s : cur) {
      const NodeKind k = tree.kind(s);
      if (k == NodeKind::Break || k == NodeKind::Continue) return true;
      if (k == NodeKind::If) {
        todo.push_back(tree.children(s, GM_F(If, body)));
        todo.push_back(tree.children(s, GM_F(If, orelse)));
      }
    }
  }
  return false;
}

bool is_elif(const lint::RuleContext& ctx, NodeId stmt) { return ctx.model()->is_elif(stmt); }
constexpr std::size_t kMaxElifLinks = 8;

// The number of tests of the `if`/`elif` chain `stmt` belongs to (1 for a
// plain `if`), counted to at most kMaxElifLinks + 1 (enough to decline) by
// walking from `stmt` both ways, so a long chain costs O(1) per link.
std::size_t chain_links(const lint::RuleContext& ctx, NodeId stmt) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  std::size_t n = 1;
  for (NodeId cur = stmt; n <= kMaxElifLinks && m.is_elif(cur); cur = m.parent(cur)) ++n;
  for (NodeId cur = stmt; n <= kMaxElifLinks;) {
    const auto orelse = tree.children(cur, GM_F(If, orelse));
    if (orelse.size() != 1 || tree.kind(orelse[0]) != NodeKind::If || !m.is_elif(orelse[0])) break;
    cur = orelse[0];
    ++n;
  }
  return n;
}

// The data operands of the test as one expression (`&` between `and`
// operands, each lowered with predication::lower_condition), or nullopt with *why.
std::optional<std::string> condition(const lint::RuleContext& ctx, std::span<const NodeId> data,
                                     std::string* why) {
  const ast::Tree& tree = ctx.tree();
  std::string cond;
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (i > 0) {
      predication::Purity p;
      predication::check_pure_total(ctx, data[i], p);
      if (!p.ok)
        return *why = "an operand `and` may skip would now always run: " + p.why, std::nullopt;
    }
    auto lowered = predication::lower_condition(ctx, data[i], why);
    if (!lowered) return std::nullopt;
    if (data.size() == 1) return lowered;
    // `a and b` over data operands: `&` needs both bool-valued.
    const NodeKind k = tree.kind(data[i]);
    if (k != NodeKind::Compare && k != NodeKind::BoolOp && k != NodeKind::Call &&
        !(ctx.model()->fact(data[i]).kind == sema::TensorKind::Tensor &&
          ctx.model()->fact(data[i]).dtype == sema::DType::Bool)) {
      *why = "`" + std::string(ctx.text_of(data[i])) +
             "` is not proven bool-valued, so `and` cannot become `&`";
      return std::nullopt;
    }
    if (i) cond += " & ";
    if (k != NodeKind::Call) cond += '(';
    cond += *lowered;
    if (k != NodeKind::Call) cond += ')';
  }
  return cond;
}

// `_graphmend_rt.print/log/warn(...)` (the GM201-GM203 forms): "print",
// "log" or "warn"; else "".
std::string_view runtime_effect(const lint::RuleContext& ctx, NodeId stmt) {
  const ast::Tree& tree = ctx.tree();
  if (tree.kind(stmt) != NodeKind::Expr) return {};
  const NodeId call = tree.child(stmt, GM_F(Expr, value));
  if (tree.kind(call) != NodeKind::Call) return {};
  const auto q = ctx.model()->qualified_name(tree.child(call, GM_F(Call, func)));
  for (std::string_view k :
       {std::string_view("print"), std::string_view("log"), std::string_view("warn")})
    if (q && *q == std::string(runtime_rewrite::kRuntimeModule) + "." + std::string(k)) return k;
  return {};
}

// The last `elif` of a chain is replaced by an `else:` block holding what
// replaces it (the lines one level deeper); the `if` before it then has a
// plain `else` and is predicated in the next round of the fix loop.
std::vector<std::string> as_else_block(std::vector<std::string> lines) {
  std::vector<std::string> out{"else:"};
  for (std::string& l : lines) out.push_back("    " + std::move(l));
  return out;
}

// Replaces the `if` with `lines` (comments inside it kept first) and
// attaches the fix; false with *why.
bool replace_in_place(const lint::RuleContext& ctx, NodeId stmt, std::vector<std::string> lines,
                      std::string description, lint::Diagnostic& d, std::string* why,
                      bool keep_comments = true,
                      std::span<const std::pair<std::string, std::uint32_t>> landmarks = {},
                      std::span<const NodeId> copies = {}) {
  if (is_elif(ctx, stmt)) {
    std::vector<std::string> all;
    const auto& r = ctx.tree().at(stmt);
    if (keep_comments)
      for (std::string_view c : edits::comments_in(ctx.file(), r.begin, r.end)) all.emplace_back(c);
    all.insert(all.end(), lines.begin(), lines.end());
    lines = as_else_block(std::move(all));
    keep_comments = false;
  }
  auto edit = ctx.replace_statement(stmt, lines, keep_comments);
  if (!edit) return *why = "the `if` does not start its line", false;
  for (const auto& [text, src] : landmarks) edits::anchor(*edit, text, src);
  predication::anchor_copies(ctx, *edit, copies);
  runtime_rewrite::attach_fix(ctx, d, std::move(description), {*edit});
  return true;
}

// An arm as a layout document. A `_graphmend_rt.where(...)` an earlier round
// wrote (an `elif` link, or a nested `if`) is laid out again as a call, so a
// chain ends as one select wrapped as black wraps it, not as the old call's
// lines pasted inside the new one.
thread_local int arm_depth = 0;  // ast::DepthGuard's counter: wheres nested in the source

predication::Doc arm_doc(const lint::RuleContext& ctx, NodeId e) {
  const ast::Tree& tree = ctx.tree();
  const ast::DepthGuard guard(arm_depth);
  if (tree.kind(e) == NodeKind::Call && !guard.exceeded()) {
    const NodeId func = tree.child(e, GM_F(Call, func));
    const auto q = ctx.model()->qualified_name(func);
    const auto& r = tree.at(e);
    if (q && *q == std::string(runtime_rewrite::kRuntimeModule) + ".where" &&
        edits::comments_in(ctx.file(), r.begin, r.end).empty()) {
      std::vector<predication::Doc> args;
      for (NodeId a : tree.children(e, GM_F(Call, args))) args.push_back(arm_doc(ctx, a));
      for (NodeId k : tree.children(e, GM_F(Call, keywords)))
        args.push_back(predication::source_doc(ctx, k));
      return predication::Doc::call_of(std::string(ctx.text_of(func)) + "(", std::move(args));
    }
  }
  return predication::source_doc(ctx, e);
}

struct Assignment {
  NodeId stmt;
  std::string name;      // the identifier (NFKC-normalized, as Python compares it)
  std::string spelling;  // the target as the user wrote it: what edits write
  NodeId value;
};

// The branch as a list of `name = value`, or a decline reason.
std::optional<std::vector<Assignment>> assignments(const lint::RuleContext& ctx,
                                                   std::span<const NodeId> stmts,
                                                   std::string* why) {
  const ast::Tree& tree = ctx.tree();
  std::vector<Assignment> out;
  for (NodeId s : stmts) {
    NodeId target, value;
    if (tree.kind(s) == NodeKind::Pass) continue;
    if (tree.kind(s) == NodeKind::Assign && tree.children(s, GM_F(Assign, targets)).size() == 1) {
      target = tree.children(s, GM_F(Assign, targets))[0];
      value = tree.child(s, GM_F(Assign, value));
    } else if (tree.kind(s) == NodeKind::AnnAssign) {
      target = tree.child(s, GM_F(AnnAssign, target));
      value = tree.child(s, GM_F(AnnAssign, value));
    }
    if (!target || !value || tree.kind(target) != NodeKind::Name) {
      std::string_view text = ctx.text_of(s);
      text = text.substr(0, text.find('\n'));
      *why = "the branch has `" + std::string(text) + "` (line " +
             std::to_string(predication::line_of(ctx, tree.at(s).begin)) +
             "): only assignments of one local name are predicated";
      return std::nullopt;
    }
    out.push_back({s, std::string(tree.text(tree.field(target, GM_F(Name, id)))),
                   std::string(ctx.text_of(target)), value});
  }
  return out;
}

using predication::names_read;

// The merged form: every name that leaves the statement is assigned once,
// `n = where(c, <its value in the if branch>, <in the else branch>)`, after
// the names used only inside a branch (assigned as they are, branch by
// branch). The wheres are ordered so that an arm reading another merged
// name sees what that branch saw: its value before the `if` (that name's
// where comes later) or the value the branch left in it (its where came
// first; the where then selects that very branch). nullopt when no order
// does that (a name assigned twice in a branch, a cycle), and the caller
// predicates assignment by assignment instead.
struct Merge {
  std::vector<NodeId> plain;  // statements kept as they are, in order
  struct Where {
    std::string name;
    std::string spelling;  // the name as the user wrote it: what edits write
    NodeId arm[2];   // the value in each branch (NodeId{}: the old value)
    NodeId stmt[2];  // the statements they come from
  };
  std::vector<Where> wheres;
  bool hoist = false;  // the condition reads a name a kept statement binds
};

std::optional<Merge> plan_merge(const lint::RuleContext& ctx, NodeId func, NodeId stmt,
                                const std::vector<Assignment>* br[2],
                                const std::set<std::string>& merged, std::span<const NodeId> data) {
  // Position of each assignment; finals of merged names.
  std::map<std::string, std::size_t> final_at[2];
  std::set<std::string> plain_in[2];
  for (int b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < br[b]->size(); ++i) {
      const Assignment& a = (*br[b])[i];
      if (merged.count(a.name)) {
        if (final_at[b].count(a.name)) return std::nullopt;  // assigned twice
        final_at[b][a.name] = i;
      } else {
        plain_in[b].insert(a.name);
      }
    }
  std::vector<std::string> order;  // merged names, first assignment first
  for (int b = 0; b < 2; ++b)
    for (const Assignment& a : *br[b])
      if (merged.count(a.name) && std::find(order.begin(), order.end(), a.name) == order.end())
        order.push_back(a.name);
  std::map<std::string, std::set<std::string>> before;  // name -> names whose where precedes
  for (int b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < br[b]->size(); ++i) {
      const Assignment& a = (*br[b])[i];
      const bool is_merged = merged.count(a.name) > 0;
      for (const std::string& r : names_read(ctx, a.value)) {
        const bool r_merged = merged.count(r) > 0;
        if (!r_merged && !plain_in[0].count(r) && !plain_in[1].count(r)) continue;
        // What this branch has bound to r at this point.
        bool assigned_before = false;
        for (std::size_t k = 0; k < i; ++k)
          assigned_before = assigned_before || (*br[b])[k].name == r;
        if (r_merged) {
          if (!assigned_before) {
            // The old value: r's where must come later (or be this one).
            if (!predication::bound_before(ctx, func, stmt, r)) return std::nullopt;
            if (is_merged && r != a.name) before[r].insert(a.name);
            continue;
          }
          // The branch's final value of r: only a where may read it, after r's.
          if (!is_merged) return std::nullopt;
          before[a.name].insert(r);
          continue;
        }
        // r is kept as assigned, then-branch statements first.
        if (!assigned_before) {
          // The old value of r, but a kept statement rebinds r before it is
          // read (a merged arm runs after all of them).
          if (is_merged || (b == 1 && plain_in[0].count(r))) return std::nullopt;
          continue;
        }
        // This branch's r: not if the else branch rebinds it before a
        // merged arm of the if branch reads it.
        if (is_merged && b == 0 && plain_in[1].count(r)) return std::nullopt;
      }
    }
  // Order the wheres (stable topological sort).
  Merge m;
  std::set<std::string> done;
  while (done.size() < order.size()) {
    bool progressed = false;
    for (const std::string& n : order) {
      if (done.count(n)) continue;
      bool ready = true;
      for (const std::string& p : before[n]) ready = ready && done.count(p);
      if (!ready) continue;
      Merge::Where w{n, {}, {}, {}};
      for (int b = 0; b < 2; ++b)
        if (auto it = final_at[b].find(n); it != final_at[b].end()) {
          w.arm[b] = (*br[b])[it->second].value;
          w.stmt[b] = (*br[b])[it->second].stmt;
          if (w.spelling.empty()) w.spelling = (*br[b])[it->second].spelling;
        }
      m.wheres.push_back(w);
      done.insert(n);
      progressed = true;
      break;
    }
    if (!progressed) return std::nullopt;  // a cycle
  }
  for (int b = 0; b < 2; ++b)
    for (const Assignment& a : *br[b])
      if (!merged.count(a.name)) m.plain.push_back(a.stmt);
  for (NodeId v : data)
    for (const std::string& n : names_read(ctx, v))
      m.hoist = m.hoist || plain_in[0].count(n) || plain_in[1].count(n);
  return m;
}

class DataDependentIf final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM101"; }
  std::string_view name() const override { return "data-dependent-if"; }
  std::string_view summary() const override {
    return "`if` on tensor data (predicated with `torch.where`)";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    predication::for_each_region_if(
        ctx, [&](NodeId func, NodeId stmt) { check_if(ctx, sink, func, stmt); });
  }

 private:
  void check_if(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId func,
                NodeId stmt) const {
    const ast::Tree& tree = ctx.tree();
    const NodeId test = tree.child(stmt, GM_F(If, test));
    const auto body = tree.children(stmt, GM_F(If, body));
    const auto orelse = tree.children(stmt, GM_F(If, orelse));
    if (!body.empty() && tree.kind(body.back()) == NodeKind::Raise) return;  // GM301's guards
    if (has_break(tree, body) || has_break(tree, orelse)) return;  // GM407
    if (predication::return_pair(ctx, stmt)) return;  // GM103
    if (predication::tail_pair(ctx, stmt)) return;     // GM104
    if (predication::range_compare(ctx, test)) return;  // GM105

    // A leading run of Python-valued `and` operands stays a real `if`.
    std::vector<NodeId> statics, data;
    if (tree.kind(test) == NodeKind::BoolOp &&
        static_cast<NodeKind>(tree.field(test, GM_F(BoolOp, op)).a) == NodeKind::And) {
      for (NodeId v : tree.children(test, GM_F(BoolOp, values))) {
        if (data.empty() && predication::static_value(ctx, v) &&
            !predication::tensor_evidence(ctx, v))
          statics.push_back(v);
        else
          data.push_back(v);
      }
    } else {
      data.push_back(test);
    }
    bool evidence = false;
    for (NodeId v : data) evidence = evidence || predication::tensor_evidence(ctx, v);
    if (!evidence || data.empty()) return;

    const std::uint32_t begin = tree.at(data.front()).begin, end = tree.at(data.back()).end;
    auto& d = sink.report(begin, end, "`if` on tensor data breaks the graph");
    d.why =
        "Python must know which branch to run, so Dynamo needs the tensor's value: "
        "Data-dependent branching (GB0170); it ends the graph at the `if` (inside a loop it "
        "skips the whole frame)";
    std::string why;
    if (!fixable(ctx, func, stmt, statics, data, d, why)) d.declined_reason = why;
  }

  // `if c: _graphmend_rt.warn(...)` -> `_graphmend_rt.warn_if(c, ...)` (and
  // print/log). nullopt when the branch is not made of such calls (the
  // caller goes on); false with `why` when it is but cannot be rewritten.
  std::optional<bool> deferred_branch(const lint::RuleContext& ctx, NodeId func, NodeId stmt,
                                      std::span<const NodeId> statics, std::span<const NodeId> data,
                                      lint::Diagnostic& d, std::string& why) const {
    const ast::Tree& tree = ctx.tree();
    const auto body = tree.children(stmt, GM_F(If, body));
    std::vector<NodeId> calls;
    bool all_deferred = true;
    for (NodeId s : body) {
      if (tree.kind(s) == NodeKind::Pass) continue;
      if (tree.kind(s) != NodeKind::Expr ||
          tree.kind(tree.child(s, GM_F(Expr, value))) != NodeKind::Call)
        return std::nullopt;  // not only calls for effect
      all_deferred = all_deferred && !runtime_effect(ctx, s).empty();
      calls.push_back(s);
    }
    if (calls.empty()) return std::nullopt;
    if (!all_deferred) {
      why =
          "the branch calls something for its effect; when GM201-GM203 defer it (print, "
          "logging, warnings.warn) `graphmend fix` then makes this `if` a `*_if` call";
      return false;
    }
    auto cond = condition(ctx, data, &why);
    if (!cond) return false;
    // The arguments now run whatever the condition says; a formatted
    // message (an f-string, `str.format`, `%`, or the `fmt` GM201-GM203
    // wrote) is passed as `message(...)`, built only when the call is made,
    // so only the values it formats run.
    std::vector<NodeId> values;
    std::vector<std::pair<NodeId, runtime_rewrite::FormatCall>> lazy;
    for (NodeId s : calls) {
      const NodeId call = tree.child(s, GM_F(Expr, value));
      for (NodeId a : tree.children(call, GM_F(Call, args))) {
        std::vector<NodeId> formatted;
        if (auto text = runtime_rewrite::lazy_message(ctx, a, formatted)) {
          lazy.emplace_back(a, std::move(*text));
          values.insert(values.end(), formatted.begin(), formatted.end());
        } else {
          values.push_back(a);
        }
      }
      for (NodeId k : tree.children(call, GM_F(Call, keywords)))
        values.push_back(tree.child(k, GM_F(keyword, value)));
    }
    if (!predication::evaluable_unconditionally(ctx, values, data, stmt, why)) {
      why = "the call's arguments would now always be evaluated: " + why;
      return false;
    }
    std::vector<std::string> lines;
    std::string indent;
    if (!statics.empty()) {
      lines.push_back("if " + predication::join_and(ctx, statics) + ":");
      indent = "    ";
    }
    std::string cond_ref = *cond;
    if (calls.size() > 1) {
      cond_ref = predication::fresh_name(ctx, func, "_graphmend_cond");
      lines.push_back(indent + cond_ref + " = " + *cond);
    }
    const predication::Wrap wrap = predication::wrap_of(ctx, stmt);
    // Each `*_if` call stands for the call it replaces, so the line a
    // deferred warning or log record reports (the call's) maps to the
    // original call's line under the import hook, not to the `if`'s.
    std::vector<std::pair<std::string, std::uint32_t>> landmarks;
    for (NodeId s : calls) {
      const NodeId call = tree.child(s, GM_F(Expr, value));
      const auto paren = runtime_rewrite::open_paren(ctx, call);
      if (!paren) {
        why = "the call's `(` does not follow the callee";
        return false;
      }
      const std::string head = std::string(runtime_rewrite::kRuntimeAlias) + "." +
                               std::string(runtime_effect(ctx, s)) + "_if(";
      landmarks.emplace_back(head, tree.at(s).begin);
      std::vector<predication::Doc> args{predication::Doc::atom(cond_ref)};
      bool rewritten = false;
      for (NodeId a : tree.children(call, GM_F(Call, args))) {
        auto it =
            std::find_if(lazy.begin(), lazy.end(), [&](const auto& l) { return l.first == a; });
        if (it == lazy.end()) {
          args.push_back(predication::source_doc(ctx, a));
          continue;
        }
        std::vector<predication::Doc> parts;
        for (const std::string& t : it->second.args) parts.push_back(predication::Doc::atom(t));
        args.push_back(predication::Doc::call_of(it->second.head, std::move(parts)));
        rewritten = true;
      }
      for (NodeId k : tree.children(call, GM_F(Call, keywords)))
        args.push_back(predication::source_doc(ctx, k));
      if (edits::comments_in(ctx.file(), *paren, tree.at(call).end).empty()) {
        auto l =
            predication::layout(wrap, indent, "", predication::Doc::call_of(head, std::move(args)));
        lines.insert(lines.end(), l.begin(), l.end());
        continue;
      }
      // Comments among the arguments: the argument list as written.
      if (rewritten) {
        why = "a comment among the arguments of a message that would have to be rewritten";
        return false;
      }
      const bool has_args = !tree.children(call, GM_F(Call, args)).empty() ||
                            !tree.children(call, GM_F(Call, keywords)).empty();
      const std::uint32_t ce = tree.at(call).end;
      std::string text = indent + head + cond_ref;
      if (has_args) text += ", ";
      std::string_view rest = ctx.text().substr(*paren + 1, ce - (*paren + 1));
      const std::size_t skip = rest.find_first_not_of(" \t");
      text += has_args ? std::string(rest.substr(skip == std::string_view::npos ? 0 : skip))
                       : std::string(rest);
      lines.push_back(std::move(text));
    }
    return replace_in_place(
        ctx, stmt, std::move(lines),
        "Decide the deferred side effect after the graph (`_graphmend_rt.*_if`)", d, &why, true,
        landmarks);
  }

  bool fixable(const lint::RuleContext& ctx, NodeId func, NodeId stmt,
               std::span<const NodeId> statics, std::span<const NodeId> data, lint::Diagnostic& d,
               std::string& why) const {
    const ast::Tree& tree = ctx.tree();
    const auto orelse = tree.children(stmt, GM_F(If, orelse));
    if (!func) return why = "not inside a function", false;
    // An `elif` chain is predicated from its last `elif` up, one link per
    // round of the fix loop, so only short chains are: the rounds stay
    // bounded (a 20,000-link chain would take 20,000 rounds) and so does the
    // depth of the nested where.
    if (const std::size_t links = chain_links(ctx, stmt); links > kMaxElifLinks)
      return why = "an `elif` chain of more than " + std::to_string(links - 1) +
                   " links (at most " + std::to_string(kMaxElifLinks) +
                   " are predicated, one link per round)",
             false;
    // This test waits until the `elif` after it is predicated.
    if (orelse.size() == 1 && tree.kind(orelse[0]) == NodeKind::If && is_elif(ctx, orelse[0]))
      return why = "the `elif` on line " +
                   std::to_string(predication::line_of(ctx, tree.at(orelse[0]).begin)) +
                   " after it is not predicated (an `elif` chain is predicated from its last link "
                   "up)",
             false;
    if (!statics.empty() && !orelse.empty())
      return why = "Python-valued `and` operands together with an `else` branch", false;

    // An `if` whose branch only makes deferred side effects (GM201-GM203
    // rewrote them to `_graphmend_rt.print/log/warn`): their `*_if` forms.
    if (orelse.empty()) {
      std::optional<bool> deferred = deferred_branch(ctx, func, stmt, statics, data, d, why);
      if (deferred) return *deferred;
    }

    // The condition as one expression. A lone `not c` swaps the arms instead
    // of becoming `~c` (which needs c proven a bool tensor).
    bool negate = false;
    std::vector<NodeId> data_v(data.begin(), data.end());
    if (data_v.size() == 1) data_v[0] = predication::strip_not(tree, data_v[0], &negate);
    data = data_v;
    auto lowered_cond = condition(ctx, data, &why);
    if (!lowered_cond) return false;
    const std::string cond = *lowered_cond;

    std::string err;
    auto then_a = assignments(ctx, tree.children(stmt, GM_F(If, body)), &err);
    if (!then_a) return why = err, false;
    auto else_a = assignments(ctx, orelse, &err);
    if (!else_a) return why = err, false;

    predication::Purity purity;
    std::set<std::string> cond_tensors;
    for (NodeId v : data) cond_tensors.merge(predication::tensor_names_of(ctx, v));
    for (const auto* br : {&*then_a, &*else_a}) {
      purity.tensor_names = cond_tensors;
      for (const Assignment& a : *br) {
        predication::check_pure_total(ctx, a.value, purity);
        if (predication::known_tensor(ctx, a.value, purity))
          purity.tensor_names.insert(a.name);
        else
          purity.tensor_names.erase(a.name);
      }
    }
    if (!purity.ok) return why = "the branch would now always run: " + purity.why, false;

    const std::uint32_t se = tree.at(stmt).end;
    std::uint32_t eb = se, ee = se;  // the else branch's range
    if (!orelse.empty()) eb = tree.at(orelse.front()).begin, ee = tree.at(orelse.back()).end;

    std::set<std::string> assigned;
    for (const auto* br : {&*then_a, &*else_a})
      for (const Assignment& a : *br) assigned.insert(a.name);
    for (const std::string& n : assigned)
      if (predication::declared_nonlocal(ctx, func, n))
        return why = "`" + n + "` is declared global or nonlocal", false;

    // Hoist the condition when it is needed twice or reads an assigned name.
    bool reads_assigned = false;
    for (NodeId v : data)
      for (const std::string& n : predication::names_read(ctx, v))
        reads_assigned = reads_assigned || assigned.count(n) > 0;

    struct Out {
      std::string name;
      std::string spelling;  // the user's bytes for the name (never the NFKC form)
      NodeId value;
      int arm;  // 0 plain, 1 where(c, v, n), 2 where(c, n, v)
    };
    std::vector<Out> out;
    std::set<std::string> definite, merged;
    auto is_definite = [&](const std::string& n) {
      return definite.count(n) || predication::bound_before(ctx, func, stmt, n);
    };
    auto binds = [](const std::vector<Assignment>& branch, const std::string& n) {
      for (const Assignment& a : branch)
        if (a.name == n) return true;
      return false;
    };
    // Loads of n in the else branch before it binds n there (its own value
    // expression included).
    auto else_reads_before_bind = [&](const std::string& n) {
      std::uint32_t limit = ee;
      for (const Assignment& a : *else_a)
        if (a.name == n) {
          limit = tree.at(a.value).end;
          break;
        }
      return !orelse.empty() && predication::read_inside(ctx, func, n, eb, limit);
    };
    for (const Assignment& a : *then_a) {
      const bool live = predication::live_after(ctx, func, stmt, a.name);
      const bool read_in_else = else_reads_before_bind(a.name);
      if (!live && !read_in_else) {
        out.push_back({a.name, a.spelling, a.value, 0});
      } else if (is_definite(a.name)) {
        out.push_back({a.name, a.spelling, a.value, 1});
        merged.insert(a.name);
      } else if (binds(*else_a, a.name) && !read_in_else) {
        out.push_back({a.name, a.spelling, a.value, 0});
      } else {
        return why = "`" + a.name + "` is bound only when the branch runs and is used after it",
               false;
      }
      definite.insert(a.name);
    }
    for (const Assignment& a : *else_a) {
      const bool live = predication::live_after(ctx, func, stmt, a.name);
      if (!live) {
        out.push_back({a.name, a.spelling, a.value, 0});
      } else if (is_definite(a.name)) {
        out.push_back({a.name, a.spelling, a.value, 2});
        merged.insert(a.name);
      } else {
        return why = "`" + a.name + "` is bound only when the branch runs and is used after it",
               false;
      }
      definite.insert(a.name);
    }
    // A name the `if` branch binds first and the `else` branch reads before
    // rebinding: the original raised UnboundLocalError there.
    for (const Assignment& a : *then_a)
      if (!predication::bound_before(ctx, func, stmt, a.name) && else_reads_before_bind(a.name))
        return why = "the `else` branch reads `" + a.name + "`, which only the `if` branch binds",
               false;

    // Aliasing: `where` returns a new tensor.
    std::set<std::string> alias_names = merged;
    for (const auto* br : {&*then_a, &*else_a})
      for (const Assignment& a : *br)
        if (merged.count(a.name))
          for (const std::string& n : predication::names_read(ctx, a.value)) alias_names.insert(n);
    for (const std::string& n : alias_names) {
      const std::string use = predication::in_place_use(ctx, func, n);
      if (!use.empty())
        return why = "`" + n + "` is updated in place (" + use +
                     "); `where` would return a new tensor and change aliasing",
               false;
    }

    // Python values (flags, None, numbers) are not predicated: `where` would
    // only ever take its fallback there.
    for (const Out& o : out) {
      if (o.arm == 0) continue;
      const sema::TensorFact f = ctx.model()->fact(o.value);
      if (tree.kind(o.value) == NodeKind::Constant || f.kind == sema::TensorKind::NotTensor)
        return why = "`" + o.name + "` is bound to a Python value (`" +
                     std::string(ctx.text_of(o.value)) + "`), not a tensor",
               false;
    }
    // A name the test has just found None keeps None in the arm that does
    // not bind it: the same fallback.
    for (const Out& o : out)
      if (((o.arm == 1 && !binds(*else_a, o.name)) || (o.arm == 2 && !binds(*then_a, o.name))) &&
          predication::none_before(ctx, func, stmt, o.name))
        return why = "`" + o.name + "` is None before the `if` (the enclosing `" + o.name +
                     " is None` test), not a tensor",
               false;
    std::size_t wheres = 0;
    for (const Out& o : out) wheres += o.arm != 0;
    if (wheres == 0) return why = "no name assigned in the branches is used after the `if`", false;

    std::vector<std::string> lines;
    std::string indent;
    if (!statics.empty()) {
      lines.push_back("if " + predication::join_and(ctx, statics) + ":");
      indent = "    ";
    }
    const std::vector<Assignment>* branches[2] = {&*then_a, &*else_a};
    if (auto plan = plan_merge(ctx, func, stmt, branches, merged, data)) {
      // The replaced range takes the last line's comment along.
      const std::uint32_t sb = tree.at(stmt).begin;
      std::uint32_t end = tree.at(stmt).end;
      if (edits::only_trivia_after(ctx.text(), end)) end = edits::line_end(ctx.text(), end);
      std::vector<NodeId> stmts;
      for (const auto* br : branches)
        for (const Assignment& a : *br) stmts.push_back(a.stmt);
      const predication::Comments comments = predication::attach_comments(ctx, sb, end, stmts);
      std::vector<std::string> out_lines;
      for (const std::string& c : comments.loose) out_lines.push_back(c);
      out_lines.insert(out_lines.end(), lines.begin(), lines.end());
      const predication::Wrap wrap = predication::wrap_of(ctx, stmt);
      auto emit = [&](std::span<const NodeId> from, std::vector<std::string> l) {
        std::string trail;
        for (NodeId s : from) {
          if (!s) continue;
          if (const auto* a = comments.above_of(s))
            for (const std::string& c : *a) out_lines.push_back(indent + c);
          if (const auto* t = comments.trailing_of(s))
            for (const std::string& c : *t) trail += "  " + c;
        }
        l.back() += trail;
        out_lines.insert(out_lines.end(), l.begin(), l.end());
      };
      std::string cond_ref = cond;
      if (plan->wheres.size() > 1 || plan->hoist) {
        cond_ref = predication::fresh_name(ctx, func, "_graphmend_cond");
        auto l = predication::layout(wrap, indent, cond_ref + " = ", predication::Doc::atom(cond));
        out_lines.insert(out_lines.end(), l.begin(), l.end());
      }
      for (NodeId s : plan->plain) {
        const NodeId one[1] = {s};
        const auto& n = tree.at(s);
        emit(one,
             predication::layout(wrap, indent, "", predication::range_doc(ctx, n.begin, n.end)));
      }
      for (const Merge::Where& w : plan->wheres) {
        predication::Doc arm[2];
        for (int b = 0; b < 2; ++b)
          arm[b] = w.arm[b] ? arm_doc(ctx, w.arm[b]) : predication::Doc::atom(w.spelling);
        if (negate) std::swap(arm[0], arm[1]);
        const predication::Doc where =
            predication::where_doc(predication::Doc::atom(cond_ref), std::move(arm[0]),
                                   std::move(arm[1]), purity.grad_safe);
        emit(w.stmt, predication::layout(wrap, indent, w.spelling + " = ", where));
      }
      const auto own = edits::statement_indentation(ctx.text(), sb);
      if (!own) return why = "the `if` does not start its line", false;
      if (is_elif(ctx, stmt)) out_lines = as_else_block(std::move(out_lines));
      auto edit = edits::Edit::replace(sb, end, edits::render_lines(out_lines, *own, ctx.style()));
      // What the new text copies keeps its own lines and columns.
      std::vector<NodeId> copies(statics.begin(), statics.end());
      copies.insert(copies.end(), data.begin(), data.end());
      copies.insert(copies.end(), plan->plain.begin(), plan->plain.end());
      for (const Merge::Where& w : plan->wheres)
        for (int b : negate ? std::array{1, 0} : std::array{0, 1})
          if (w.arm[b]) copies.push_back(w.arm[b]);
      predication::anchor_copies(ctx, edit, copies);
      runtime_rewrite::attach_fix(ctx, d, "Predicate the branch with `_graphmend_rt.where`",
                                  {std::move(edit)});
      return true;
    }
    // With one `where`, the condition can stay inline unless a statement
    // emitted before it rebinds a name the condition reads.
    bool rebound_before_where = false;
    if (reads_assigned) {
      std::set<std::string> cond_names;
      for (NodeId v : data)
        for (const std::string& n : predication::names_read(ctx, v)) cond_names.insert(n);
      for (const Out& o : out) {
        if (o.arm != 0) break;
        rebound_before_where = rebound_before_where || cond_names.count(o.name) > 0;
      }
    }
    std::string cond_ref = cond;
    if (wheres > 1 || rebound_before_where) {
      cond_ref = predication::fresh_name(ctx, func, "_graphmend_cond");
      lines.push_back(indent + cond_ref + " = " + cond);
    }
    for (const Out& o : out) {
      const std::string v(ctx.text_of(o.value));
      const int arm = negate && o.arm ? 3 - o.arm : o.arm;
      std::string rhs = arm == 0 ? v
                        : arm == 1
                            ? predication::where_call(cond_ref, v, o.spelling, purity.grad_safe)
                            : predication::where_call(cond_ref, o.spelling, v, purity.grad_safe);
      lines.push_back(indent + o.spelling + " = " + rhs);
    }
    std::vector<NodeId> copies(statics.begin(), statics.end());
    copies.insert(copies.end(), data.begin(), data.end());
    for (const Out& o : out) copies.push_back(o.value);
    return replace_in_place(ctx, stmt, std::move(lines),
                            "Predicate the branch with `_graphmend_rt.where`", d, &why, true, {},
                            copies);
  }
};

}  // namespace

const lint::Rule& gm101_data_dependent_if() {
  static const DataDependentIf rule;
  return rule;
}

}  // namespace gm::rules

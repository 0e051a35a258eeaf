// GM105: a branch decided by comparing a random draw with a Python threshold
// (LayerDrop: `if torch.rand([]) < self.layerdrop: continue`) -> the
// comparison guarded by the condition on the threshold under which the
// draw's value range makes it constant, so Dynamo folds the branch.
#include <optional>
#include <string>
#include <vector>

#include "edits/edit.h"
#include "edits/tree_query.h"
#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "semantic/value_range.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM105 range-constant-compare

## What it detects
Inside a compiled region, a comparison `p < q`, `p <= q`, `p > q`,
`p >= q` (either operand order) that decides a branch, where `p` has a
value range proven by the op that produced it and `q` is a Python
threshold (a name or attribute, not a tensor). The ranges come from the
semantic layer's value-range table (`semantic/value_range.h`):
`torch.rand(...)` and `torch.rand_like(x)` (floating dtypes) are in [0, 1],
`random.random()` in [0, 1), `random.uniform(a, b)` with number literals in
[min(a, b), max(a, b)]. `p` is the draw itself or a local name with exactly
one assignment, from such a draw, and read only by comparisons.

"Decides a branch": the comparison is the test of an `if`, `while`,
conditional expression or `assert`, possibly under `not`/`and`/`or`, or it
is assigned to a local flag whose every read is such a truth value
(`skip = self.training and p < self.config.layerdrop` then
`if not skip or synced_gpus:`). This is LayerDrop in transformers: every
encoder and decoder loop of the BART family, Whisper, OPT, Speech2Text,
wav2vec2/HuBERT/WavLM, SpeechT5, NLLB-MoE, MusicGen, ...

## Why Dynamo breaks there
`torch.rand([]) < self.layerdrop` is a 0-d tensor, so Python needs its value
to pick the branch: "Data-dependent branching" (GB0170, attempted to jump
with TensorVariable; a `random.random()` draw is a graph input,
UnspecializedPythonVariable, and breaks the same way). Inside the layer loop
Dynamo cannot resume after the break and gives up on the whole frame
(graph break in loop): in train mode the encoder or decoder runs eagerly.

## The rewrite
The draw has a range, so for some thresholds the comparison has one value
for every draw. With `p` in [0, 1] (lower end 0, included):

| comparison | constant when | value | mended |
|---|---|---|---|
| `p < q`  | q <= 0 | False | `_graphmend_rt.above(q, 0) and p < q` |
| `p >= q` | q <= 0 | True  | `_graphmend_rt.at_most(q, 0) or p >= q` |
| `p <= q` | q < 0 only (p can be exactly 0.0) | False | declined |
| `p > q`  | q < 0 only (p can be exactly 0.0) | True  | declined |

`q > p` is `p < q`, `q <= p` is `p >= q`, and so on. For a lower end that
is excluded (`(lo, hi)`), `p <= q` and `p > q` are constant at q <= lo too
and are guarded the same way. Only the lower end is guarded: it is where
a probability threshold sits when the feature is off (LayerDrop's default
in most configs is 0.0); a threshold at or beyond the upper end (dropping
every layer) keeps the break.

`_graphmend_rt.above(q, b)` is `q > b` when `q` is a Python `int`, `float`
or `bool` (exactly those types), and `True` otherwise; `at_most(q, b)` is
`q <= b` for those types and `False` otherwise (docs/runtime.md). So the
mended test is, for every value of `q`:

| q | `above(q, 0) and p < q` | original `p < q` |
|---|---|---|
| number > 0 | `p < q` (the same object) | `p < q` |
| number <= 0, `-inf` | `False` | always false |
| `nan` | `False` | false |
| anything else (a tensor, numpy scalar, ...) | `p < q` (the same object) | `p < q` |

| q | `at_most(q, 0) or p >= q` | original `p >= q` |
|---|---|---|
| number <= 0, `-inf` | `True` | always true |
| number > 0, `nan` | `p >= q` | `p >= q` |
| anything else | `p >= q` | `p >= q` |

The only difference is the type of the constant: Python `False`/`True` where
the original had a 0-d bool tensor of that value, which is why the
comparison must be used only as a truth value. Dynamo reads `q` (a module or
config attribute) as a constant, folds the guard, and with q <= 0 never
sees the tensor comparison: one graph. The draw itself still runs (it is
bound to `p` before the comparison), so the RNG stream, and with it every
later dropout mask, is unchanged; with q > 0 the same comparison runs, the
same layers are skipped.

    dropout_probability = torch.rand([])
    if dropout_probability < self.layerdrop:  # skip the layer
->
    dropout_probability = torch.rand([])
    if _graphmend_rt.above(self.layerdrop, 0) and dropout_probability < self.layerdrop:  # skip the layer

Parentheses are added where `and`/`or` would bind differently (under `not`,
an `or` guard inside `and`); a comparison already in parentheses gets the
guard inside them. The fix is an insertion in the test: lines and comments
stay where they were.

## With a positive threshold
The branch stays data-dependent, and so does the break: with
`layerdrop > 0` each layer is skipped with that probability, decided by the
draw. Predicating the whole layer instead (running it always and selecting
its output with `torch.where`) would change the work done and the RNG
stream (the skipped layer's dropout masks would now be drawn), so
graphmend offers no such fix; `check` says so in the diagnostic.

## Safe and unsafe
The fix is **safe**: the mended test has the original's truth value for
every draw and every threshold, evaluates the same draw, and the threshold
is a name or attribute chain (read once more; attribute reads are assumed
free of side effects, as everywhere in graphmend).

## When it declines
- the comparison is `p <= q` or `p > q` and the range includes its lower
  end (`torch.rand` can return exactly 0.0, so `p <= 0` is not always false
  and `p > 0` not always true);
- the draw is the comparison's own operand (`torch.rand([]) < q`): the guard
  would skip the draw when it folds and change the RNG stream (bind it to a
  name first);
- the drawn name may be unbound at the comparison (the original would raise
  there), the threshold is not a name or attribute chain, or is proven a
  tensor;
- a flag holding the comparison is read other than as a truth value
  (stored, returned, passed, combined with `&`), or is `global`/`nonlocal`;
- `_graphmend_rt` is bound to something else in the file.

A `numpy.random` draw is not in the table: Dynamo breaks at the draw itself
(GB0033, `aten._local_scalar_dense`), so no guard on the comparison helps
(wav2vec2's adapter layers, VITS). A drawn name with an assignment from
anything else, a read other than a comparison
(`p.mul_(2)`, `f(p)`) or a `dtype=` that is not floating has no proven range
and is not reported by this rule.

## Example
Before:

    def forward(self, x):
        for layer in self.layers:
            p = torch.rand([])
            skip = self.training and p < self.config.layerdrop
            if not skip:
                x = layer(x)
        return x

After:

    def forward(self, x):
        for layer in self.layers:
            p = torch.rand([])
            skip = self.training and _graphmend_rt.above(self.config.layerdrop, 0) and p < self.config.layerdrop
            if not skip:
                x = layer(x)
        return x
)md";

bool is_not(const ast::Tree& tree, NodeId n) {
  return tree.kind(n) == NodeKind::UnaryOp &&
         static_cast<NodeKind>(tree.field(n, GM_F(UnaryOp, op)).a) == NodeKind::Not;
}

NodeKind boolop(const ast::Tree& tree, NodeId n) {
  return static_cast<NodeKind>(tree.field(n, GM_F(BoolOp, op)).a);
}

// Where the value of `e` goes, through `not`/`and`/`or`.
enum class Use { Test, Flag, Value };
struct Context {
  Use use = Use::Value;
  NodeId top;     // the outermost of e's not/and/or chain
  NodeId holder;  // the If/While/IfExp/Assert, or the Assign (Flag)
};
Context context_of(const sema::Model& m, NodeId e) {
  const ast::Tree& tree = m.tree();
  NodeId cur = e;
  for (NodeId p = m.parent(cur); p; p = m.parent(cur)) {
    if (tree.kind(p) == NodeKind::BoolOp || is_not(tree, p)) {
      cur = p;
      continue;
    }
    Context c{Use::Value, cur, p};
    switch (tree.kind(p)) {
      case NodeKind::If:
        if (tree.child(p, GM_F(If, test)) == cur) c.use = Use::Test;
        break;
      case NodeKind::While:
        if (tree.child(p, GM_F(While, test)) == cur) c.use = Use::Test;
        break;
      case NodeKind::IfExp:
        if (tree.child(p, GM_F(IfExp, test)) == cur) c.use = Use::Test;
        break;
      case NodeKind::Assert:
        if (tree.child(p, GM_F(Assert, test)) == cur) c.use = Use::Test;
        break;
      case NodeKind::Assign: {
        const auto ts = tree.children(p, GM_F(Assign, targets));
        if (ts.size() == 1 && tree.kind(ts[0]) == NodeKind::Name &&
            tree.child(p, GM_F(Assign, value)) == cur)
          c.use = Use::Flag;
        break;
      }
      default: break;
    }
    return c;
  }
  return {Use::Value, cur, NodeId{}};
}

// Loads of the local `name` in `func` (nested functions included): how many
// are truth values, and the first that is not.
struct FlagReads {
  int tests = 0;
  NodeId other;
};
void flag_reads(const lint::RuleContext& ctx, NodeId n, std::string_view name,
                const sema::Binding* local, FlagReads& r) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  if (tree.kind(n) == NodeKind::Name &&
      static_cast<NodeKind>(tree.field(n, GM_F(Name, ctx)).a) == NodeKind::Load &&
      tree.text(tree.field(n, GM_F(Name, id))) == name) {
    const sema::Binding* b = m.resolve(n);
    if (b && b->scope == local->scope) {
      if (context_of(m, n).use == Use::Test)
        ++r.tests;
      else if (!r.other)
        r.other = n;
    }
  }
  edits::for_each_child(tree, n, [&](NodeId c) { flag_reads(ctx, c, name, local, r); });
}

// `name` or `a.b.c` (evaluating it again runs no code beyond attribute lookup).
bool name_or_attribute(const ast::Tree& tree, NodeId e) {
  if (tree.kind(e) == NodeKind::Name) return true;
  return tree.kind(e) == NodeKind::Attribute &&
         name_or_attribute(tree, tree.child(e, GM_F(Attribute, value)));
}

// The next significant character before `at` / from `at` (whitespace and
// line continuations skipped).
char char_before(std::string_view text, std::uint32_t at) {
  while (at > 0) {
    const char c = text[--at];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') return c;
  }
  return 0;
}
char char_from(std::string_view text, std::uint32_t at) {
  for (; at < text.size(); ++at) {
    const char c = text[at];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') return c;
  }
  return 0;
}

NodeKind flipped(NodeKind op) {
  switch (op) {
    case NodeKind::Lt: return NodeKind::Gt;
    case NodeKind::LtE: return NodeKind::GtE;
    case NodeKind::Gt: return NodeKind::Lt;
    default: return NodeKind::LtE;  // GtE
  }
}

// `_graphmend_rt.above(q, ...) and cmp` / `_graphmend_rt.at_most(q, ...) or
// cmp`: mended already.
bool already_guarded(const lint::RuleContext& ctx, NodeId cmp, NodeId q) {
  const ast::Tree& tree = ctx.tree();
  const NodeId parent = ctx.model()->parent(cmp);
  if (!parent || tree.kind(parent) != NodeKind::BoolOp) return false;
  const auto values = tree.children(parent, GM_F(BoolOp, values));
  NodeId prev;
  for (NodeId v : values) {
    if (v == cmp) break;
    prev = v;
  }
  if (!prev || tree.kind(prev) != NodeKind::Call) return false;
  const auto name = ctx.model()->qualified_name(tree.child(prev, GM_F(Call, func)));
  const std::string module(runtime_rewrite::kRuntimeModule);
  const bool above = name && *name == module + ".above",
             at_most = name && *name == module + ".at_most";
  if (!(above && boolop(tree, parent) == NodeKind::And) &&
      !(at_most && boolop(tree, parent) == NodeKind::Or))
    return false;
  const auto args = tree.children(prev, GM_F(Call, args));
  return !args.empty() && ctx.text_of(args[0]) == ctx.text_of(q);
}

class RangeConstantCompare final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM105"; }
  std::string_view name() const override { return "range-constant-compare"; }
  std::string_view summary() const override {
    return "a branch on a random draw compared with a threshold (LayerDrop): guarded by the "
           "threshold values for which the draw's range makes it constant";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    matching::for_each_in_region(ctx, [&](NodeId n) {
      if (ctx.tree().kind(n) == NodeKind::Compare) check_compare(ctx, sink, n);
    });
  }

 private:
  void check_compare(const lint::RuleContext& ctx, lint::DiagnosticSink& sink, NodeId cmp) const {
    const ast::Tree& tree = ctx.tree();
    const sema::Model& m = *ctx.model();
    const auto ops = tree.raw_list(cmp, GM_F(Compare, ops));
    const auto comps = tree.children(cmp, GM_F(Compare, comparators));
    if (ops.size() != 1 || comps.size() != 1) return;
    NodeKind op = static_cast<NodeKind>(ops[0].index);
    if (op != NodeKind::Lt && op != NodeKind::LtE && op != NodeKind::Gt && op != NodeKind::GtE)
      return;
    NodeId p = tree.child(cmp, GM_F(Compare, left)), q = comps[0];
    auto range = sema::value_range(m, p);
    if (!range) {
      range = sema::value_range(m, q);
      if (!range || sema::value_range(m, p)) return;
      std::swap(p, q);
      op = flipped(op);  // now `p op q`
    } else if (sema::value_range(m, q)) {
      return;
    }
    if (already_guarded(ctx, cmp, q)) return;
    const Context use = context_of(m, cmp);
    const NodeId func = predication::enclosing_function(m, cmp);
    std::string why;
    const sema::Binding* flag = nullptr;
    std::string flag_name;
    if (use.use == Use::Value) return;  // a value, not a branch: no break here
    if (use.use == Use::Flag) {
      const NodeId target = tree.children(use.holder, GM_F(Assign, targets))[0];
      flag_name = std::string(tree.text(tree.field(target, GM_F(Name, id))));
      flag = m.resolve(target);
      FlagReads reads;
      if (flag && func) flag_reads(ctx, func, flag_name, flag, reads);
      if (reads.tests == 0) return;  // never decides a branch
      if (!flag || !func || m.scope(flag->scope).kind != sema::ScopeKind::Function ||
          predication::declared_nonlocal(ctx, func, flag_name))
        why = "the flag `" + flag_name + "` is not a local of the function";
      else if (reads.other)
        why = "the flag `" + flag_name + "` is also read as a value" +
              predication::line_suffix(ctx, reads.other) +
              ": the guard makes it a Python bool where it was a tensor, so it may only be "
              "used as a truth value";
    }

    const std::string draw(ctx.text_of(range->draw));
    auto& d = sink.report(tree.at(cmp).begin, tree.at(cmp).end,
                          "a branch on a random draw breaks the graph");
    d.why = std::string(range->tensor
                            ? "the comparison is a 0-d tensor, so Python needs its value to "
                              "pick the branch: Data-dependent branching (GB0170); "
                            : "Dynamo makes the draw a graph input, so Python needs its value "
                              "to pick the branch: Data-dependent branching (GB0170); ") +
            "inside a loop it skips the whole frame. `" + draw + "` is in " +
            (range->lo.closed ? "[" : "(") + range->lo.text + ", " + range->hi.text +
            (range->hi.closed ? "]" : ")") +
            "; with a threshold at or beyond the lower end the branch is constant and folds. "
            "With a threshold inside the range the branch is decided by the draw and the "
            "break stays: predicating the whole layer would change the RNG stream and the work "
            "done";
    if (!why.empty()) return void(d.declined_reason = why);

    // Which constant case contains the lower end.
    const bool lo_in = range->lo.closed;
    std::string guard, join;
    if (op == NodeKind::Lt || (op == NodeKind::LtE && !lo_in)) {
      guard = "above";
      join = " and ";
    } else if (op == NodeKind::GtE || (op == NodeKind::Gt && !lo_in)) {
      guard = "at_most";
      join = " or ";
    } else {
      d.declined_reason = "`" + std::string(ctx.text_of(cmp)) +
                          "` is constant only for a threshold below " + range->lo.text + ": `" +
                          draw + "` can return exactly " + range->lo.text +
                          ", so at the threshold " + range->lo.text + " the draw decides";
      return;
    }
    if (tree.kind(p) != NodeKind::Name) {
      d.declined_reason =
          "the draw is the comparison's own operand: a guard would skip it and "
          "change the RNG stream (bind it to a name first)";
      return;
    }
    if (!name_or_attribute(tree, q)) {
      d.declined_reason = "the threshold `" + std::string(ctx.text_of(q)) +
                          "` is not a name or attribute (the guard evaluates it again)";
      return;
    }
    if (m.fact(q).kind == sema::TensorKind::Tensor) {
      d.declined_reason = "the threshold `" + std::string(ctx.text_of(q)) + "` is a tensor";
      return;
    }
    const NodeId stmt = edits::enclosing_statement(tree, tree.at(cmp).begin);
    const std::string p_name(tree.text(tree.field(p, GM_F(Name, id))));
    if (!func || !stmt || !predication::bound_before(ctx, func, stmt, p_name)) {
      d.declined_reason = "`" + p_name + "` may be unbound at the comparison" +
                          predication::line_suffix(ctx, cmp) +
                          " (the original raises there; the folded guard would not)";
      return;
    }

    // Parentheses: `not (G and c)`, `a and (G or c)`; none when there already.
    const NodeId parent = m.parent(cmp);
    bool paren = is_not(tree, parent) || (join == " or " && tree.kind(parent) == NodeKind::BoolOp &&
                                          boolop(tree, parent) == NodeKind::And);
    const std::uint32_t b = tree.at(cmp).begin, e = tree.at(cmp).end;
    if (paren && char_before(ctx.text(), b) == '(' && char_from(ctx.text(), e) == ')')
      paren = false;
    std::string text = paren ? "(" : "";
    text += std::string(runtime_rewrite::kRuntimeAlias) + "." + guard + "(" +
            std::string(ctx.text_of(q)) + ", " + range->lo.text + ")" + join;
    std::vector<edits::Edit> edits{edits::Edit::insert(b, text)};
    if (paren) edits.push_back(edits::Edit::insert(e, ")"));
    runtime_rewrite::attach_fix(
        ctx, d,
        "Guard the comparison with `_graphmend_rt." + guard + "(" + std::string(ctx.text_of(q)) +
            ", " + range->lo.text +
            ")`: constant for those thresholds, so Dynamo folds the branch (the draw "
            "stays)",
        std::move(edits));
  }
};

}  // namespace

const lint::Rule& gm105_range_constant_compare() {
  static const RangeConstantCompare rule;
  return rule;
}

}  // namespace gm::rules

// GM404: reading `x[mask]` with a boolean tensor mask; a whole reduction of
// the selection becomes one masked reduction over the full tensor, and
// `y[mask] = x[mask]` one `torch.where`.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "edits/tree_query.h"
#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "rules/traps.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM404 bool-mask-index-in-region

## What it detects
Inside a compiled region, a subscript *read* `x[mask]`
whose index is proven to be a boolean tensor (a comparison of tensors,
`torch.isnan(...)`, `~m`, `m1 & m2`, a `torch.BoolTensor` parameter, ...).

## Why Dynamo breaks there
Boolean-mask indexing returns as many elements
as the mask has `True`s: a data-dependent shape. Dynamo (torch 2.13) breaks
with "Dynamic shape operator" (it is `aten.nonzero` underneath).

## Not reported: plain assignment through a mask
`x[mask] = v` traces as
`index_put_` with no break on torch 2.13 and is not reported; the *read*
`x[mask]` on the right of `y[m] = x[m]` still is, and so is the augmented
assignment `x[mask] += v`, which reads `x[mask]` first (it breaks on 2.13).
Masks that are not proven boolean tensors (unknown facts, integer index
tensors, slices) are not reported.

## The rewrite
A masked reduction. When the selection is reduced whole, `x[mask].R()` or
`torch.R(x[mask])` with no other argument, for R one of `sum`, `nansum`,
`prod`, `mean`, `amax`, `amin`, `max`, `min`, `any`, `all`, `count_nonzero`,
the call becomes
`_graphmend_rt.masked_reduce(x, mask, "R")`: eagerly exactly `x[mask].R()`;
while compiling, `x.masked_fill(~mask, fill).R()` over the whole tensor (the
mask padded to `x`'s rank), `fill` being what leaves R unchanged (0, 1,
`False`/`True`, the dtype's lowest or highest value), whenever the runtime can
see at trace time that this is the same tensor (docs/runtime.md, [Masked]):
a bool mask covering `x`'s leading dimensions on its device, and

- `any`, `all`, `count_nonzero` of any real dtype;
- every other R of bool and integer dtypes (integer sums and products wrap
  the same in any order);
- an empty selection of `amax`/`amin`/`max`/`min` raises torch's own error,
  after the graph (hence the same scan as GM301: nothing after the statement
  may change state the error path would expose).

Otherwise the runtime runs the original (its graph break): floating dtypes,
for instance, with the safe fix.

**Safe** for those reductions when `x` is not known to be floating. **Unsafe**
(`exact=False`) for `mean`, and for `sum`, `nansum`, `prod`, `amax`, `amin`,
`max`, `min` of a tensor known to be floating: the full-tensor sum adds the
same numbers in another order, so results may differ in the last bits
(|error| of the order of n·ε·Σ|x|); `amax`/`amin`/`max`/`min` may differ in
the sign of a zero result when both zeros are selected; under autograd only
`sum`, `nansum` and `mean` take the masked form (their gradients are the
original's: 1, or 1/n, at the selected elements).

A masked update. `x[mask] OP= v`, OP one of `+ - * /` and `v` pure, becomes
`_graphmend_rt.masked_update(x, mask, "OP", v)`: while compiling
`x.copy_(torch.where(mask, t, x))` with `t` a clone of `x` updated in place
(one exact operation per element, so each selected element gets the same
value), when `v` is a Python number or a 0-d tensor and the result casts
back to `x`'s dtype; otherwise the original statement. **Safe.**

A masked copy. `y[mask] = x[mask]`, the same mask on both sides, becomes
`_graphmend_rt.masked_copy(y, mask, x)`: eagerly exactly that statement;
while compiling `y.copy_(torch.where(mask, x, y))` (the mask padded to `y`'s
rank), the same values written into the same memory, when the runtime sees
at trace time plain tensors, a bool mask of `y`'s leading shape, `x` of
`y`'s shape and dtype, one device, a contiguous `y` and no autograd;
otherwise the original statement. **Safe**: the original evaluates the mask
twice, the fix once, so `y`, the mask and `x` must be pure (GM101's check).

## When it declines
- the selection is neither reduced whole nor copied through the same mask
  (another use, a reduction with `dim`, `keepdim` or `dtype` arguments, a
  copy through another mask): a fixed-shape rewrite is only equivalent then;
- a masked copy whose target, mask or value is not pure (a call outside the
  pure-op list, a random draw), a masked update whose value is not pure, or
  one with another operator (`//=`, `**=`, ...);
- a comment inside the part of the expression the fix rewrites;
- `amax`/`amin`/`max`/`min` whose error would be deferred past a state change
  (as GM301).

## Example
Before:

    def forward(self, x, lengths: torch.LongTensor):
        valid = lengths > 0
        return x + lengths[valid].sum()

After:

    def forward(self, x, lengths: torch.LongTensor):
        valid = lengths > 0
        return x + _graphmend_rt.masked_reduce(lengths, valid, "sum")
)md";

constexpr std::array<std::string_view, 11> kReductions = {
    "sum", "nansum", "prod", "mean", "amax", "amin", "max", "min", "any", "all", "count_nonzero"};
// Exact on integers only (floating: another summation order, or the sign of
// a zero): the unsafe form when `x` is known to be floating.
bool order_sensitive(std::string_view op) {
  return op != "any" && op != "all" && op != "count_nonzero";
}
// Raise on an empty selection: the runtime defers that error (a trap).
bool raises_when_empty(std::string_view op) {
  return op == "amax" || op == "amin" || op == "max" || op == "min";
}

// A reduction that takes the whole selection `sub` = `x[mask]`.
struct Reduction {
  NodeId call;
  std::string_view op;
  bool method = false;  // `x[mask].R()`, else `torch.R(x[mask])`
};

std::optional<Reduction> whole_reduction(const sema::Model& m, NodeId sub) {
  const auto& tree = m.tree();
  const NodeId p = m.parent(sub);
  if (!p) return std::nullopt;
  auto known = [](std::string_view op) {
    return std::find(kReductions.begin(), kReductions.end(), op) != kReductions.end();
  };
  auto bare = [&](NodeId call, std::size_t nargs) {
    return tree.children(call, GM_F(Call, args)).size() == nargs &&
           tree.children(call, GM_F(Call, keywords)).empty();
  };
  if (tree.kind(p) == NodeKind::Attribute && tree.child(p, GM_F(Attribute, value)) == sub) {
    const std::string_view op = tree.text(tree.field(p, GM_F(Attribute, attr)));
    const NodeId call = m.parent(p);
    if (!known(op) || !call || tree.kind(call) != NodeKind::Call ||
        tree.child(call, GM_F(Call, func)) != p || !bare(call, 0))
      return std::nullopt;
    return Reduction{call, op, true};
  }
  if (tree.kind(p) == NodeKind::Call && bare(p, 1) &&
      tree.children(p, GM_F(Call, args))[0] == sub) {
    const auto q = callee_name(m, p);
    if (!q || !q->starts_with("torch.")) return std::nullopt;
    const std::string_view op = std::string_view(*q).substr(6);
    const auto it = std::find(kReductions.begin(), kReductions.end(), op);
    if (it == kReductions.end()) return std::nullopt;
    return Reduction{p, *it, false};
  }
  return std::nullopt;
}

// The `[` of `x[mask]`: after x, only whitespace, `)`, comments and line
// continuations may come before it.
std::optional<std::uint32_t> open_bracket(const lint::RuleContext& ctx, NodeId sub) {
  const auto& tree = ctx.tree();
  const std::uint32_t stop = tree.at(sub).end;
  const std::uint32_t i = runtime_rewrite::skip_blank(
      ctx.text(), tree.at(tree.child(sub, GM_F(Subscript, value))).end, stop, true);
  if (i < stop && ctx.text()[i] == '[') return i;
  return std::nullopt;
}

// The end of the mask in `x[mask]`, past the parentheses around it.
std::uint32_t mask_end(const lint::RuleContext& ctx, NodeId sub) {
  const auto& tree = ctx.tree();
  const std::string_view text = ctx.text();
  std::uint32_t end = tree.at(tree.child(sub, GM_F(Subscript, slice))).end;
  const std::uint32_t close = tree.at(sub).end - 1;
  for (std::uint32_t i = end; i < close;) {
    const char c = text[i];
    if (c == ')') {
      end = ++i;
    } else if (c == '#') {
      while (i < close && text[i] != '\n' && text[i] != '\r') ++i;
    } else {
      ++i;  // whitespace, line continuations
    }
  }
  return end;
}

bool has_comment(std::string_view text, std::uint32_t begin, std::uint32_t end) {
  return text.substr(begin, end - begin).find('#') != std::string_view::npos;
}

// The edit replacing statement `stmt` with `_graphmend_rt.<fn>(args...)`, the
// arguments copied as the user wrote them.
edits::Edit runtime_call(const lint::RuleContext& ctx, NodeId stmt, std::string_view fn,
                         std::initializer_list<std::string_view> args) {
  std::string call = std::string(runtime_rewrite::kRuntimeAlias) + "." + std::string(fn) + "(";
  for (std::string_view a : args) {
    if (call.back() != '(') call += ", ";
    call += a;
  }
  const auto& r = ctx.tree().at(stmt);
  return edits::Edit::replace(r.begin, r.end, call + ")");
}

NodeId statement_of(const sema::Model& m, NodeId n) {
  while (n && !edits::is_statement(m.tree(), n)) n = m.parent(n);
  return n;
}

// `y[mask] = x[mask]`: the assignment whose value is the read `sub`, when
// its target indexes with the same mask (the same text). NodeId{} otherwise.
NodeId masked_copy(const lint::RuleContext& ctx, NodeId sub) {
  const sema::Model& m = *ctx.model();
  const auto& tree = ctx.tree();
  const NodeId stmt = m.parent(sub);
  if (!stmt || tree.kind(stmt) != NodeKind::Assign || tree.child(stmt, GM_F(Assign, value)) != sub)
    return {};
  const auto targets = tree.children(stmt, GM_F(Assign, targets));
  if (targets.size() != 1 || tree.kind(targets[0]) != NodeKind::Subscript) return {};
  auto squeezed = [&](NodeId n) {
    std::string out;
    for (char c : ctx.text_of(n))
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') out += c;
    return out;
  };
  if (squeezed(tree.child(targets[0], GM_F(Subscript, slice))) !=
      squeezed(tree.child(sub, GM_F(Subscript, slice))))
    return {};
  return stmt;
}

class BoolMaskIndex final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM404"; }
  std::string_view name() const override { return "bool-mask-index-in-region"; }
  std::string_view summary() const override {
    return "boolean-mask indexing `x[mask]` has a data-dependent output shape";
  }
  std::string_view documentation() const override { return kDoc; }
  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    if (ctx.model() == nullptr) return;  // no semantic model: no region, nothing to report
    const sema::Model& m = *ctx.model();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Subscript) return;
      if (static_cast<NodeKind>(tree.field(n, GM_F(Subscript, ctx)).a) != NodeKind::Load) {
        // x[m] = v is index_put_ (no break); x[m] += v reads x[m] first.
        const NodeId p = m.parent(n);
        if (!p || tree.kind(p) != NodeKind::AugAssign ||
            tree.child(p, GM_F(AugAssign, target)) != n)
          return;
      }
      const NodeId index = tree.child(n, GM_F(Subscript, slice));
      const sema::TensorFact f = m.fact(index);
      if (f.kind != sema::TensorKind::Tensor || f.dtype != sema::DType::Bool) return;
      const NodeId value = tree.child(n, GM_F(Subscript, value));
      if (not_tensor(m, value)) return;
      auto& d = sink.report(begin_of(tree, n), end_of(tree, n),
                            "indexing with a boolean mask has a data-dependent output shape");
      d.why =
          "Dynamo: Dynamic shape operator (boolean-mask indexing is aten.nonzero "
          "underneath; capture_dynamic_output_shape_ops=False)";
      fix(ctx, d, n, m.fact(value));
    });
  }

 private:
  // `y[mask] = x[mask]` -> `_graphmend_rt.masked_copy(y, mask, x)`. The mask,
  // evaluated twice by the original, is evaluated once: it, `y` and `x` must
  // be pure.
  static void copy_fix(const lint::RuleContext& ctx, lint::Diagnostic& d, NodeId stmt) {
    const auto& tree = ctx.tree();
    const std::string_view text = ctx.text();
    const NodeId target = tree.children(stmt, GM_F(Assign, targets))[0];
    const NodeId y = tree.child(target, GM_F(Subscript, value));
    const NodeId mask = tree.child(target, GM_F(Subscript, slice));
    const NodeId x = tree.child(tree.child(stmt, GM_F(Assign, value)), GM_F(Subscript, value));
    predication::Purity p;
    for (NodeId e : {y, mask, x}) predication::check_pure_total(ctx, e, p);
    if (!p.ok) {
      d.declined_reason =
          "the masked copy would evaluate its mask once instead of twice, but " + p.why;
      return;
    }
    if (has_comment(text, tree.at(stmt).begin, tree.at(stmt).end)) {
      d.declined_reason = "a comment inside the statement the fix would rewrite";
      return;
    }
    runtime_rewrite::attach_fix(
        ctx, d, "Copy through the mask with one `torch.where` (`_graphmend_rt.masked_copy`)",
        {runtime_call(ctx, stmt, "masked_copy",
                      {ctx.text_of(y), ctx.text_of(mask), ctx.text_of(x)})});
  }

  // `x[mask] OP= v` (OP one of + - * /) -> `_graphmend_rt.masked_update(x,
  // mask, "OP", v)`. The statement reads `x[mask]` before evaluating `v`, the
  // call after: `v` must be pure.
  static void update_fix(const lint::RuleContext& ctx, lint::Diagnostic& d, NodeId stmt) {
    const auto& tree = ctx.tree();
    const std::string_view text = ctx.text();
    const char* op = nullptr;
    switch (static_cast<NodeKind>(tree.field(stmt, GM_F(AugAssign, op)).a)) {
      case NodeKind::Add: op = "+"; break;
      case NodeKind::Sub: op = "-"; break;
      case NodeKind::Mult: op = "*"; break;
      case NodeKind::Div: op = "/"; break;
      default: break;
    }
    if (op == nullptr) {
      d.declined_reason =
          "only `+=`, `-=`, `*=` and `/=` through a mask are rewritten (one exact operation "
          "per element)";
      return;
    }
    const NodeId target = tree.child(stmt, GM_F(AugAssign, target));
    const NodeId value = tree.child(stmt, GM_F(AugAssign, value));
    predication::Purity p;
    predication::check_pure_total(ctx, value, p);
    if (!p.ok) {
      d.declined_reason =
          "the fix evaluates the value before reading `x[mask]`, the statement after, but " + p.why;
      return;
    }
    if (tree.kind(value) == NodeKind::Tuple || tree.kind(value) == NodeKind::Starred ||
        has_comment(text, tree.at(stmt).begin, tree.at(stmt).end)) {
      d.declined_reason = "a comment or a bare tuple in the statement the fix would rewrite";
      return;
    }
    const std::string quoted = "\"" + std::string(op) + "\"";
    runtime_rewrite::attach_fix(
        ctx, d, "Update through the mask with one `torch.where` (`_graphmend_rt.masked_update`)",
        {runtime_call(ctx, stmt, "masked_update",
                      {ctx.text_of(tree.child(target, GM_F(Subscript, value))),
                       ctx.text_of(tree.child(target, GM_F(Subscript, slice))), quoted,
                       ctx.text_of(value)})});
  }

  static void fix(const lint::RuleContext& ctx, lint::Diagnostic& d, NodeId sub,
                  const sema::TensorFact& x) {
    const sema::Model& m = *ctx.model();
    const auto& tree = ctx.tree();
    const std::string_view text = ctx.text();
    const bool load =
        static_cast<NodeKind>(tree.field(sub, GM_F(Subscript, ctx)).a) == NodeKind::Load;
    if (const NodeId stmt = load ? masked_copy(ctx, sub) : NodeId{}) {
      copy_fix(ctx, d, stmt);
      return;
    }
    if (!load) {  // `x[mask] OP= v`: the reporter only keeps augmented targets
      update_fix(ctx, d, m.parent(sub));
      return;
    }
    const auto r = load ? whole_reduction(m, sub) : std::nullopt;
    if (!r) {
      d.declined_reason =
          "a fixed-shape rewrite is only equivalent when the selection is reduced whole "
          "(`x[mask].sum()`, `.any()`, ...) or copied through the same mask "
          "(`y[mask] = x[mask]`); this one is used otherwise";
      return;
    }
    const auto bracket = open_bracket(ctx, sub);
    const std::uint32_t close = tree.at(sub).end - 1;  // the `]`
    const std::uint32_t call_begin = tree.at(r->call).begin, call_end = tree.at(r->call).end;
    const std::uint32_t sub_begin = tree.at(sub).begin;
    if (!bracket || text[close] != ']' || has_comment(text, close, call_end) ||
        has_comment(text, call_begin, sub_begin)) {
      d.declined_reason = "a comment inside the expression the fix would rewrite";
      return;
    }
    if (raises_when_empty(r->op)) {
      if (auto why = traps::scan_after(ctx, statement_of(m, r->call), "reduction"); !why.empty()) {
        d.declined_reason = std::move(why);
        return;
      }
    }
    const bool unsafe =
        r->op == "mean" || (order_sensitive(r->op) && x.dtype == sema::DType::Floating);
    const std::string head = std::string(runtime_rewrite::kRuntimeAlias) + ".masked_reduce(";
    // [call, x[mask]) is `torch.R(` or the parentheses around `x[mask]` in
    // `(x[mask]).R()` (empty without them); the `)`s are in `].R()`.
    std::vector<edits::Edit> edits{edits::Edit::replace(call_begin, sub_begin, head)};
    const bool breaks =
        *bracket + 1 < text.size() && (text[*bracket + 1] == '\n' || text[*bracket + 1] == '\r');
    edits.push_back(edits::Edit::replace(*bracket, *bracket + 1, breaks ? "," : ", "));
    // The op goes right after the mask, before a comment that follows it.
    edits.push_back(edits::Edit::insert(
        mask_end(ctx, sub), ", \"" + std::string(r->op) + "\"" + (unsafe ? ", exact=False" : "")));
    edits.push_back(edits::Edit::replace(close, call_end, ")"));
    runtime_rewrite::attach_fix(
        ctx, d,
        unsafe ? "Reduce over the whole tensor with the mask "
                 "(`_graphmend_rt.masked_reduce`); floating results may differ in "
                 "the last bits"
               : "Reduce over the whole tensor with the mask "
                 "(`_graphmend_rt.masked_reduce`)",
        std::move(edits), unsafe);
  }
};

}  // namespace

const lint::Rule& gm404_bool_mask_index() {
  static const BoolMaskIndex rule;
  return rule;
}

}  // namespace gm::rules

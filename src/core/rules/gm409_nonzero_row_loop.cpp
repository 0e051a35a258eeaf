// GM409: `for i in mask.sum(dims).gt(0).nonzero():` — a loop over the rows a
// mask selects (the experts some token chose), each step selecting with
// `torch.where(mask[i])`.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"
#include "semantic/ops.h"

namespace gm::rules {
namespace {

using namespace matching;

constexpr std::string_view kDoc = R"md(# GM409 nonzero-row-loop

## What it detects
Inside a compiled region, a loop over the rows of `nonzero()` of a
condition on a mask, whose body selects with that mask, the eager
mixture-of-experts loop of transformers:

    expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
    for expert_idx in expert_hit:
        expert_idx = expert_idx[0]
        top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
        ...
        final_hidden_states.index_add_(0, token_idx, current_hidden_states)

## Why Dynamo breaks there
`nonzero()` has a data-dependent number of rows: "Dynamic shape operator"
without `capture_dynamic_output_shape_ops`. With that switch the rows are
traced, but their number is unknown and the loop variable is tensor data:
`int(i.item())`, `if i == n:` and `f"expert_{i}"` need its value ("Could not
extract specialized integer", data-dependent branching), and a loop over an
unknown number of rows is not traced.

## The rewrite
The loop runs over `_graphmend_rt.nonzero_rows(rows, mask.shape[0], ...)`
and the statement that took the index out of the row is removed. While
compiling with `capture_dynamic_output_shape_ops` on, that is every index of
the mask's first dimension as a Python int, a loop Dynamo unrolls into one
graph; otherwise (and always eagerly) exactly the values the original loop
gave its variable, with the same graph breaks. When the loop uses the row
itself (Switch Transformers: `mask[row].squeeze(0)`, `self[f"expert_{row[0]}"]`),
the rewrite gives `[i]`, a list that indexes a tensor as the one-element row
does. Proven statically:
- the condition is `S > 0` or `S != 0` (`torch.greater`, `torch.gt`,
  `torch.ne`, `.gt`, `.ne`) of `S = mask.sum(dim=D)` where `D` names every
  dimension of the mask but the first (its rank is known from a `permute`,
  `view` or `reshape`) and the mask is non-negative (`one_hot`, a comparison,
  and views and casts of those): an index the condition leaves out has an
  all-zero row, so `torch.where(mask[i])` selects nothing. A mask of unknown
  sign (Switch Transformers' router choice, a parameter) with the rows in a
  name: the selection reads the row as `_graphmend_rt.hit_row(mask, i,
  rows)`, which is `mask[i]` eagerly and for an index the rows list, and a
  row of zeros (same shape and dtype) while compiling for one they do not,
  so the step of an index the original skipped selects nothing whatever the
  signs (with the rows not in a name the sign is assumed: unsafe);
- then the body does nothing: it selects once with `torch.where(mask[i])`,
  assigns local names with pure, total torch operations (the op table) or
  methods of the class whose bodies are such, takes no effect but
  `acc.index_add_(0, selected, value)`, may run under `with torch.no_grad():`
  (and `h *= v`, `+=`, `-=` on a name
  it bound to storage the step created: an operator's result, an op the op
  table does not list as a view), and skips with `continue`; names it
  assigns are not read after the loop nor across steps; a test that the
  selection is empty (`if idx.numel() == 0: continue`) is removed with it;
- the index is used only where a Python int and a 0-d integer tensor behave
  alike: as a subscript, in an `if` test's comparison, as an f-string field,
  in `int()`; a row kept as such only as `mask[row]` and `row[0]`.

**Safe** when what the body needs for an index the mask leaves out is
either proven or checked by the runtime while compiling (it loops as the
original when a check fails: the same graphs and breaks):
- a `self` attribute indexed by the index (`self.w[i]`, `self.w[i, :]`,
  `self.experts[i]`) is passed as `entries=`: a tensor with at least as many
  rows as the mask, a `ModuleList`/list that long. Indexed only where a
  branch proves `i < B` (the `else` of `if i >= B or ...:`, after Mixtral's
  `if i == E: continue` for one padding class), it is passed with B as
  `guarded=` and needs B entries;
- a submodule `self.act(...)` called on the selected rows is passed as
  `elementwise=`: an activation the runtime knows computes element by
  element with no effects (torch.nn's ReLU, GELU, SiLU, Tanh, Identity, ...;
  transformers' ACT2FN classes but xIELU) or a Dropout that is the
  identity (eval, or `p == 0`), without hooks; a method of the
  class whose body is pure is proven statically;
- an expert `layer = self.experts[i]` called on the rows, when the call
  resolves to the `forward` of one module-level class C of the file whose
  body is pure but for calls of its attributes (`self.w1(h)`), also under
  `if` tests of types only (`isinstance`, comparisons of dtypes and
  devices, as Switch Transformers' cast): passed as `experts=` with C and
  those attribute names; the runtime checks that every entry is exactly a
  C and each of those attributes a layer it knows to compute row by row
  with no effect (Linear, LayerNorm, RMSNorm, Dropout when it is the
  identity, the activations above);
- an expert named by the index, `self[f"expert_{row[0]}"](h)` in a class
  (a ModuleDict) whose methods store only instances of one module-level
  class C into `self[...]`: passed as `experts=(self, C, layers,
  "expert_{}")`, the key as a `str.format` template of the index (an
  f-string field without conversion or spec formats the int and the 0-d
  tensor alike); the runtime also checks that every key is an entry. A
  named entry that is not called is passed as `keys=`.

**Unsafe** (`--unsafe-fixes`) for what neither can show: another submodule
(an expert whose forward is not proven, an entry of a container whose
stores the class does not show) called on zero rows must compute row by
row without effects, an index used in another key must name an entry, and
a mask of unknown sign whose rows are not in a name must be non-negative.
The runtime checks that no forward hook is installed.

## When it declines
The row is used otherwise than as `mask[row]` or `row[0]` (as a tensor
value, `row[1]`); the mask's rank is unknown; the rows variable is used
elsewhere; the mask or a name that may share its storage (a view, `.to()`,
`.float()`: the op table's View column) is updated in place; any other
statement or effect in the body (a store to an attribute or a subscript, a
call outside the op table, a `break`, `return`, nested loop, `h *= v` on a
tensor the step did not create); a name the body assigns is read after the
loop or in the next step.

## Example
Before:

    def forward(self, x, top_k_index, top_k_weights):
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(top_k_index, num_classes=4).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for e in hit:
            e = e[0]
            pos, tok = torch.where(mask[e])
            out.index_add_(0, tok, x[tok] * top_k_weights[tok, pos, None])
        return out

After:

    def forward(self, x, top_k_index, top_k_weights):
        out = torch.zeros_like(x)
        mask = torch.nn.functional.one_hot(top_k_index, num_classes=4).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for e in _graphmend_rt.nonzero_rows(hit, mask.shape[0]):
            pos, tok = torch.where(mask[e])
            out.index_add_(0, tok, x[tok] * top_k_weights[tok, pos, None])
        return out
)md";

NodeKind op_of(const ast::Tree& t, NodeId n, int field) {
  return static_cast<NodeKind>(t.field(n, field).a);
}
bool is_load(const ast::Tree& t, NodeId n) { return ctx_of(t, n) == NodeKind::Load; }

// An integer literal, with an optional minus sign.
std::optional<long> int_literal(const ast::Tree& t, NodeId n) {
  bool neg = false;
  if (t.kind(n) == NodeKind::UnaryOp && op_of(t, n, GM_F(UnaryOp, op)) == NodeKind::USub) {
    neg = true;
    n = t.child(n, GM_F(UnaryOp, operand));
  }
  if (t.kind(n) != NodeKind::Constant) return std::nullopt;
  const auto& c = t.constant_at(t.field(n, GM_F(Constant, value)));
  if (c.kind != ast::ConstantValue::Kind::Int) return std::nullopt;
  const std::string_view digits = t.str(c.text);
  if (digits.size() > 6) return std::nullopt;
  long v = 0;
  for (char ch : digits) v = v * 10 + (ch - '0');
  return neg ? -v : v;
}

// The receiver's method name of `call` when the callee is `recv.name` and
// not a module function (`torch.sum`).
std::string_view method_name(const sema::Model& m, NodeId call) {
  const auto& t = m.tree();
  if (t.kind(call) != NodeKind::Call) return {};
  const NodeId func = t.child(call, GM_F(Call, func));
  if (t.kind(func) != NodeKind::Attribute || m.qualified_name(func)) return {};
  return t.text(t.field(func, GM_F(Attribute, attr)));
}

// The name an attribute/subscript chain starts from: `self` for
// `self.experts[i].w`; `e` itself when it is neither.
NodeId chain_root(const ast::Tree& t, NodeId e) {
  while (t.kind(e) == NodeKind::Subscript || t.kind(e) == NodeKind::Attribute)
    e = t.kind(e) == NodeKind::Subscript ? t.child(e, GM_F(Subscript, value))
                                         : t.child(e, GM_F(Attribute, value));
  return e;
}

std::string_view torch_leaf_of(const sema::Model& m, NodeId call, std::string& holder) {
  const auto q = callee_name(m, call);
  if (!q) return {};
  holder = *q;
  return sema::ops::torch_leaf(holder);
}

struct Proof {
  std::string declined;     // non-empty: no fix, and why
  std::string unsafe_why;   // non-empty: the fix is unsafe, and why
  bool calls_submodule = false;
};

class NonzeroRowLoop final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM409"; }
  std::string_view name() const override { return "nonzero-row-loop"; }
  std::string_view summary() const override {
    return "a loop over the rows of `nonzero()` runs a data-dependent number of steps";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    if (ctx.model() == nullptr) return;
    const auto& tree = ctx.tree();
    for_each_in_region(ctx, [&](NodeId n) {
      if (tree.kind(n) != NodeKind::For) return;
      Site s;
      if (!match(ctx, n, s)) return;
      const NodeId iter = tree.child(n, GM_F(For, iter));
      auto& d = sink.report(tree.at(n).begin, tree.at(iter).end,
                            "the loop runs once per row of `nonzero()`: a number of steps that "
                            "depends on tensor data");
      d.why =
          "Dynamo: Dynamic shape operator at `nonzero()` (capture_dynamic_output_shape_ops="
          "False); with the switch, the loop variable is tensor data and its uses as a Python "
          "value break the graph (Could not extract specialized integer / data-dependent "
          "branching)";
      fix(ctx, d, s);
    });
  }

 private:
  struct Site {
    NodeId loop, function, rows_stmt, cond;
    std::string rows, mask;  // rows: the rows name, or the nonzero call's text
    // `R = C.nonzero(as_tuple=True)[0].tolist()`: the indices as ints already;
    // `indices` is the call before `.tolist()`.
    NodeId list_value, indices;
    std::set<std::string, std::less<>> aliases;  // the mask and names bound from it
    bool nonnegative = false;  // proven: a row summing to 0 is all zero
    // `one_hot(..., num_classes=E + k)`: "E", the first padding class.
    std::string padding_from;
    long padding_classes = 0;  // k
  };

  // The loop's shape: `for V in NZ(C)`, or `for V in R` with `R = NZ(C)`
  // in the same function.
  static bool match(const lint::RuleContext& ctx, NodeId loop, Site& s) {
    const auto& t = ctx.tree();
    const sema::Model& m = *ctx.model();
    const NodeId iter = t.child(loop, GM_F(For, iter));
    NodeId fn = m.parent(loop);
    while (fn && t.kind(fn) != NodeKind::FunctionDef && t.kind(fn) != NodeKind::AsyncFunctionDef)
      fn = m.parent(fn);
    if (!fn) return false;
    s.loop = loop;
    s.function = fn;
    NodeId call = iter;
    s.rows_stmt = loop;
    if (t.kind(iter) == NodeKind::Name) {
      s.rows = std::string(name_id(t, iter));
      // The one binding of the rows name.
      NodeId stmt{};
      int stores = 0;
      walk(t, fn, [&](NodeId n) {
        if (t.kind(n) != NodeKind::Name || name_id(t, n) != s.rows || is_load(t, n)) return;
        ++stores;
        const NodeId p = m.parent(n);
        if (t.kind(p) == NodeKind::Assign && t.children(p, GM_F(Assign, targets)).size() == 1 &&
            t.children(p, GM_F(Assign, targets))[0] == n)
          stmt = p;
      });
      if (stores != 1 || !stmt || t.at(stmt).end > t.at(loop).begin) return false;
      call = t.child(stmt, GM_F(Assign, value));
      s.rows_stmt = stmt;
    }
    if (t.kind(call) != NodeKind::Call) return false;
    if (const NodeId idx = method_receiver(t, call, "tolist");
        idx && s.rows_stmt != loop && t.children(call, GM_F(Call, args)).empty() &&
        t.children(call, GM_F(Call, keywords)).empty()) {
      // `C.nonzero(as_tuple=True)[0].tolist()` / `torch.where(C)[0].tolist()`
      if (t.kind(idx) != NodeKind::Subscript ||
          int_literal(t, t.child(idx, GM_F(Subscript, slice))) != 0)
        return false;
      const NodeId nz = t.child(idx, GM_F(Subscript, value));
      if (t.kind(nz) != NodeKind::Call) return false;
      auto args = t.children(nz, GM_F(Call, args));
      const auto kws = t.children(nz, GM_F(Call, keywords));
      std::string q;
      const std::string_view leaf = torch_leaf_of(m, nz, q);
      const NodeId recv = method_receiver(t, nz, "nonzero");
      const NodeId flag = keyword(t, nz, "as_tuple");
      const bool as_tuple = kws.size() == 1 && flag && t.kind(flag) == NodeKind::Constant &&
                            t.constant_at(t.field(flag, GM_F(Constant, value))).kind ==
                                ast::ConstantValue::Kind::True;
      if (recv && args.empty() && as_tuple) {
        s.cond = recv;
      } else if (leaf == "nonzero" && args.size() == 1 && as_tuple) {
        s.cond = args[0];
      } else if (leaf == "where" && args.size() == 1 && kws.empty()) {
        s.cond = args[0];
      } else {
        return false;
      }
      s.list_value = call;
      s.indices = idx;
      return true;
    }
    const auto args = t.children(call, GM_F(Call, args));
    for (NodeId k : t.children(call, GM_F(Call, keywords))) {
      const auto arg = t.field(k, GM_F(keyword, arg));
      if (ast::Tree::is_none_string(arg) || t.text(arg) != "as_tuple" ||
          !is_false_constant(t, t.child(k, GM_F(keyword, value))))
        return false;
    }
    if (NodeId recv = method_receiver(t, call, "nonzero"); recv && args.empty()) {
      s.cond = recv;
    } else {
      std::string q;
      const std::string_view leaf = torch_leaf_of(m, call, q);
      if ((leaf != "nonzero" && leaf != "argwhere") || args.size() != 1) return false;
      s.cond = args[0];
    }
    if (s.rows.empty()) s.rows = std::string(ctx.text_of(call));
    return true;
  }

  // The mask and the reduced dimensions of `C = cmp(M.sum(dim=D), 0)`, or a
  // decline reason.
  static std::string condition(const lint::RuleContext& ctx, Site& s, std::vector<long>& dims) {
    const auto& t = ctx.tree();
    const sema::Model& m = *ctx.model();
    const NodeId c = s.cond;
    NodeId sum{}, zero{};
    if (t.kind(c) == NodeKind::Compare) {
      const auto ops = t.raw_list(c, GM_F(Compare, ops));
      const auto rhs = t.children(c, GM_F(Compare, comparators));
      if (ops.size() != 1) return "the condition is not `S > 0` or `S != 0`";
      const auto k = static_cast<NodeKind>(ops[0].index);
      if (k != NodeKind::Gt && k != NodeKind::NotEq)
        return "the condition is not `S > 0` or `S != 0`";
      sum = t.child(c, GM_F(Compare, left));
      zero = rhs[0];
    } else if (t.kind(c) == NodeKind::Call) {
      const auto args = t.children(c, GM_F(Call, args));
      if (!t.children(c, GM_F(Call, keywords)).empty()) return "the condition has keywords";
      std::string q;
      const std::string_view leaf = torch_leaf_of(m, c, q);
      const std::string_view meth = method_name(m, c);
      if ((leaf == "greater" || leaf == "gt" || leaf == "ne") && args.size() == 2) {
        sum = args[0];
        zero = args[1];
      } else if ((meth == "greater" || meth == "gt" || meth == "ne") && args.size() == 1) {
        sum = t.child(t.child(c, GM_F(Call, func)), GM_F(Attribute, value));
        zero = args[0];
      }
    }
    if (!sum || int_literal(t, zero) != 0)
      return "the condition is not `S > 0` or `S != 0` of a sum over the mask";
    // S = M.sum(dim=D) / M.sum(D) / torch.sum(M, D)
    if (t.kind(sum) != NodeKind::Call) return "the condition does not compare a sum";
    NodeId mask{}, d{};
    auto args = t.children(sum, GM_F(Call, args));
    std::string q;
    if (method_name(m, sum) == "sum") {
      mask = t.child(t.child(sum, GM_F(Call, func)), GM_F(Attribute, value));
      if (args.size() == 1) d = args[0];
    } else if (torch_leaf_of(m, sum, q) == "sum" && !args.empty()) {
      mask = args[0];
      if (args.size() == 2) d = args[1];
    }
    for (NodeId k : t.children(sum, GM_F(Call, keywords))) {
      const auto arg = t.field(k, GM_F(keyword, arg));
      if (ast::Tree::is_none_string(arg) || t.text(arg) != "dim" || d)
        return "the sum has a keyword other than `dim`";
      d = t.child(k, GM_F(keyword, value));
    }
    if (!mask || t.kind(mask) != NodeKind::Name || !d)
      return "the condition is not a sum of a named mask over given dimensions";
    if (t.kind(d) == NodeKind::Tuple) {
      for (NodeId e : t.children(d, GM_F(Tuple, elts))) {
        const auto v = int_literal(t, e);
        if (!v) return "the summed dimensions are not integer literals";
        dims.push_back(*v);
      }
    } else if (const auto v = int_literal(t, d)) {
      dims.push_back(*v);
    } else {
      return "the summed dimensions are not integer literals";
    }
    s.mask = std::string(name_id(t, mask));
    return {};
  }

  // The value the mask name holds at the rows statement (straight-line code:
  // every binding an assignment before it, none under a branch or loop) and
  // its rank, else a decline reason; `s.nonnegative` when its sign is proven.
  static std::string mask_facts(const lint::RuleContext& ctx, Site& s,
                                const std::vector<long>& dims) {
    const auto& t = ctx.tree();
    const sema::Model& m = *ctx.model();
    std::vector<NodeId> values;  // in source order
    bool bad = false;
    walk(t, s.function, [&](NodeId n) {
      if (t.kind(n) != NodeKind::Name || name_id(t, n) != s.mask || is_load(t, n)) return;
      const NodeId p = m.parent(n);
      if (t.kind(p) != NodeKind::Assign || t.children(p, GM_F(Assign, targets)).size() != 1 ||
          t.at(p).end > t.at(s.rows_stmt).begin) {
        bad = true;
        return;
      }
      for (NodeId a = m.parent(p); a && a != s.function; a = m.parent(a))
        if (t.kind(a) != NodeKind::With) bad = true;
      values.push_back(t.child(p, GM_F(Assign, value)));
    });
    if (bad || values.empty())
      return "the mask `" + s.mask + "` is not assigned once in straight-line code before the loop";
    // Names that may hold the mask's storage: bound from an expression that
    // may give one of them (a view, the tensor itself; the op table's View
    // column), to a fixpoint.
    s.aliases = {s.mask};
    for (bool grew = true; grew;) {
      grew = false;
      walk(t, s.function, [&](NodeId n) {
        if (t.kind(n) != NodeKind::Name || is_load(t, n) || s.aliases.count(name_id(t, n))) return;
        NodeId p = m.parent(n);
        while (t.kind(p) == NodeKind::Tuple || t.kind(p) == NodeKind::List ||
               t.kind(p) == NodeKind::Starred)
          p = m.parent(p);  // `a, b = mask.chunk(2)`
        const NodeId value = t.kind(p) == NodeKind::Assign      ? t.child(p, GM_F(Assign, value))
                             : t.kind(p) == NodeKind::NamedExpr ? t.child(p, GM_F(NamedExpr, value))
                             : t.kind(p) == NodeKind::For       ? t.child(p, GM_F(For, iter))
                                                                : NodeId{};
        if (!value) {
          // Any other binding (`with ... as v`, an augmented assignment):
          // assume it may.
          bool reads = false;
          walk(t, p, [&](NodeId r) { reads |= s.aliases.count(name_id(t, r)) != 0; });
          if (reads) grew = s.aliases.emplace(name_id(t, n)).second || grew;
          return;
        }
        if (may_alias(m, value, s.aliases, 0))
          grew = s.aliases.emplace(name_id(t, n)).second || grew;
      });
    }
    // Nothing updates them in place (`mask[...] = v`, `mask += v`, `mask.neg_()`,
    // `out=mask`): the mask's sign and rows are those of its value.
    walk(t, s.function, [&](NodeId n) {
      const NodeKind k = t.kind(n);
      if (k == NodeKind::Subscript && ctx_of(t, n) != NodeKind::Load &&
          s.aliases.count(name_id(t, t.child(n, GM_F(Subscript, value)))))
        bad = true;
      if (k == NodeKind::AugAssign &&
          s.aliases.count(name_id(t, t.child(n, GM_F(AugAssign, target)))))
        bad = true;
      if (k == NodeKind::Call) {
        const NodeId f = t.child(n, GM_F(Call, func));
        if (t.kind(f) == NodeKind::Attribute &&
            s.aliases.count(name_id(t, t.child(f, GM_F(Attribute, value)))) &&
            t.text(t.field(f, GM_F(Attribute, attr))).ends_with('_'))
          bad = true;
        const NodeId out = keyword(t, n, "out");
        if (out && s.aliases.count(name_id(t, out))) bad = true;
      }
    });
    if (bad) return "the mask `" + s.mask + "` is updated in place";
    // Rank: the last assignment's outermost permute / view / reshape.
    const NodeId last = values.back();
    const std::string_view shape_op = method_name(m, last);
    if (shape_op != "permute" && shape_op != "view" && shape_op != "reshape")
      return "the rank of the mask `" + s.mask + "` is not known (no permute/view/reshape)";
    auto sizes = t.children(last, GM_F(Call, args));
    if (sizes.size() == 1 && t.kind(sizes[0]) == NodeKind::Tuple)
      sizes = t.children(sizes[0], GM_F(Tuple, elts));
    const long rank = static_cast<long>(sizes.size());
    std::set<long> seen;
    for (long d : dims) {
      const long n = d < 0 ? d + rank : d;
      if (n < 1 || n >= rank || !seen.insert(n).second)
        return "the sum does not cover every dimension of the mask but the first";
    }
    if (static_cast<long>(seen.size()) != rank - 1)
      return "the sum does not cover every dimension of the mask but the first";
    // Non-negative: through views and casts to a one_hot or a comparison.
    std::size_t at = values.size() - 1;  // the binding `v` is part of
    NodeId v = last;
    for (int steps = 0; steps < 64; ++steps) {
      if (t.kind(v) == NodeKind::Name && name_id(t, v) == s.mask) {
        if (at == 0) break;  // read before its first binding here
        v = values[--at];
        continue;
      }
      if (t.kind(v) == NodeKind::Compare) return s.nonnegative = true, std::string{};
      if (t.kind(v) != NodeKind::Call) break;
      const std::string_view meth = method_name(m, v);
      if (!meth.empty()) {
        const sema::ops::OpInfo* op = sema::ops::lookup(meth);
        if (op && op->has(sema::ops::BoolResult)) return s.nonnegative = true, std::string{};
        static constexpr std::string_view kKeep[] = {
            "permute", "transpose", "view",  "reshape", "contiguous", "flatten",
            "squeeze", "unsqueeze", "long",  "int",     "float",      "double",
            "bool",    "to",        "clone", "detach",  "movedim"};
        if (std::find(std::begin(kKeep), std::end(kKeep), meth) == std::end(kKeep)) break;
        v = t.child(t.child(v, GM_F(Call, func)), GM_F(Attribute, value));
        continue;
      }
      const auto q = callee_name(m, v);
      const sema::ops::OpInfo* op = q ? sema::ops::lookup_qualified(*q) : nullptr;
      if (op && op->name == "one_hot") {
        // `num_classes=E + 1`: a padding class past the experts.
        NodeId n = keyword(t, v, "num_classes");
        if (const auto args = t.children(v, GM_F(Call, args)); !n && args.size() > 1) n = args[1];
        if (n && t.kind(n) == NodeKind::BinOp && op_of(t, n, GM_F(BinOp, op)) == NodeKind::Add &&
            int_literal(t, t.child(n, GM_F(BinOp, right))).value_or(0) > 0) {
          s.padding_from = std::string(ctx.text_of(t.child(n, GM_F(BinOp, left))));
          s.padding_classes = *int_literal(t, t.child(n, GM_F(BinOp, right)));
        }
      }
      const auto range = op ? sema::ops::value_range(*op) : std::nullopt;
      // Within [0, 1]: the casts above keep such values non-negative (a
      // cast of a larger one to a narrower integer type could wrap).
      if (range && range->lo >= 0 && range->hi <= 1) return s.nonnegative = true, std::string{};
      break;
    }
    return {};
  }

  // Whether `e` may evaluate to storage of a name in `names`: the name, a
  // view or subscript of it, or a call that can return what it was given.
  // Operators and op-table calls without the View flag give fresh tensors.
  static bool may_alias(const sema::Model& m, NodeId e,
                        const std::set<std::string, std::less<>>& names, int depth) {
    const auto& t = m.tree();
    if (depth > 64) return true;
    const auto any = [&](std::span<const NodeId> xs) {
      for (NodeId x : xs)
        if (may_alias(m, x, names, depth + 1)) return true;
      return false;
    };
    switch (t.kind(e)) {
      case NodeKind::Name: return names.count(name_id(t, e)) != 0;
      case NodeKind::Constant:
      case NodeKind::BinOp:
      case NodeKind::Compare:
      case NodeKind::JoinedStr: return false;
      case NodeKind::UnaryOp:  // `+x` may return x itself
        return op_of(t, e, GM_F(UnaryOp, op)) == NodeKind::UAdd &&
               may_alias(m, t.child(e, GM_F(UnaryOp, operand)), names, depth + 1);
      case NodeKind::Subscript:
        return may_alias(m, t.child(e, GM_F(Subscript, value)), names, depth + 1);
      case NodeKind::Attribute: {
        const sema::ops::OpInfo* op = sema::ops::lookup(t.text(t.field(e, GM_F(Attribute, attr))));
        return (!op || op->has(sema::ops::View)) &&
               may_alias(m, t.child(e, GM_F(Attribute, value)), names, depth + 1);
      }
      case NodeKind::Tuple: return any(t.children(e, GM_F(Tuple, elts)));
      case NodeKind::List: return any(t.children(e, GM_F(List, elts)));
      case NodeKind::Starred:
        return may_alias(m, t.child(e, GM_F(Starred, value)), names, depth + 1);
      case NodeKind::BoolOp: return any(t.children(e, GM_F(BoolOp, values)));
      case NodeKind::NamedExpr:
        return may_alias(m, t.child(e, GM_F(NamedExpr, value)), names, depth + 1);
      case NodeKind::IfExp:
        return may_alias(m, t.child(e, GM_F(IfExp, body)), names, depth + 1) ||
               may_alias(m, t.child(e, GM_F(IfExp, orelse)), names, depth + 1);
      case NodeKind::Call: {
        const NodeId func = t.child(e, GM_F(Call, func));
        if (const NodeId out = keyword(t, e, "out"); out && may_alias(m, out, names, depth + 1))
          return true;
        bool fresh = false;
        if (const auto q = m.qualified_name(func)) {
          const sema::ops::OpInfo* op = sema::ops::lookup_qualified(*q);
          fresh = op && !op->has(sema::ops::View);
        } else if (t.kind(func) == NodeKind::Attribute) {
          const std::string_view meth = t.text(t.field(func, GM_F(Attribute, attr)));
          if (!sema::ops::method_may_alias(meth)) return false;
          if (may_alias(m, t.child(func, GM_F(Attribute, value)), names, depth + 1)) return true;
        }
        if (fresh) return false;
        for (NodeId k : t.children(e, GM_F(Call, keywords)))
          if (may_alias(m, t.child(k, GM_F(keyword, value)), names, depth + 1)) return true;
        return any(t.children(e, GM_F(Call, args)));
      }
      default: {  // a lambda, a comprehension, ...: whatever it reads
        bool reads = false;
        walk(t, e, [&](NodeId r) { reads |= names.count(name_id(t, r)) != 0; });
        return reads;
      }
    }
  }

  static void fix(const lint::RuleContext& ctx, lint::Diagnostic& d, Site& s) {
    std::vector<long> dims;
    if (std::string why = condition(ctx, s, dims); !why.empty()) {
      d.declined_reason = why;
      return;
    }
    if (std::string why = mask_facts(ctx, s, dims); !why.empty()) {
      d.declined_reason = why;
      return;
    }
    Body b(ctx, s);
    b.run();
    if (!b.proof.declined.empty()) {
      d.declined_reason = b.proof.declined;
      return;
    }
    // A mask of unknown sign: a row the condition leaves out may still have
    // nonzero entries. With the rows in a name the selection reads the row
    // through `_graphmend_rt.hit_row`, all zero for an index the rows do not
    // list, so the step selects nothing; else the sign is assumed.
    const bool hit_row = !s.nonnegative && s.rows_stmt != s.loop && !s.list_value;
    if (!s.nonnegative && !hit_row)
      b.proof.unsafe_why = "the mask `" + s.mask +
                           "` is non-negative (a row of it that sums to 0 is all zero)" +
                           (b.proof.unsafe_why.empty() ? "" : "; ") + b.proof.unsafe_why;
    const auto& t = ctx.tree();
    const NodeId target = t.child(s.loop, GM_F(For, target));
    std::vector<edits::Edit> es;
    const std::string rows = s.list_value ? std::string(ctx.text_of(s.indices)) : s.rows;
    std::vector<predication::Doc> args{predication::Doc::atom(rows),
                                       predication::Doc::atom(s.mask + ".shape[0]")};
    if (b.proof.calls_submodule) args.push_back(predication::Doc::atom("self"));
    if (b.item) args.push_back(predication::Doc::atom("item=True"));
    if (b.row_mode) args.push_back(predication::Doc::atom("row=True"));
    // A Python tuple display of `items`: `(a,)`, `(a, b)`.
    const auto py_tuple = [](const std::vector<std::string>& items) {
      std::string out = "(";
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
      return out + (items.size() == 1 ? ",)" : ")");
    };
    const auto tuple = [&](std::string_view key, const std::vector<std::string>& items) {
      return predication::Doc::atom(std::string(key) + "=" + py_tuple(items));
    };
    if (!b.entries.empty()) args.push_back(tuple("entries", b.entries));
    if (!b.guarded.empty()) {
      std::vector<std::string> pairs;
      for (const auto& [w, bound] : b.guarded) pairs.push_back("(" + w + ", " + bound + ")");
      args.push_back(tuple("guarded", pairs));
    }
    if (!b.elementwise.empty()) args.push_back(tuple("elementwise", b.elementwise));
    if (!b.experts.empty()) {
      std::vector<std::string> triples;
      for (const auto& x : b.experts) {
        std::vector<std::string> names;
        for (const auto& l : x.layers) names.push_back(ctx.quote(l));
        std::vector<std::string> item{x.container, x.cls, py_tuple(names)};
        if (!x.key.empty()) item.push_back(ctx.quote(x.key));
        triples.push_back(py_tuple(item));
      }
      args.push_back(tuple("experts", triples));
    }
    {
      std::vector<std::string> pairs;
      // A lambda cannot capture a structured binding before clang 16.
      for (const auto& entry : b.keys) {
        // An expert entry of the same container and key is checked as such.
        const bool expert = std::any_of(b.experts.begin(), b.experts.end(), [&](const auto& x) {
          return x.container == entry.first && x.key == entry.second;
        });
        if (!expert) pairs.push_back(py_tuple({entry.first, ctx.quote(entry.second)}));
      }
      if (!pairs.empty()) args.push_back(tuple("keys", pairs));
    }
    const NodeId at = s.list_value ? s.list_value : t.child(s.loop, GM_F(For, iter));
    // Laid out as the file wraps: the text around `at` on its lines counts
    // towards the limit and stays as it is.
    const std::string_view text = ctx.text();
    const std::uint32_t first = t.at(at).begin, last = t.at(at).end;
    const std::size_t line_begin = edits::line_start(text, first);
    const std::string_view indent = edits::line_indentation(text, first);
    const std::string_view lead =
        text.substr(line_begin + indent.size(), first - line_begin - indent.size());
    const std::string_view trail = text.substr(last, edits::line_end(text, last) - last);
    const predication::Wrap wrap = predication::wrap_of(ctx, s.list_value ? s.rows_stmt : s.loop);
    auto lines = predication::layout(
        wrap, "", lead,
        predication::Doc::call_of(std::string(runtime_rewrite::kRuntimeAlias) + ".nonzero_rows(",
                                  std::move(args)),
        trail);
    lines.front().erase(0, lead.size());
    lines.back().resize(lines.back().size() - trail.size());
    es.push_back(
        edits::Edit::replace(first, last, edits::render_lines(lines, indent, ctx.style())));
    if (b.var != name_id(t, target))
      es.push_back(edits::Edit::replace(t.at(target).begin, t.at(target).end, b.var));
    if (b.conversion) es.push_back(ctx.delete_statement(b.conversion));
    if (hit_row) {
      const NodeId sel = b.selection_row;
      es.push_back(edits::Edit::replace(t.at(sel).begin, t.at(sel).end,
                                        std::string(runtime_rewrite::kRuntimeAlias) + ".hit_row(" +
                                            s.mask + ", " + b.var + ", " + s.rows + ")"));
    }
    for (NodeId g : b.empty_guards) es.push_back(ctx.delete_statement(g));
    const bool unsafe = !b.proof.unsafe_why.empty();
    std::string checks;
    if (!b.entries.empty() || !b.guarded.empty() || !b.keys.empty())
      checks += "that what it indexes by the index has an entry for each";
    if (!b.elementwise.empty())
      checks += std::string(checks.empty() ? "" : " and ") +
                "that the submodules it calls are elementwise activations";
    if (!b.experts.empty())
      checks += std::string(checks.empty() ? "" : " and ") +
                "that its experts are of the class proven and made of layers it knows";
    runtime_rewrite::attach_fix(
        ctx, d,
        unsafe ? "Loop over every index of the mask while compiling (assumes " +
                     b.proof.unsafe_why + ")"
        : checks.empty() ? "Loop over every index of the mask while compiling "
                           "(`_graphmend_rt.nonzero_rows`)"
                         : "Loop over every index of the mask while compiling "
                           "(`_graphmend_rt.nonzero_rows`, which first checks " +
                               checks + ", else loops as before)",
        std::move(es), unsafe);
  }

  // The body's proof: what it assigns, selects and updates.
  struct Body {
    Body(const lint::RuleContext& c, const Site& s) : ctx(c), t(c.tree()), m(*c.model()), site(s) {}
    const lint::RuleContext& ctx;
    const ast::Tree& t;
    const sema::Model& m;
    const Site& site;
    Proof proof;
    std::string var;  // the index variable (a Python int in the rewrite)
    bool item = false;
    // No conversion: `var` is the row itself (`[i]` in the rewrite), used as
    // `mask[var]` and `var[0]`.
    bool row_mode = false;
    NodeId conversion{};
    std::vector<NodeId> empty_guards;
    std::set<std::string, std::less<>> selected, assigned;
    std::set<std::string, std::less<>> modules;  // names bound to `self.<attr>[...]`
    // `layer = self.experts[i]`: the name and `self.experts`.
    std::map<std::string, std::string, std::less<>> module_containers;
    // `(self.experts, Cls, ("w1", "act"))`: every entry a `Cls`, whose
    // forward is proven pure but for calling those attributes, each a layer
    // the runtime knows (`experts=`).
    struct Expert {
      std::string container, cls;
      std::vector<std::string> layers;
      std::string key;  // `container[key.format(i)]`; empty: `container[i]`
    };
    std::vector<Expert> experts;
    bool in_expert = false;  // proving an expert's forward: `self` is the expert
    std::vector<std::string> expert_layers;  // the attributes it calls
    bool selection_seen = false;
    NodeId selection_row{};  // `mask[i]` in the selection `torch.where(mask[i])`
    bool padding_skipped = false;  // `if i == E: continue` seen (skips_padding)
    int depth = 0;
    // What the runtime checks before it unrolls (else it loops as before):
    // `self.w` indexed by the index has an entry for every index (`entries`),
    // or for every index below B when a branch proves `i < B` (`guarded`:
    // text, B); `self.act` called on the rows is an elementwise activation
    // (`elementwise`).
    std::vector<std::string> entries;
    std::vector<std::pair<std::string, std::string>> guarded;
    std::vector<std::string> elementwise;
    // `self[f"expert_{i}"]`: the container and the key as a `str.format`
    // template of the index (`keys=`).
    std::vector<std::pair<std::string, std::string>> keys;
    std::vector<std::string> bounds;  // the bounds the enclosing branches prove, innermost last

    void decline(std::string why, NodeId at) {
      if (proof.declined.empty())
        proof.declined = std::move(why) + " (line " + std::to_string(t.at(at).pos.lineno) + ")";
    }
    // Every assumption, once each, in the order found.
    void unsafe(const std::string& why) {
      if (proof.unsafe_why.find(why) != std::string::npos) return;
      proof.unsafe_why += (proof.unsafe_why.empty() ? "" : "; ") + why;
    }

    void run() {
      const auto body = t.children(site.loop, GM_F(For, body));
      const NodeId target = t.child(site.loop, GM_F(For, target));
      if (t.kind(target) != NodeKind::Name || !t.children(site.loop, GM_F(For, orelse)).empty())
        return decline("the loop has no plain name target or has an `else`", site.loop);
      const std::string_view row = name_id(t, target);
      std::size_t first = 1;
      if (site.list_value) {  // the loop variable is the index already
        var = std::string(row);
        first = 0;
      } else if (!conversion_of(body[0], row)) {
        var = std::string(row);
        row_mode = true;
        first = 0;
      }
      for (std::size_t i = first; i < body.size(); ++i) statement(body[i]);
      if (!proof.declined.empty()) return;
      if (!selection_seen)
        return decline("the body does not select with `torch.where(" + site.mask + "[i])`",
                       site.loop);
      index_uses(row);
      names_stay_inside();
      rows_used_once();
    }

    bool conversion_of(NodeId stmt, std::string_view row) {
      if (t.kind(stmt) != NodeKind::Assign) return false;
      const auto targets = t.children(stmt, GM_F(Assign, targets));
      if (targets.size() != 1 || t.kind(targets[0]) != NodeKind::Name) return false;
      NodeId v = t.child(stmt, GM_F(Assign, value));
      bool to_int = false;
      if (t.kind(v) == NodeKind::Call) {
        const NodeId f = t.child(v, GM_F(Call, func));
        if (name_id(t, f) == "int" && m.is_builtin(f) &&
            t.children(v, GM_F(Call, args)).size() == 1 &&
            t.children(v, GM_F(Call, keywords)).empty()) {
          v = t.children(v, GM_F(Call, args))[0];
          to_int = true;
        }
      }
      if (const NodeId recv = method_receiver(t, v, "item");
          recv && t.children(v, GM_F(Call, args)).empty()) {
        if (name_id(t, recv) != row) return false;
        item = true;
      } else if (t.kind(v) == NodeKind::Subscript && !to_int) {
        if (name_id(t, t.child(v, GM_F(Subscript, value))) != row ||
            int_literal(t, t.child(v, GM_F(Subscript, slice))) != 0)
          return false;
      } else {
        return false;
      }
      conversion = stmt;
      var = std::string(name_id(t, targets[0]));
      return true;
    }

    // `with torch.no_grad():` / `torch.enable_grad()` (no `as`): it only sets
    // the grad mode, which Dynamo traces, for rows of any number.
    bool grad_mode(NodeId with) const {
      for (NodeId item : t.children(with, GM_F(With, items))) {
        const NodeId e = t.child(item, GM_F(withitem, context_expr));
        if (t.child(item, GM_F(withitem, optional_vars)) || t.kind(e) != NodeKind::Call ||
            !t.children(e, GM_F(Call, args)).empty() ||
            !t.children(e, GM_F(Call, keywords)).empty())
          return false;
        const auto q = callee_name(m, e);
        if (!q || (*q != "torch.no_grad" && *q != "torch.enable_grad")) return false;
      }
      return true;
    }

    // `if i == E: continue` / `if i >= E: continue` at the top of the step,
    // E the mask's first padding class (Mixtral's `num_classes=n + 1`).
    bool skips_padding(NodeId st, bool& below) const {
      if (site.padding_from.empty() || !at_top(st)) return false;
      const auto body = t.children(st, GM_F(If, body));
      if (body.size() != 1 || t.kind(body[0]) != NodeKind::Continue ||
          !t.children(st, GM_F(If, orelse)).empty())
        return false;
      const NodeId test = t.child(st, GM_F(If, test));
      if (t.kind(test) != NodeKind::Compare || t.raw_list(test, GM_F(Compare, ops)).size() != 1)
        return false;
      const auto k = static_cast<NodeKind>(t.raw_list(test, GM_F(Compare, ops))[0].index);
      const NodeId e = t.children(test, GM_F(Compare, comparators))[0];
      const bool skips = (k == NodeKind::Eq || k == NodeKind::GtE) &&
                         name_id(t, t.child(test, GM_F(Compare, left))) == var &&
                         ctx.text_of(e) == site.padding_from;
      // Past it every index is below E: with `>=`, or with `==` when E is
      // the one padding class.
      if (skips && (k == NodeKind::GtE || site.padding_classes == 1) && readable_bound(e))
        below = true;
      return skips;
    }

    // A statement of the step itself: in the loop body, or in grad-mode
    // `with` blocks there (not under a branch).
    bool at_top(NodeId st) const {
      NodeId p = m.parent(st);
      while (p && p != site.loop && t.kind(p) == NodeKind::With && grad_mode(p)) p = m.parent(p);
      return p == site.loop;
    }

    // `if X.numel() == 0: continue` (also `len(X) == 0`, `X.shape[0] == 0`,
    // `not X.numel()`) on a selected name.
    bool empty_guard(NodeId stmt) {
      const auto body = t.children(stmt, GM_F(If, body));
      if (body.size() != 1 || t.kind(body[0]) != NodeKind::Continue ||
          !t.children(stmt, GM_F(If, orelse)).empty())
        return false;
      NodeId test = t.child(stmt, GM_F(If, test));
      NodeId size{};
      if (t.kind(test) == NodeKind::UnaryOp && op_of(t, test, GM_F(UnaryOp, op)) == NodeKind::Not) {
        size = t.child(test, GM_F(UnaryOp, operand));
      } else if (t.kind(test) == NodeKind::Compare) {
        const auto ops = t.raw_list(test, GM_F(Compare, ops));
        if (ops.size() != 1 || static_cast<NodeKind>(ops[0].index) != NodeKind::Eq ||
            int_literal(t, t.children(test, GM_F(Compare, comparators))[0]) != 0)
          return false;
        size = t.child(test, GM_F(Compare, left));
      }
      if (!size) return false;
      NodeId of{};
      if (const NodeId r = method_receiver(t, size, "numel");
          r && t.children(size, GM_F(Call, args)).empty()) {
        of = r;
      } else if (t.kind(size) == NodeKind::Call &&
                 name_id(t, t.child(size, GM_F(Call, func))) == "len" &&
                 m.is_builtin(t.child(size, GM_F(Call, func))) &&
                 t.children(size, GM_F(Call, args)).size() == 1) {
        of = t.children(size, GM_F(Call, args))[0];
      } else if (t.kind(size) == NodeKind::Subscript &&
                 int_literal(t, t.child(size, GM_F(Subscript, slice))) == 0) {
        const NodeId shape = t.child(size, GM_F(Subscript, value));
        if (t.kind(shape) == NodeKind::Attribute &&
            t.text(t.field(shape, GM_F(Attribute, attr))) == "shape")
          of = t.child(shape, GM_F(Attribute, value));
      }
      return of && selected.count(name_id(t, of)) != 0;
    }

    // `self.a` / `self.a.b`: a value the runtime can read before the loop
    // that stays the same through it (the body stores to local names only).
    bool self_attribute(NodeId e) const {
      if (t.kind(e) != NodeKind::Attribute) return false;
      while (t.kind(e) == NodeKind::Attribute) e = t.child(e, GM_F(Attribute, value));
      return name_id(t, e) == "self";
    }

    // A bound the runtime can read: a `self` attribute or a literal >= 0.
    bool readable_bound(NodeId e) const {
      return self_attribute(e) || int_literal(t, e).value_or(-1) >= 0;
    }

    // The subscript indexes the first dimension by the index: `i`, `i, ...`
    // (`row[0]` for the row kept as such).
    bool indexes_first(NodeId sl) const {
      if (t.kind(sl) == NodeKind::Tuple) {
        const auto elts = t.children(sl, GM_F(Tuple, elts));
        if (elts.empty()) return false;
        sl = elts[0];
      }
      if (row_mode)
        return t.kind(sl) == NodeKind::Subscript &&
               name_id(t, t.child(sl, GM_F(Subscript, value))) == var &&
               int_literal(t, t.child(sl, GM_F(Subscript, slice))) == 0;
      return name_id(t, sl) == var;
    }

    // The bound B the branch proves for the index: in the body of
    // `if i < B [and ...]:`, in the `else` of `if i >= B [or ...]:`; B an
    // integer literal or a `self` attribute (read by the runtime). "" for none.
    std::string bound_of(NodeId test, bool in_body) const {
      std::vector<NodeId> terms{test};
      if (t.kind(test) == NodeKind::BoolOp &&
          op_of(t, test, GM_F(BoolOp, op)) == (in_body ? NodeKind::And : NodeKind::Or)) {
        const auto values = t.children(test, GM_F(BoolOp, values));
        terms.assign(values.begin(), values.end());
      }
      for (NodeId c : terms) {
        if (t.kind(c) != NodeKind::Compare || t.raw_list(c, GM_F(Compare, ops)).size() != 1)
          continue;
        const auto k = static_cast<NodeKind>(t.raw_list(c, GM_F(Compare, ops))[0].index);
        NodeId left = t.child(c, GM_F(Compare, left));
        NodeId right = t.children(c, GM_F(Compare, comparators))[0];
        NodeKind op = k;
        if (name_id(t, right) == var) {  // `B > i` is `i < B`
          std::swap(left, right);
          op = k == NodeKind::Gt ? NodeKind::Lt : k == NodeKind::LtE ? NodeKind::GtE : NodeKind::Eq;
        }
        if (name_id(t, left) != var || (op != (in_body ? NodeKind::Lt : NodeKind::GtE))) continue;
        if (readable_bound(right)) return std::string(ctx.text_of(right));
      }
      return {};
    }

    template <class T>
    static void add_once(std::vector<T>& v, T x) {
      if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(std::move(x));
    }

    void statement(NodeId st) {
      const ast::DepthGuard guard(depth);
      if (guard.exceeded()) return decline("the loop body is nested too deeply", st);
      switch (t.kind(st)) {
        case NodeKind::Continue:
        case NodeKind::Pass: return;
        case NodeKind::If: {
          if (selection_seen && empty_guard(st)) {
            if (!at_top(st)) return decline("an emptiness test inside a branch", st);
            empty_guards.push_back(st);
            return;
          }
          const NodeId test = t.child(st, GM_F(If, test));
          if (bool below = false; skips_padding(st, below)) {
            padding_skipped = true;
            // The rest of the step runs for indices below E only.
            if (below) bounds.push_back(site.padding_from);
          }
          walk(t, test, [&](NodeId n) {
            if (t.kind(n) == NodeKind::Call) decline("a call in an `if` test of the body", n);
            if (t.kind(n) == NodeKind::Name &&
                (assigned.count(name_id(t, n)) || selected.count(name_id(t, n))))
              decline("an `if` test of the body reads tensor data", n);
          });
          const auto branch = [&](int field, std::string bound) {
            if (!bound.empty()) bounds.push_back(std::move(bound));
            for (NodeId s2 : t.children(st, field)) statement(s2);
            if (!bound.empty()) bounds.pop_back();
          };
          branch(GM_F(If, body), bound_of(test, true));
          branch(GM_F(If, orelse), bound_of(test, false));
          return;
        }
        case NodeKind::With:
          if (!grad_mode(st)) return decline("a `with` other than `torch.no_grad()`", st);
          for (NodeId s2 : t.children(st, GM_F(With, body))) statement(s2);
          return;
        case NodeKind::Assign: return assignment(st);
        case NodeKind::AugAssign: return aug_assignment(st);
        case NodeKind::Expr: return update(st);
        default: return decline("a statement the proof does not cover in the loop body", st);
      }
    }

    void assignment(NodeId st) {
      const auto targets = t.children(st, GM_F(Assign, targets));
      const NodeId value = t.child(st, GM_F(Assign, value));
      if (targets.size() != 1) return decline("a chained assignment in the loop body", st);
      std::vector<NodeId> names;
      if (t.kind(targets[0]) == NodeKind::Name) {
        names.push_back(targets[0]);
      } else if (t.kind(targets[0]) == NodeKind::Tuple) {
        for (NodeId e : t.children(targets[0], GM_F(Tuple, elts))) names.push_back(e);
      }
      for (NodeId n : names)
        if (t.kind(n) != NodeKind::Name)
          return decline("the loop body stores to something other than a local name", st);
      if (names.empty())
        return decline("the loop body stores to something other than a local name", st);
      std::string q;
      if (t.kind(value) == NodeKind::Call && torch_leaf_of(m, value, q) == "where" &&
          t.children(value, GM_F(Call, args)).size() == 1) {
        NodeId sel = t.children(value, GM_F(Call, args))[0];
        // Views of the row keep "all zero": `mask[i].squeeze(0)`.
        while (t.kind(sel) == NodeKind::Call) {
          const std::string_view view = method_name(m, sel);
          if (view != "squeeze" && view != "flatten" && view != "contiguous" && view != "t") break;
          for (NodeId a : t.children(sel, GM_F(Call, args))) pure(a);
          if (!t.children(sel, GM_F(Call, keywords)).empty()) break;
          sel = t.child(t.child(sel, GM_F(Call, func)), GM_F(Attribute, value));
        }
        if (t.kind(sel) != NodeKind::Subscript ||
            name_id(t, t.child(sel, GM_F(Subscript, value))) != site.mask ||
            name_id(t, t.child(sel, GM_F(Subscript, slice))) != var)
          return decline("a one-argument `torch.where` other than `torch.where(" + site.mask + "[" +
                             var + "])`",
                         st);
        if (selection_seen || !at_top(st))
          return decline("more than one selection, or a selection inside a branch", st);
        selection_seen = true;
        selection_row = sel;
        for (NodeId n : names) selected.emplace(name_id(t, n));
        return;
      }
      pure(value);
      // `layer = self.experts[i]`: a submodule the body may call.
      const NodeId root = chain_root(t, value);
      if (names.size() == 1 && value != root && name_id(t, root) == "self") {
        modules.emplace(name_id(t, names[0]));
        if (t.kind(value) == NodeKind::Subscript &&
            self_attribute(t.child(value, GM_F(Subscript, value))) &&
            indexes_first(t.child(value, GM_F(Subscript, slice))))
          module_containers[std::string(name_id(t, names[0]))] =
              std::string(ctx.text_of(t.child(value, GM_F(Subscript, value))));
      }
      for (NodeId n : names) {
        const std::string_view id = name_id(t, n);
        if (id == var || id == site.mask || id == site.rows || selected.count(id))
          return decline("the loop body rebinds `" + std::string(id) + "`", st);
        assigned.emplace(id);
      }
    }

    // The names the body binds only to storage the step created: an
    // operator's or a non-view op's result, or what may alias such names
    // only (`h = self.dropout(h)`); the greatest fixpoint.
    std::set<std::string, std::less<>> step_fresh() {
      std::set<std::string, std::less<>> fresh = assigned;
      fresh.insert(selected.begin(), selected.end());
      for (bool shrank = true; shrank;) {
        shrank = false;
        walk(t, site.loop, [&](NodeId n) {
          if (t.kind(n) != NodeKind::Assign) return;
          const NodeId v = t.child(n, GM_F(Assign, value));
          std::set<std::string, std::less<>> outside;  // names it reads that are not fresh
          walk(t, v, [&](NodeId r) {
            if (!name_id(t, r).empty() && !fresh.count(name_id(t, r)))
              outside.emplace(name_id(t, r));
          });
          if (!value_may_alias(v, outside)) return;
          walk(t, n, [&](NodeId tg) {
            if (t.kind(tg) != NodeKind::Name || is_load(t, tg)) return;
            if (const auto it = fresh.find(name_id(t, tg)); it != fresh.end()) {
              fresh.erase(it);
              shrank = true;
            }
          });
        });
      }
      return fresh;
    }

    // A submodule call (`self.act(h)`, `self[f"e{i}"](h)`, `layer(h)`) is
    // taken to return fresh storage or one of its arguments, never its own
    // state (part of the unsafe fix's assumption that it computes row by row
    // without effects): only its arguments can alias; anything else as
    // may_alias says.
    bool value_may_alias(NodeId v, const std::set<std::string, std::less<>>& names) const {
      if (t.kind(v) != NodeKind::Call) return may_alias(m, v, names, 0);
      const NodeId func = t.child(v, GM_F(Call, func));
      const NodeId root = chain_root(t, func);
      const std::string_view id = name_id(t, root);
      const bool submodule = root == func
                                 ? modules.count(id) != 0
                                 : id == "self" && !m.qualified_name(func) && m.callees(v).empty();
      if (!submodule) return may_alias(m, v, names, 0);
      for (NodeId a : t.children(v, GM_F(Call, args)))
        if (may_alias(m, a, names, 0)) return true;
      for (NodeId k : t.children(v, GM_F(Call, keywords)))
        if (may_alias(m, t.child(k, GM_F(keyword, value)), names, 0)) return true;
      return false;
    }

    // `h *= v` (`+=`, `-=`) on a name the body bound to storage the step
    // created (step_fresh): it updates nothing outside the step. That `h`
    // is bound earlier in the step is checked by flow().
    void aug_assignment(NodeId st) {
      const NodeId target = t.child(st, GM_F(AugAssign, target));
      const NodeKind op = op_of(t, st, GM_F(AugAssign, op));
      const std::string_view id = name_id(t, target);
      if (id.empty() || !assigned.count(id) || modules.count(id))
        return decline("an augmented assignment to something the body did not bind", st);
      if (op != NodeKind::Add && op != NodeKind::Sub && op != NodeKind::Mult)
        return decline("an augmented assignment other than `+=`, `-=`, `*=`", st);
      if (!step_fresh().count(id))
        return decline(
            "`" + std::string(ctx.text_of(st)) + "` may update a tensor the step did not create",
            st);
      pure(t.child(st, GM_F(AugAssign, value)));
    }

    // `acc.index_add_(0, selected, value)`
    void update(NodeId st) {
      const NodeId call = t.child(st, GM_F(Expr, value));
      const NodeId acc = method_receiver(t, call, "index_add_");
      const auto args = t.children(call, GM_F(Call, args));
      if (!acc || args.size() != 3 || !t.children(call, GM_F(Call, keywords)).empty() ||
          t.kind(acc) != NodeKind::Name)
        return decline("an effect other than `acc.index_add_(0, selected, value)`", st);
      if (assigned.count(name_id(t, acc)) || !selection_seen)
        return decline("`index_add_` into a name the body assigns, or before the selection", st);
      if (int_literal(t, args[0]) != 0 || !selected.count(name_id(t, args[1])))
        return decline("`index_add_` not along dimension 0 at the selected rows", st);
      // Adding into the mask (or a view of it) would change the rows later
      // steps select: an index left out could select rows again.
      if (site.aliases.count(name_id(t, acc)))
        return decline("`index_add_` into the mask or a tensor bound from it", st);
      pure(args[2]);
    }

    // Pure and total, or a call the fix marks unsafe.
    void pure(NodeId e) {
      const ast::DepthGuard guard(depth);
      if (guard.exceeded()) return decline("an expression nested too deeply", e);
      switch (t.kind(e)) {
        case NodeKind::Name:
        case NodeKind::Constant: return;
        case NodeKind::Attribute: return pure(t.child(e, GM_F(Attribute, value)));
        case NodeKind::Subscript: {
          const NodeId obj = t.child(e, GM_F(Subscript, value));
          const NodeId sl = t.child(e, GM_F(Subscript, slice));
          bool by_index = false;  // `w[i]`, `w[i, :]`, `self[f"e{i}"]`, `w[row[0]]`
          if (!in_expert) walk(t, sl, [&](NodeId x) { by_index |= name_id(t, x) == var; });
          if (by_index && name_id(t, obj) != site.mask) {
            if (!site.padding_from.empty() && !padding_skipped &&
                (bounds.empty() || bounds.back() != site.padding_from))
              return decline("the mask has padding classes from `" + site.padding_from +
                                 "` on that the loop does not skip before indexing `" +
                                 std::string(ctx.text_of(obj)) + "` by them",
                             e);
            if (self_attribute(obj) && indexes_first(sl)) {
              std::string text(ctx.text_of(obj));
              if (bounds.empty())
                add_once(entries, std::move(text));
              else
                add_once(guarded, std::make_pair(std::move(text), bounds.back()));
            } else if (const auto key = key_template(sl);
                       key && (name_id(t, obj) == "self" || self_attribute(obj)) &&
                       bounds.empty()) {
              add_once(keys, std::make_pair(std::string(ctx.text_of(obj)), *key));
            } else {
              unsafe("`" + std::string(ctx.text_of(obj)) +
                     "` has an entry for every index of the mask");
            }
          }
          pure(obj);
          return pure(sl);
        }
        case NodeKind::Slice:
          for (int f : {GM_F(Slice, lower), GM_F(Slice, upper), GM_F(Slice, step)})
            if (NodeId x = t.child(e, f)) pure(x);
          return;
        case NodeKind::Tuple:
          for (NodeId x : t.children(e, GM_F(Tuple, elts))) pure(x);
          return;
        case NodeKind::JoinedStr:  // formats ints and 0-d tensors alike (index_uses)
          for (NodeId x : t.children(e, GM_F(JoinedStr, values))) pure(x);
          return;
        case NodeKind::FormattedValue:
          if (NodeId spec = t.child(e, GM_F(FormattedValue, format_spec))) pure(spec);
          return pure(t.child(e, GM_F(FormattedValue, value)));
        case NodeKind::UnaryOp: return pure(t.child(e, GM_F(UnaryOp, operand)));
        case NodeKind::BinOp: {
          const NodeKind op = op_of(t, e, GM_F(BinOp, op));
          if (op != NodeKind::Add && op != NodeKind::Sub && op != NodeKind::Mult &&
              op != NodeKind::MatMult)
            return decline("an operator that may raise on Python numbers", e);
          pure(t.child(e, GM_F(BinOp, left)));
          return pure(t.child(e, GM_F(BinOp, right)));
        }
        case NodeKind::Call: return call(e);
        default: return decline("an expression the proof does not cover", e);
      }
    }

    void call(NodeId e) {
      const NodeId func = t.child(e, GM_F(Call, func));
      for (NodeId a : t.children(e, GM_F(Call, args))) {
        if (t.kind(a) == NodeKind::Starred) return decline("a `*args` call", e);
        pure(a);
      }
      for (NodeId k : t.children(e, GM_F(Call, keywords))) {
        if (ast::Tree::is_none_string(t.field(k, GM_F(keyword, arg))))
          return decline("a `**kwargs` call", e);
        pure(t.child(k, GM_F(keyword, value)));
      }
      // Pure and total, and no reduction: on zero rows `max`/`amax`/`argmax`
      // raise (the op table's totality allows errors that depend on shapes).
      const auto empty_ok = [](const sema::ops::OpInfo* op) {
        return op && op->predicable() && !op->has(sema::ops::Reduction);
      };
      if (const auto q = m.qualified_name(func)) {
        const sema::ops::OpInfo* op = sema::ops::lookup_qualified(*q);
        if (empty_ok(op) && !op->has(sema::ops::MethodSizeArgs)) return;
        if (*q == "int" && m.is_builtin(func)) return;
        return decline(
            "`" + *q + "` is not a pure, total torch operation that takes zero rows (op table)", e);
      }
      if (t.kind(func) == NodeKind::Name && modules.count(name_id(t, func))) {
        proof.calls_submodule = true;
        if (const auto it = module_containers.find(name_id(t, func));
            it != module_containers.end() && expert(e, it->second))
          return;
        return unsafe("`" + std::string(name_id(t, func)) +
                      "` computes row by row without effects");
      }
      // `self[f"expert_{i}"](x)`: a submodule of a ModuleDict.
      if (t.kind(func) == NodeKind::Subscript &&
          name_id(t, t.child(func, GM_F(Subscript, value))) == "self") {
        pure(func);
        proof.calls_submodule = true;
        if (const auto key = key_template(t.child(func, GM_F(Subscript, slice)));
            key && !in_expert) {
          if (const NodeId cls = stored_entry_class(); cls && expert_class(cls, "self", *key))
            return;
        }
        return unsafe("`" + std::string(ctx.text_of(func)) +
                      "` computes row by row without effects");
      }
      if (t.kind(func) != NodeKind::Attribute) return decline("a call the proof does not cover", e);
      const NodeId recv = t.child(func, GM_F(Attribute, value));
      const std::string_view meth = t.text(t.field(func, GM_F(Attribute, attr)));
      if (name_id(t, recv) == "self") {
        const auto targets = m.callees(e);
        if (targets.size() == 1 && pure_method(targets[0])) return;
        if (!targets.empty()) return decline("`self." + std::string(meth) + "` is not pure", e);
        // In an expert: a layer of it, which the runtime checks.
        if (in_expert) return add_once(expert_layers, std::string(meth));
        // Called on the rows of every index while compiling, on zero rows
        // for those the mask leaves out: the runtime unrolls only when it
        // is an elementwise activation (no effects, any number of rows).
        proof.calls_submodule = true;
        return add_once(elementwise, std::string(ctx.text_of(func)));
      }
      // `self.w[i].float()`: a method of a tensor the class holds.
      if (t.kind(recv) == NodeKind::Subscript &&
          m.fact(t.child(recv, GM_F(Subscript, value))).kind == sema::TensorKind::Tensor) {
        // the op table decides, below
      } else if (t.kind(recv) == NodeKind::Subscript &&
                 t.kind(t.child(recv, GM_F(Subscript, value))) == NodeKind::Attribute &&
                 name_id(t, t.child(t.child(recv, GM_F(Subscript, value)),
                                    GM_F(Attribute, value))) == "self") {
        pure(recv);
        proof.calls_submodule = true;
        return unsafe("`" + std::string(ctx.text_of(func)) +
                      "` computes row by row without effects");
      }
      const sema::ops::OpInfo* op = sema::ops::lookup(meth);
      // `x.reshape(k, -1)` of zero elements raises (the -1 could be
      // anything); with the -1 first, the other sizes fix it to 0.
      if (op && op->has(sema::ops::MethodSizeArgs)) {
        auto sizes = t.children(e, GM_F(Call, args));
        // `x.view(shape)` with `shape = (-1, h, w)` bound once in the function
        if (sizes.size() == 1 && t.kind(sizes[0]) == NodeKind::Name) {
          const sema::Binding* b = m.resolve(sizes[0]);
          if (b && b->kind == sema::BindingKind::Assign && b->value &&
              m.bindings_of(b->scope, b->name).size() == 1 && t.kind(b->value) == NodeKind::Tuple)
            sizes = t.children(b->value, GM_F(Tuple, elts));
        } else if (sizes.size() == 1 && t.kind(sizes[0]) == NodeKind::Tuple) {
          sizes = t.children(sizes[0], GM_F(Tuple, elts));
        }
        if (sizes.empty() || int_literal(t, sizes[0]) != -1)
          return decline(
              "`." + std::string(meth) + "()` may not take zero rows (its first size is not -1)",
              e);
      }
      if (!empty_ok(op) || op->method.ret == sema::Ret::Unknown)
        return decline("`." + std::string(meth) +
                           "()` is not a pure, total tensor method that takes zero rows (op table)",
                       e);
      pure(recv);
    }

    // `layer(x)` with `layer = container[i]`: the call resolves to the
    // forward of one in-file class C at module level whose body is pure
    // (pure_method) but for calls of its attributes (`self.w1(h)`), left to
    // the runtime, which checks that every entry of the container is exactly
    // a C whose attributes so called are layers it knows. False, with the
    // proof as it was, otherwise.
    bool expert(NodeId call, const std::string& container) {
      if (in_expert) return false;
      const auto targets = m.callees(call);
      if (targets.size() != 1 || t.kind(targets[0]) != NodeKind::FunctionDef ||
          t.text(t.field(targets[0], GM_F(FunctionDef, name))) != "forward")
        return false;
      return expert_class(m.parent(targets[0]), container, {});
    }

    // The class of the entries the class holding the loop stores into itself
    // (`self[f"expert_{i}"] = C(config)` in its methods, a ModuleDict): one
    // module-level class C of the file for every such store, else none. The
    // runtime checks each entry is exactly a C.
    NodeId stored_entry_class() const {
      NodeId owner = m.parent(site.function);
      if (!owner || t.kind(owner) != NodeKind::ClassDef) return {};
      NodeId found{};
      bool bad = false;
      walk(t, owner, [&](NodeId n) {
        if (t.kind(n) != NodeKind::Assign) return;
        for (NodeId tg : t.children(n, GM_F(Assign, targets))) {
          if (t.kind(tg) != NodeKind::Subscript ||
              name_id(t, t.child(tg, GM_F(Subscript, value))) != "self")
            continue;
          const NodeId v = t.child(n, GM_F(Assign, value));
          NodeId cls{};
          if (t.kind(v) == NodeKind::Call &&
              t.kind(t.child(v, GM_F(Call, func))) == NodeKind::Name) {
            const auto global = m.bindings_of(0, name_id(t, t.child(v, GM_F(Call, func))));
            if (global.size() == 1 && global[0]->kind == sema::BindingKind::ClassDef)
              cls = global[0]->node;
          }
          if (!cls || (found && found != cls)) bad = true;
          found = cls;
        }
      });
      return bad ? NodeId{} : found;
    }

    // An expert of class `cls` (a module-level class of the file): its
    // `forward` is pure but for calls of its attributes, left to the runtime.
    bool expert_class(NodeId cls, const std::string& container, const std::string& key) {
      if (!cls || t.kind(cls) != NodeKind::ClassDef || m.parent(cls) != t.root()) return false;
      NodeId forward{};
      for (NodeId st : t.children(cls, GM_F(ClassDef, body)))
        if (t.kind(st) == NodeKind::FunctionDef &&
            t.text(t.field(st, GM_F(FunctionDef, name))) == "forward")
          forward = st;
      if (!forward) return false;
      // The name means that class where the loop runs.
      const std::string_view name = t.text(t.field(cls, GM_F(ClassDef, name)));
      const auto global = m.bindings_of(0, name);
      if (global.size() != 1 || global[0]->kind != sema::BindingKind::ClassDef) return false;
      for (sema::ScopeId sc = m.scope_opened_by(site.function); sc != sema::kNone && sc != 0;
           sc = m.scope(sc).parent)
        if (m.scope(sc).kind != sema::ScopeKind::Class && !m.bindings_of(sc, name).empty())
          return false;
      const Proof saved = proof;
      in_expert = true;
      expert_layers.clear();
      const bool ok = pure_method(forward) && proof.unsafe_why == saved.unsafe_why;
      in_expert = false;
      if (!ok) {
        proof = saved;
        return false;
      }
      for (const Expert& x : experts)
        if (x.container == container && x.cls == name && x.layers == expert_layers && x.key == key)
          return true;
      experts.push_back({container, std::string(name), expert_layers, key});
      return true;
    }

    // `f"expert_{i}"` (`f"expert_{row[0]}"` for the row kept as such): the
    // key of the index as a `str.format` template ("expert_{}"); an f-string
    // field without conversion or format spec formats an int and a 0-d
    // integer tensor alike. nullopt for any other key.
    std::optional<std::string> key_template(NodeId sl) const {
      if (t.kind(sl) != NodeKind::JoinedStr) return std::nullopt;
      std::string out;
      int fields = 0;
      for (NodeId x : t.children(sl, GM_F(JoinedStr, values))) {
        if (t.kind(x) == NodeKind::Constant) {
          const auto& c = t.constant_at(t.field(x, GM_F(Constant, value)));
          if (c.kind != ast::ConstantValue::Kind::Str) return std::nullopt;
          for (char ch : t.str(c.text)) {
            out += ch;
            if (ch == '{' || ch == '}') out += ch;
          }
          continue;
        }
        if (t.kind(x) != NodeKind::FormattedValue ||
            static_cast<int>(t.field(x, GM_F(FormattedValue, conversion)).a) != -1 ||
            t.child(x, GM_F(FormattedValue, format_spec)))
          return std::nullopt;
        const NodeId v = t.child(x, GM_F(FormattedValue, value));
        const bool index = row_mode ? t.kind(v) == NodeKind::Subscript &&
                                          name_id(t, t.child(v, GM_F(Subscript, value))) == var &&
                                          int_literal(t, t.child(v, GM_F(Subscript, slice))) == 0
                                    : name_id(t, v) == var;
        if (!index) return std::nullopt;
        out += "{}";
        ++fields;
      }
      if (fields != 1) return std::nullopt;
      return out;
    }

    // A method of the class whose body is assignments to local names and a
    // return, of pure expressions, also under `if` tests that read only
    // types (static_test).
    bool pure_method(NodeId def) {
      if (t.kind(def) != NodeKind::FunctionDef) return false;
      return pure_block(t.children(def, GM_F(FunctionDef, body)));
    }

    bool pure_block(std::span<const NodeId> stmts) {
      const ast::DepthGuard guard(depth);
      if (guard.exceeded()) return false;
      for (NodeId st : stmts) {
        if (t.kind(st) == NodeKind::If) {
          if (!static_test(t.child(st, GM_F(If, test))) ||
              !pure_block(t.children(st, GM_F(If, body))) ||
              !pure_block(t.children(st, GM_F(If, orelse))))
            return false;
        } else if (t.kind(st) == NodeKind::Return) {
          if (NodeId v = t.child(st, GM_F(Return, value))) pure(v);
        } else if (t.kind(st) == NodeKind::Assign) {
          for (NodeId tg : t.children(st, GM_F(Assign, targets))) {
            bool names_only = t.kind(tg) == NodeKind::Name;
            if (t.kind(tg) == NodeKind::Tuple) {
              names_only = true;
              for (NodeId x : t.children(tg, GM_F(Tuple, elts)))
                names_only &= t.kind(x) == NodeKind::Name;
            }
            if (!names_only) return false;
          }
          pure(t.child(st, GM_F(Assign, value)));
        } else if (!(t.kind(st) == NodeKind::Expr &&
                     t.kind(t.child(st, GM_F(Expr, value))) == NodeKind::Constant)) {
          return false;  // not a docstring
        }
      }
      return proof.declined.empty();
    }

    // A test that reads no tensor data and cannot raise, the same for any
    // number of rows: `isinstance(...)` (the builtin), comparisons of dtypes,
    // devices and constants (`h.dtype != self.w.weight.dtype`,
    // `w.dtype != torch.int8`), and `and`/`or`/`not` of those.
    bool static_test(NodeId e) {
      switch (t.kind(e)) {
        case NodeKind::BoolOp:
          for (NodeId v : t.children(e, GM_F(BoolOp, values)))
            if (!static_test(v)) return false;
          return true;
        case NodeKind::UnaryOp:
          return op_of(t, e, GM_F(UnaryOp, op)) == NodeKind::Not &&
                 static_test(t.child(e, GM_F(UnaryOp, operand)));
        case NodeKind::Call: {
          const NodeId f = t.child(e, GM_F(Call, func));
          const auto args = t.children(e, GM_F(Call, args));
          if (name_id(t, f) != "isinstance" || !m.is_builtin(f) || args.size() != 2 ||
              !t.children(e, GM_F(Call, keywords)).empty())
            return false;
          for (NodeId a : args)
            if (!chain_of_names(a)) return false;
          return true;
        }
        case NodeKind::Compare: {
          for (NodeId op : t.raw_list(e, GM_F(Compare, ops))) {
            const auto k = static_cast<NodeKind>(op.index);
            if (k != NodeKind::Eq && k != NodeKind::NotEq && k != NodeKind::Is &&
                k != NodeKind::IsNot)
              return false;
          }
          const auto type_like = [&](NodeId x) {
            if (t.kind(x) == NodeKind::Constant) return true;
            if (t.kind(x) != NodeKind::Attribute || !chain_of_names(x)) return false;
            const std::string_view attr = t.text(t.field(x, GM_F(Attribute, attr)));
            if (attr == "dtype" || attr == "device") return true;
            const auto q = m.qualified_name(x);  // `torch.int8`
            return q && q->starts_with("torch.");
          };
          if (!type_like(t.child(e, GM_F(Compare, left)))) return false;
          for (NodeId x : t.children(e, GM_F(Compare, comparators)))
            if (!type_like(x)) return false;
          return true;
        }
        default: return false;
      }
    }

    // `a.b.c`: names and attributes only (reading them runs no code of ours
    // beyond attribute lookups on modules and tensors).
    bool chain_of_names(NodeId e) const {
      while (t.kind(e) == NodeKind::Attribute) e = t.child(e, GM_F(Attribute, value));
      return t.kind(e) == NodeKind::Name;
    }

    // The index is used only where an int and a 0-d integer tensor agree;
    // the row variable, when it is not the index, only by the conversion.
    void index_uses(std::string_view row) {
      const std::uint32_t after =
          conversion ? t.at(conversion).end : t.at(t.children(site.loop, GM_F(For, body))[0]).begin;
      walk(t, site.loop, [&](NodeId n) {
        if (t.kind(n) != NodeKind::Name || t.at(n).begin < after) return;
        const std::string_view id = name_id(t, n);
        if (id == row && row != var)
          return decline("the row variable is used after the conversion", n);
        if (id != var) return;
        if (!is_load(t, n)) return decline("the loop body rebinds the index", n);
        NodeId p = m.parent(n);
        if (row_mode) {
          // `[i]` and a one-element row index a tensor alike; `[i][0]` is the
          // int, then used as an index below.
          if (t.kind(p) == NodeKind::Subscript && t.child(p, GM_F(Subscript, slice)) == n &&
              name_id(t, t.child(p, GM_F(Subscript, value))) == site.mask)
            return;
          if (t.kind(p) != NodeKind::Subscript || t.child(p, GM_F(Subscript, value)) != n ||
              int_literal(t, t.child(p, GM_F(Subscript, slice))) != 0)
            return decline("the row `" + var + "` is used other than as `" + site.mask + "[" + var +
                               "]` or `" + var + "[0]`",
                           n);
          n = p;
          p = m.parent(p);
        }
        if (t.kind(p) == NodeKind::Tuple) p = m.parent(p);
        if (t.kind(p) == NodeKind::Subscript && t.child(p, GM_F(Subscript, value)) != n) return;
        if (t.kind(p) == NodeKind::FormattedValue &&
            static_cast<int>(t.field(p, GM_F(FormattedValue, conversion)).a) == -1 &&
            !t.child(p, GM_F(FormattedValue, format_spec)))
          return;
        if (t.kind(p) == NodeKind::Call && name_id(t, t.child(p, GM_F(Call, func))) == "int")
          return;
        if (t.kind(p) == NodeKind::Compare) {
          // `is` would compare identities, which an int and a tensor do not share.
          for (NodeId op : t.raw_list(p, GM_F(Compare, ops))) {
            const auto k = static_cast<NodeKind>(op.index);
            if (k == NodeKind::Is || k == NodeKind::IsNot || k == NodeKind::In ||
                k == NodeKind::NotIn)
              return decline("the index `" + var + "` is compared by identity or membership", n);
          }
          NodeId up = m.parent(p);
          while (t.kind(up) == NodeKind::BoolOp || t.kind(up) == NodeKind::UnaryOp)
            up = m.parent(up);
          if (t.kind(up) == NodeKind::If) return;
        }
        decline("the index `" + var + "` is used as a tensor value", n);
      });
    }

    // Names the body assigns are not read outside it, and every read of one
    // in a step follows an assignment on every path of that step (so no value
    // crosses from one step to the next, which the steps added while
    // compiling would change).
    using Names = std::set<std::string, std::less<>>;
    void names_stay_inside() {
      const std::uint32_t lb = t.at(site.loop).begin, le = t.at(site.loop).end;
      Names all = assigned;
      all.insert(selected.begin(), selected.end());
      all.insert(var);
      walk(t, site.function, [&](NodeId n) {
        if (t.kind(n) != NodeKind::Name || !is_load(t, n) || !all.count(name_id(t, n))) return;
        if (t.at(n).begin < lb || t.at(n).begin >= le)
          decline("`" + std::string(name_id(t, n)) + "`, assigned in the loop, is read outside it",
                  n);
      });
      Names defined{var};
      const auto body = t.children(site.loop, GM_F(For, body));
      flow(std::vector<NodeId>(body.begin(), body.end()), defined, all);
    }

    void reads_defined(NodeId e, const Names& defined, const Names& all) {
      walk(t, e, [&](NodeId n) {
        if (t.kind(n) == NodeKind::Name && is_load(t, n) && all.count(name_id(t, n)) &&
            !defined.count(name_id(t, n)))
          decline("`" + std::string(name_id(t, n)) + "` may be read before the step assigns it", n);
      });
    }

    // The names assigned on every path through `stmts`; nullopt when no path
    // falls through (each ends in `continue`).
    std::optional<Names> flow(const std::vector<NodeId>& stmts, Names defined, const Names& all) {
      const ast::DepthGuard guard(depth);
      if (guard.exceeded()) {
        decline("the loop body is nested too deeply", site.loop);
        return std::nullopt;
      }
      for (NodeId st : stmts) {
        switch (t.kind(st)) {
          case NodeKind::Continue: return std::nullopt;
          case NodeKind::If: {
            reads_defined(t.child(st, GM_F(If, test)), defined, all);
            const auto body = t.children(st, GM_F(If, body));
            const auto orelse = t.children(st, GM_F(If, orelse));
            auto a = flow(std::vector<NodeId>(body.begin(), body.end()), defined, all);
            auto b = flow(std::vector<NodeId>(orelse.begin(), orelse.end()), defined, all);
            if (!a && !b) return std::nullopt;
            if (!a || !b) {
              defined = a ? *a : *b;
            } else {
              Names both;
              for (const auto& n : *a)
                if (b->count(n)) both.insert(n);
              defined = std::move(both);
            }
            break;
          }
          case NodeKind::With: {
            const auto body = t.children(st, GM_F(With, body));
            auto inner = flow(std::vector<NodeId>(body.begin(), body.end()), defined, all);
            if (!inner) return std::nullopt;
            defined = std::move(*inner);
            break;
          }
          case NodeKind::AugAssign: {
            const NodeId target = t.child(st, GM_F(AugAssign, target));
            if (all.count(name_id(t, target)) && !defined.count(name_id(t, target)))
              decline("`" + std::string(name_id(t, target)) +
                          "` may be updated before the step assigns it",
                      st);
            reads_defined(t.child(st, GM_F(AugAssign, value)), defined, all);
            break;
          }
          case NodeKind::Assign:
            reads_defined(t.child(st, GM_F(Assign, value)), defined, all);
            walk(t, st, [&](NodeId n) {
              if (t.kind(n) == NodeKind::Name && !is_load(t, n)) defined.emplace(name_id(t, n));
            });
            break;
          default: reads_defined(st, defined, all);
        }
      }
      return defined;
    }

    void rows_used_once() {
      if (site.rows_stmt == site.loop) return;  // `for i in x.nonzero():`
      int loads = 0;
      walk(t, site.function, [&](NodeId n) {
        if (t.kind(n) == NodeKind::Name && is_load(t, n) && name_id(t, n) == site.rows) ++loads;
      });
      if (loads != 1)
        decline("`" + site.rows + "` is used elsewhere than by the loop", site.rows_stmt);
    }
  };
};

}  // namespace

const lint::Rule& gm409_nonzero_row_loop() {
  static const NonzeroRowLoop rule;
  return rule;
}

}  // namespace gm::rules

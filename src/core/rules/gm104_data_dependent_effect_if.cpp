// GM104: an `if` on tensor data whose two branches end in the same statement
// with different tensor values (`self.register_buffer("f", a)` /
// `self.register_buffer("f", b)`, `self.scale = a` / `self.scale = b`) ->
// that statement once, with `_graphmend_rt.where` in the differing places.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "edits/text.h"
#include "edits/tree_query.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM104 data-dependent-effect-if

## What it detects
Inside a compiled region, an `if`/`else` on tensor data (the tests GM101
reports) whose two branches end in the same statement except for some
values: the same call for its effect with different arguments
(`self.register_buffer("inv_freq", long_freq, persistent=False)` in one
branch, `... original_freq ...` in the other), or the same attribute or
subscript store with different values (`self.scale = a` / `self.scale = b`).
GM101 handles branches that only assign local names.

## Why Dynamo breaks there
Python must know which branch to run, so Dynamo needs the tensor's value:
"Data-dependent branching" (GB0170). It ends the graph before the `if`
(inside a loop, or in a frame it cannot resume, it skips the whole frame).

## The rewrite
The condition is computed first (into a fresh local when there is anything
to run before the statement, when there are several differing values, or when
the common statement runs code, e.g. a call, before the differing value:
the original evaluated the test before all of it), then the statements
before the common one, the
`if` branch's then the `else` branch's, then the common statement once, each
differing value replaced by `_graphmend_rt.where(cond, if_value,
else_value)`:

    if seq_len > original_max:
        if not hasattr(self, "long_inv_freq"):
            self.long_inv_freq = self.init_fn(self.config, device)
        self.register_buffer("inv_freq", self.long_inv_freq, persistent=False)
    else:
        self.original_inv_freq = self.original_inv_freq.to(device)
        self.register_buffer("inv_freq", self.original_inv_freq, persistent=False)
->
    _graphmend_cond = seq_len > original_max
    if not hasattr(self, "long_inv_freq"):
        self.long_inv_freq = self.init_fn(self.config, device)
    self.original_inv_freq = self.original_inv_freq.to(device)
    self.register_buffer("inv_freq", _graphmend_rt.where(_graphmend_cond, self.long_inv_freq, self.original_inv_freq), persistent=False)

`_graphmend_rt.where` (docs/runtime.md) is exactly `if_value if cond else
else_value` when run eagerly, and emits `torch.where` while tracing only when
that gives the same value (0-d condition, one dtype, shape and device,
autograd-safe); otherwise it evaluates the original choice. Comments stay
with the statements they annotate; a common statement that does not fit the
file's longest line is split as black splits calls.

## Safe and unsafe
The statements before the common one now run on both paths. The fix is
**safe** when all of them are assignments of local names, used only inside
their branch, with pure and total values (GM101's test). It is **unsafe**
(applied only with `--unsafe-fixes`, or `install(unsafe=True)`) when it
speculates module state, which graphmend cannot prove invisible:

- an existence-guarded memo fill, `if not hasattr(obj, "a"): obj.a[, _] =
  value`: `obj.a` is now created on the first call of either path (the
  value's call runs earlier than before, and may not be pure);
- a value-preserving normalisation, `obj.a = obj.a.to(...)`: `obj.a` moves
  or converts on the other path too.

Either is what the GraphMend paper does for Phi-3's LongRoPE switch.

## When it declines
- a statement before the common one is anything else (calls for effect,
  other stores, loops, `return`), or a memo fill or normalisation whose
  target is not the same `obj.a` on both sides;
- the `else` branch's statements, the common statement's shared parts, or a
  value of one branch read something the other branch's statements write
  (the order of effects would change);
- a local assigned before the common statement is used after the `if`, read
  by the other branch, or bound in both branches;
- a differing value is not proven pure and total, or is a Python value
  (flag, constant, `None`);
- a name or attribute the common statement uses or stores is updated in
  place anywhere (in the function for names, in the file for attributes):
  `where` returns a new tensor, so aliasing would change;
- the condition cannot be lowered to one expression (see GM101), the
  statements contain a triple-quoted string (re-indenting could change it),
  or a statement does not start its line.

## Example
Before:

    def forward(self, x):
        h = self.proj(x)
        if h.mean() > 0:
            self.register_buffer("last", h.amax(0), persistent=False)
        else:
            self.register_buffer("last", h.amin(0), persistent=False)
        return h

After:

    def forward(self, x):
        h = self.proj(x)
        self.register_buffer(
            "last",
            _graphmend_rt.where(h.mean() > 0, h.amax(0), h.amin(0)),
            persistent=False,
        )
        return h

(the call does not fit the file's longest line, so it is split the way
black splits calls).
)md";

std::string first_line(const lint::RuleContext& ctx, NodeId s) {
  std::string_view text = ctx.text_of(s);
  return std::string(text.substr(0, text.find('\n')));
}

// Attribute names and local names a subtree reads (loads), and the string
// constants it holds (`hasattr(self, "a")`, `register_buffer("a", ...)` read
// or write attribute `a` by name).
struct Uses {
  std::set<std::string> attrs, names;
};
void collect_reads(const ast::Tree& tree, NodeId root, Uses& u) {
  ast::preorder(tree, root, [&](NodeId n) {
    switch (tree.kind(n)) {
      case NodeKind::Attribute:
        u.attrs.emplace(tree.text(tree.field(n, GM_F(Attribute, attr))));
        break;
      case NodeKind::Name:
        if (static_cast<NodeKind>(tree.field(n, GM_F(Name, ctx)).a) == NodeKind::Load)
          u.names.emplace(tree.text(tree.field(n, GM_F(Name, id))));
        break;
      case NodeKind::Constant: {
        const auto& c = tree.constant_at(tree.field(n, GM_F(Constant, value)));
        if (c.kind == ast::ConstantValue::Kind::Str) u.attrs.emplace(tree.str(c.text));
        break;
      }
      default: break;
    }
  });
}

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b,
                std::string* which) {
  for (const std::string& x : a)
    if (b.count(x)) return *which = x, true;
  return false;
}

// The names and attributes whose tensors a value may share storage with:
// `x` -> x, `obj.a` -> a, `r.view(...)`/`r[i]` -> r's, calls -> their
// receiver's and arguments'; arithmetic makes new tensors.
// (A set of roots, so the order of the explicit work list does not matter.)
void alias_roots(const ast::Tree& tree, NodeId root, Uses& u) {
  std::vector<NodeId> todo{root};
  while (!todo.empty()) {
    const NodeId e = todo.back();
    todo.pop_back();
    switch (tree.kind(e)) {
      case NodeKind::Name: u.names.emplace(tree.text(tree.field(e, GM_F(Name, id)))); break;
      case NodeKind::Attribute:
        u.attrs.emplace(tree.text(tree.field(e, GM_F(Attribute, attr))));
        break;
      case NodeKind::Subscript: todo.push_back(tree.child(e, GM_F(Subscript, value))); break;
      case NodeKind::Call: {
        const NodeId f = tree.child(e, GM_F(Call, func));
        if (tree.kind(f) == NodeKind::Attribute)
          todo.push_back(tree.child(f, GM_F(Attribute, value)));
        for (NodeId a : tree.children(e, GM_F(Call, args))) todo.push_back(a);
        for (NodeId k : tree.children(e, GM_F(Call, keywords)))
          todo.push_back(tree.child(k, GM_F(keyword, value)));
        break;
      }
      default: break;
    }
  }
}

// What the common statement stores into: an assignment's target attribute,
// or the attribute names a call is given as strings
// (`register_buffer("inv_freq", ...)`).
void stored_attrs(const lint::RuleContext& ctx, const predication::TailPair& tp, Uses& u) {
  const ast::Tree& tree = ctx.tree();
  if (tree.kind(tp.if_tail) == NodeKind::Assign) {
    NodeId t = tree.children(tp.if_tail, GM_F(Assign, targets))[0];
    if (tree.kind(t) == NodeKind::Subscript) t = tree.child(t, GM_F(Subscript, value));
    alias_roots(tree, t, u);
    return;
  }
  const NodeId call = tree.child(tp.if_tail, GM_F(Expr, value));
  for (NodeId a : tree.children(call, GM_F(Call, args)))
    if (tree.kind(a) == NodeKind::Constant) {
      const auto& c = tree.constant_at(tree.field(a, GM_F(Constant, value)));
      if (c.kind == ast::ConstantValue::Kind::Str) u.attrs.emplace(tree.str(c.text));
    }
}

// A name, a constant, or attributes of one: evaluating it runs no code of
// the program's (beyond attribute lookup).
bool simple_ref(const ast::Tree& tree, NodeId e) {
  while (tree.kind(e) == NodeKind::Attribute) e = tree.child(e, GM_F(Attribute, value));
  return tree.kind(e) == NodeKind::Name || tree.kind(e) == NodeKind::Constant;
}

// The condition may stay inline in the (single) `where` when nothing the
// common statement evaluates before it can run code: the original evaluated
// the test first. An assignment evaluates its value before its target; a
// call its callee and the arguments before the hole.
bool inline_cond_keeps_order(const lint::RuleContext& ctx, const predication::TailPair& tp) {
  const ast::Tree& tree = ctx.tree();
  if (tree.kind(tp.if_tail) == NodeKind::Assign) return true;
  const NodeId call = tree.child(tp.if_tail, GM_F(Expr, value));
  if (!simple_ref(tree, tree.child(call, GM_F(Call, func)))) return false;
  const std::uint32_t hole = tree.at(tp.holes.front().first).begin;
  for (NodeId a : tree.children(call, GM_F(Call, args)))
    if (tree.at(a).begin < hole && !simple_ref(tree, a)) return false;
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const NodeId v = tree.child(k, GM_F(keyword, value));
    if (tree.at(v).begin < hole && !simple_ref(tree, v)) return false;
  }
  return true;
}

// One statement before the common one, classified.
struct Prefix {
  enum Kind { Local, Memo, Normalize } kind;
  NodeId stmt;
  std::string name;  // Local: the name; Memo/Normalize: the attribute
  std::vector<std::string> extra_names;  // Memo: other names its tuple target binds
};

// `not hasattr(obj, "a")` -> (obj, "a").
std::optional<std::pair<NodeId, std::string>> not_hasattr(const lint::RuleContext& ctx,
                                                          NodeId test) {
  const ast::Tree& tree = ctx.tree();
  bool negated = false;
  const NodeId inner = predication::strip_not(tree, test, &negated);
  if (!negated || tree.kind(inner) != NodeKind::Call) return std::nullopt;
  const auto q = ctx.model()->qualified_name(tree.child(inner, GM_F(Call, func)));
  if (!q || *q != "builtins.hasattr") return std::nullopt;
  const auto args = tree.children(inner, GM_F(Call, args));
  if (args.size() != 2 || !tree.children(inner, GM_F(Call, keywords)).empty() ||
      tree.kind(args[1]) != NodeKind::Constant)
    return std::nullopt;
  const auto& c = tree.constant_at(tree.field(args[1], GM_F(Constant, value)));
  if (c.kind != ast::ConstantValue::Kind::Str) return std::nullopt;
  return std::make_pair(args[0], std::string(tree.str(c.text)));
}

// The statement as a Prefix, or nullopt with *why.
std::optional<Prefix> classify(const lint::RuleContext& ctx, NodeId s, std::string* why) {
  const ast::Tree& tree = ctx.tree();
  auto decline = [&]() -> std::optional<Prefix> {
    *why = "the branch has `" + first_line(ctx, s) + "` (line " +
           std::to_string(predication::line_of(ctx, ctx.tree().at(s).begin)) +
           ") before its last statement: only local assignments, memo fills "
           "(`if not hasattr(o, \"a\"): o.a = ...`) and `o.a = o.a.to(...)` can run on both paths";
    return std::nullopt;
  };
  if (tree.kind(s) == NodeKind::Assign || tree.kind(s) == NodeKind::AnnAssign) {
    NodeId target, value;
    if (tree.kind(s) == NodeKind::Assign) {
      const auto ts = tree.children(s, GM_F(Assign, targets));
      if (ts.size() != 1) return decline();
      target = ts[0];
      value = tree.child(s, GM_F(Assign, value));
    } else {
      target = tree.child(s, GM_F(AnnAssign, target));
      value = tree.child(s, GM_F(AnnAssign, value));
    }
    if (!value) return decline();
    if (tree.kind(target) == NodeKind::Name)
      return Prefix{
          Prefix::Local, s, std::string(tree.text(tree.field(target, GM_F(Name, id)))), {}};
    // obj.a = obj.a.to(...)
    if (tree.kind(target) == NodeKind::Attribute && tree.kind(value) == NodeKind::Call) {
      const NodeId f = tree.child(value, GM_F(Call, func));
      if (tree.kind(f) == NodeKind::Attribute &&
          tree.text(tree.field(f, GM_F(Attribute, attr))) == "to" &&
          ctx.text_of(tree.child(f, GM_F(Attribute, value))) == ctx.text_of(target))
        return Prefix{Prefix::Normalize,
                      s,
                      std::string(tree.text(tree.field(target, GM_F(Attribute, attr)))),
                      {}};
    }
    return decline();
  }
  if (tree.kind(s) == NodeKind::If && tree.children(s, GM_F(If, orelse)).empty()) {
    const auto guard = not_hasattr(ctx, tree.child(s, GM_F(If, test)));
    const auto body = tree.children(s, GM_F(If, body));
    if (!guard || body.size() != 1 || tree.kind(body[0]) != NodeKind::Assign) return decline();
    const auto ts = tree.children(body[0], GM_F(Assign, targets));
    if (ts.size() != 1) return decline();
    std::vector<NodeId> elts;
    if (tree.kind(ts[0]) == NodeKind::Tuple) {
      const auto e = tree.children(ts[0], GM_F(Tuple, elts));
      elts.assign(e.begin(), e.end());
    } else {
      elts.push_back(ts[0]);
    }
    Prefix p{Prefix::Memo, s, guard->second, {}};
    bool filled = false;
    for (NodeId e : elts) {
      if (tree.kind(e) == NodeKind::Attribute &&
          tree.text(tree.field(e, GM_F(Attribute, attr))) == guard->second &&
          ctx.text_of(tree.child(e, GM_F(Attribute, value))) == ctx.text_of(guard->first)) {
        filled = true;
      } else if (tree.kind(e) == NodeKind::Name) {
        p.extra_names.emplace_back(tree.text(tree.field(e, GM_F(Name, id))));
      } else {
        return decline();
      }
    }
    if (!filled) return decline();
    return p;
  }
  if (tree.kind(s) == NodeKind::Pass) return Prefix{Prefix::Local, s, {}, {}};
  return decline();
}

// The statement's source lines, re-indented from its own indentation to
// `indent` (continuation lines that do not start with it are kept as they
// are: they lie inside brackets or after a backslash). nullopt when the
// statement does not start its line or holds a triple-quoted string.
std::optional<std::vector<std::string>> reindent(const lint::RuleContext& ctx, std::uint32_t begin,
                                                 std::string_view text, std::string_view indent) {
  const auto own = edits::statement_indentation(ctx.text(), begin);
  if (!own) return std::nullopt;
  if (text.find("\"\"\"") != std::string_view::npos || text.find("'''") != std::string_view::npos)
    return std::nullopt;
  std::vector<std::string> out;
  std::size_t pos = 0;
  bool first = true;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (first) {
      out.push_back(std::string(indent) + std::string(line));
      first = false;
    } else if (line.find_first_not_of(" \t") == std::string_view::npos) {
      out.emplace_back();
    } else if (line.starts_with(*own)) {
      out.push_back(std::string(indent) + std::string(line.substr(own->size())));
    } else {
      out.emplace_back(line);
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

class DataDependentEffectIf final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM104"; }
  std::string_view name() const override { return "data-dependent-effect-if"; }
  std::string_view summary() const override {
    return "`if` on tensor data whose branches end in the same effect (one statement with "
           "`torch.where` values)";
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
    auto pair = predication::tail_pair(ctx, stmt);
    if (!pair || !predication::tensor_evidence(ctx, test)) return;
    auto& d =
        sink.report(tree.at(test).begin, tree.at(test).end, "`if` on tensor data breaks the graph");
    d.why =
        "Python must know which branch to run, so Dynamo needs the tensor's value: "
        "Data-dependent branching (GB0170); it ends the graph at the `if` (inside a loop it "
        "skips the whole frame)";
    std::string why;
    if (!fixable(ctx, func, stmt, *pair, d, why)) d.declined_reason = why;
  }

  bool fixable(const lint::RuleContext& ctx, NodeId func, NodeId stmt,
               const predication::TailPair& tp, lint::Diagnostic& d, std::string& why) const {
    const ast::Tree& tree = ctx.tree();
    if (!func) return why = "not inside a function", false;
    if (ctx.model()->is_elif(stmt)) return why = "an `elif` chain (not predicated yet)", false;

    // The condition, `not` stripped (the values swap).
    bool negate = false;
    const NodeId test = predication::strip_not(tree, tree.child(stmt, GM_F(If, test)), &negate);
    auto cond = predication::lower_condition(ctx, test, &why);
    if (!cond) return false;

    // The statements before the common one.
    const auto body = tree.children(stmt, GM_F(If, body));
    const auto orelse = tree.children(stmt, GM_F(If, orelse));
    std::vector<Prefix> pre[2];
    for (int side = 0; side < 2; ++side) {
      const auto stmts = side == 0 ? body : orelse;
      for (std::size_t i = 0; i + 1 < stmts.size(); ++i) {
        auto p = classify(ctx, stmts[i], &why);
        if (!p) return false;
        if (tree.kind(stmts[i]) != NodeKind::Pass) pre[side].push_back(*p);
      }
    }

    // Purity: local values and the differing values (names the condition
    // proves tensors, and locals bound to tensors, count as tensors).
    predication::Purity purity;
    const std::set<std::string> cond_tensors = predication::tensor_names_of(ctx, test);
    for (int side = 0; side < 2; ++side) {
      purity.tensor_names = cond_tensors;
      for (const Prefix& p : pre[side]) {
        if (p.kind != Prefix::Local) continue;
        const NodeId value = tree.kind(p.stmt) == NodeKind::Assign
                                 ? tree.child(p.stmt, GM_F(Assign, value))
                                 : tree.child(p.stmt, GM_F(AnnAssign, value));
        predication::check_pure_total(ctx, value, purity);
        if (predication::known_tensor(ctx, value, purity)) purity.tensor_names.insert(p.name);
      }
      for (const auto& h : tp.holes)
        predication::check_pure_total(ctx, side == 0 ? h.first : h.second, purity);
    }
    // `o.a.to(args)`: the arguments now always run too.
    for (int side = 0; side < 2; ++side)
      for (const Prefix& p : pre[side]) {
        if (p.kind != Prefix::Normalize) continue;
        const NodeId call = tree.child(p.stmt, GM_F(Assign, value));
        for (NodeId a : tree.children(call, GM_F(Call, args)))
          predication::check_pure_total(ctx, a, purity);
        for (NodeId k : tree.children(call, GM_F(Call, keywords)))
          predication::check_pure_total(ctx, tree.child(k, GM_F(keyword, value)), purity);
      }
    if (!purity.ok) return why = "code that would now always run: " + purity.why, false;
    for (const auto& h : tp.holes)
      for (NodeId v : {h.first, h.second})
        if (tree.kind(v) == NodeKind::Constant ||
            ctx.model()->fact(v).kind == sema::TensorKind::NotTensor)
          return why = "`" + std::string(ctx.text_of(v)) + "` is a Python value, not a tensor",
                 false;

    // What each side writes, and what runs after it now reads.
    Uses writes[2];
    for (int side = 0; side < 2; ++side)
      for (const Prefix& p : pre[side]) {
        if (p.kind == Prefix::Local) {
          if (!p.name.empty()) writes[side].names.insert(p.name);
        } else {
          writes[side].attrs.insert(p.name);
        }
        for (const std::string& n : p.extra_names) writes[side].names.insert(n);
      }
    std::string which;
    {
      Uses else_reads;
      for (const Prefix& p : pre[1]) collect_reads(tree, p.stmt, else_reads);
      for (const auto& h : tp.holes) collect_reads(tree, h.second, else_reads);
      if (intersects(else_reads.attrs, writes[0].attrs, &which) ||
          intersects(else_reads.names, writes[0].names, &which))
        return why = "the `else` branch reads `" + which + "`, which the `if` branch writes", false;
      Uses if_values;
      for (const auto& h : tp.holes) collect_reads(tree, h.first, if_values);
      if (intersects(if_values.attrs, writes[1].attrs, &which) ||
          intersects(if_values.names, writes[1].names, &which))
        return why =
                   "the `if` branch's value reads `" + which + "`, which the `else` branch writes",
               false;
    }
    // The common statement's shared parts (everything but the holes).
    Uses shared;
    {
      Uses all, in_holes;
      collect_reads(tree, tp.if_tail, all);
      for (const auto& h : tp.holes) collect_reads(tree, h.first, in_holes);
      // A name or attribute only inside the holes is not a shared read.
      shared = all;
      for (const std::string& a : in_holes.attrs) shared.attrs.erase(a);
      for (const std::string& n : in_holes.names) shared.names.erase(n);
      for (int side = 0; side < 2; ++side)
        if (intersects(shared.attrs, writes[side].attrs, &which) ||
            intersects(shared.names, writes[side].names, &which))
          return why = "the common statement reads `" + which + "`, which a branch writes", false;
    }
    // Locals: used only inside their branch, bound on one side only.
    for (int side = 0; side < 2; ++side)
      for (const std::string& n : writes[side].names) {
        if (writes[1 - side].names.count(n))
          return why = "`" + n + "` is bound in both branches", false;
        if (predication::declared_nonlocal(ctx, func, n))
          return why = "`" + n + "` is declared global or nonlocal", false;
        if (predication::live_after(ctx, func, stmt, n))
          return why = "`" + n + "` is bound only when the branch runs and is used after it", false;
      }

    // Aliasing: `where` returns a new tensor where the original passed one
    // of the values itself (or a view of it), and the stored-to attribute
    // no longer shares storage with it.
    {
      Uses alias;
      for (const auto& h : tp.holes) {
        alias_roots(tree, h.first, alias);
        alias_roots(tree, h.second, alias);
      }
      stored_attrs(ctx, tp, alias);
      for (const std::string& a : alias.attrs) {
        const std::string use = predication::attr_in_place_use(ctx, a);
        if (!use.empty())
          return why = "`." + a + "` is updated in place (" + use +
                       "); `where` would return a new tensor and change aliasing",
                 false;
      }
      for (const std::string& n : alias.names) {
        const std::string use = predication::in_place_use(ctx, func, n);
        if (!use.empty())
          return why = "`" + n + "` is updated in place (" + use +
                       "); `where` would return a new tensor and change aliasing",
                 false;
      }
    }

    // The text.
    const auto indent = edits::statement_indentation(ctx.text(), tree.at(stmt).begin);
    if (!indent) return why = "the `if` does not start its line", false;
    const bool has_prefix = !pre[0].empty() || !pre[1].empty();
    std::vector<std::string> lines;
    // Comments stay with the statements they annotate; the others (on the
    // `if` and `else` lines, or inside the common statement's `else` copy)
    // come first.
    std::vector<NodeId> kept;
    for (int side = 0; side < 2; ++side)
      for (const Prefix& p : pre[side]) kept.push_back(p.stmt);
    kept.push_back(tp.if_tail);
    const std::uint32_t sb = tree.at(stmt).begin;
    std::uint32_t se = tree.at(stmt).end;
    if (edits::only_trivia_after(ctx.text(), se)) se = edits::line_end(ctx.text(), se);
    const predication::Comments comments = predication::attach_comments(ctx, sb, se, kept);
    const std::uint32_t tb = tree.at(tp.if_tail).begin, te = tree.at(tp.if_tail).end;
    for (const std::string& c : comments.loose) {
      const auto off = static_cast<std::uint32_t>(ctx.text().find(c, sb));
      if (off >= tb && off < te) continue;  // copied with the common statement
      lines.push_back(std::string(*indent) + c);
    }
    auto above = [&](NodeId s) {
      if (const auto* a = comments.above_of(s))
        for (const std::string& c : *a) lines.push_back(std::string(*indent) + c);
    };
    auto trailing = [&](NodeId s) {
      std::string t;
      if (const auto* a = comments.trailing_of(s))
        for (const std::string& c : *a) t += "  " + c;
      return t;
    };
    const predication::Wrap wrap = predication::wrap_of(ctx, stmt);
    // A laid-out line (four spaces a level) at the statement's indentation,
    // in the file's indent unit.
    auto at_indent = [&](const std::string& l) {
      std::size_t n = 0;
      while (n < l.size() && l[n] == ' ') ++n;
      std::string out(*indent);
      for (std::size_t k = 0; k < n / 4; ++k) out += ctx.style().indent_unit;
      out.append(n % 4, ' ');
      return out + l.substr(n);
    };
    std::string cond_ref = *cond;
    if (has_prefix || tp.holes.size() > 1 || !inline_cond_keeps_order(ctx, tp)) {
      cond_ref = predication::fresh_name(ctx, func, "_graphmend_cond");
      for (auto& l : predication::layout(wrap, "", cond_ref + " = ", predication::Doc::atom(*cond)))
        lines.push_back(at_indent(l));
    }
    bool unsafe = false;
    std::string speculated;
    for (int side = 0; side < 2; ++side)
      for (const Prefix& p : pre[side]) {
        const auto& n = tree.at(p.stmt);
        auto text = reindent(ctx, n.begin, ctx.text_of(p.stmt), *indent);
        if (!text)
          return why = "a branch statement holds a triple-quoted string or does not start its line",
                 false;
        above(p.stmt);
        text->back() += trailing(p.stmt);
        lines.insert(lines.end(), text->begin(), text->end());
        if (p.kind != Prefix::Local) {
          unsafe = true;
          if (!speculated.empty()) speculated += ", ";
          speculated += p.kind == Prefix::Memo ? "memo fill of `." + p.name + "`"
                                               : "`." + p.name + " = ." + p.name + ".to(...)`";
        }
      }
    // The common statement: the `if` branch's text with each hole replaced.
    std::string tail;
    std::uint32_t at = tb;
    std::vector<std::pair<NodeId, NodeId>> holes = tp.holes;
    std::sort(holes.begin(), holes.end(), [&](const auto& x, const auto& y) {
      return tree.at(x.first).begin < tree.at(y.first).begin;
    });
    auto where_of = [&](const std::pair<NodeId, NodeId>& h, std::string_view prefix) {
      predication::Doc a = predication::source_doc(ctx, h.first, true),
                       b = predication::source_doc(ctx, h.second, true);
      if (negate) std::swap(a, b);
      return predication::where_doc(predication::Doc::atom(cond_ref), std::move(a), std::move(b),
                                    purity.grad_safe, prefix);
    };
    for (const auto& h : holes) {
      tail.append(ctx.text().substr(at, tree.at(h.first).begin - at));
      const predication::Doc w = where_of(h, "");
      tail += predication::layout(predication::Wrap{std::size_t(-1), 0}, "", "", w).front();
      at = tree.at(h.first).end;
    }
    tail.append(ctx.text().substr(at, te - at));
    above(tp.if_tail);
    // Laid out as a call when the holes are its arguments (or the value
    // stored), the text as it is otherwise.
    std::optional<std::vector<std::string>> tail_lines;
    auto hole_of = [&](NodeId e) -> const std::pair<NodeId, NodeId>* {
      for (const auto& h : holes)
        if (h.first == e) return &h;
      return nullptr;
    };
    auto call_doc = [&](NodeId call) -> std::optional<predication::Doc> {
      if (tree.kind(call) != NodeKind::Call) return std::nullopt;
      const auto paren = runtime_rewrite::open_paren(ctx, call);
      if (!paren || !edits::comments_in(ctx.file(), *paren, tree.at(call).end).empty())
        return std::nullopt;
      std::vector<predication::Doc> args;
      std::size_t used = 0;
      for (NodeId a : tree.children(call, GM_F(Call, args))) {
        if (const auto* h = hole_of(a))
          args.push_back(where_of(*h, "")), ++used;
        else
          args.push_back(predication::source_doc(ctx, a));
      }
      for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
        const NodeId v = tree.child(k, GM_F(keyword, value));
        if (const auto* h = hole_of(v)) {
          args.push_back(where_of(*h, std::string(ctx.text().substr(
                                          tree.at(k).begin, tree.at(v).begin - tree.at(k).begin))));
          ++used;
        } else {
          args.push_back(predication::source_doc(ctx, k));
        }
      }
      if (used != holes.size()) return std::nullopt;
      return predication::Doc::call_of(
          std::string(ctx.text().substr(tree.at(call).begin, *paren + 1 - tree.at(call).begin)),
          std::move(args));
    };
    std::optional<predication::Doc> tail_doc;
    std::string lead;
    if (tree.kind(tp.if_tail) == NodeKind::Expr) {
      tail_doc = call_doc(tree.child(tp.if_tail, GM_F(Expr, value)));
    } else if (tree.kind(tp.if_tail) == NodeKind::Assign) {
      const NodeId v = tree.child(tp.if_tail, GM_F(Assign, value));
      lead = std::string(ctx.text().substr(tb, tree.at(v).begin - tb));
      if (lead.find('\n') != std::string::npos || lead.find('#') != std::string::npos)
        lead.clear();
      else if (const auto* h = hole_of(v); h && holes.size() == 1)
        tail_doc = where_of(*h, "");
      else
        tail_doc = call_doc(v);
    }
    if (tail_doc) {
      tail_lines.emplace();
      for (auto& l : predication::layout(wrap, "", lead, *tail_doc))
        tail_lines->push_back(at_indent(l));
    } else {
      tail_lines = reindent(ctx, tb, tail, *indent);
    }
    if (!tail_lines)
      return why = "the common statement holds a triple-quoted string or does not start its line",
             false;
    tail_lines->back() += trailing(tp.if_tail);
    lines.insert(lines.end(), tail_lines->begin(), tail_lines->end());

    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      std::string_view l = lines[i];
      if (i == 0)
        l.remove_prefix(std::min(indent->size(), l.size()));
      else
        out += ctx.style().newline_str();
      if (l.find_first_not_of(" \t") != std::string_view::npos) out += l;
    }
    const std::string description =
        unsafe ? "Merge the branches into one statement with `_graphmend_rt.where` (speculates " +
                     speculated + ")"
               : "Merge the branches into one statement with `_graphmend_rt.where`";
    // What the new text copies keeps its own lines and columns: the test
    // when it is computed first (inlined into a `where` it comes after the
    // common statement's head, which matters more: it is the line a
    // traceback through the call names), the statements moved before the
    // common one, the head up to its first hole and the holes' values, as
    // far as they come in source order (anchor_copy skips the rest: a second
    // hole's `if` value lies before the first hole's `else` value).
    auto edit = edits::Edit::replace(sb, se, out);
    std::vector<NodeId> copies;
    if (cond_ref != *cond) copies.push_back(test);
    for (int side = 0; side < 2; ++side)
      for (const Prefix& p : pre[side]) copies.push_back(p.stmt);
    predication::anchor_copies(ctx, edit, copies);
    edits::anchor_copy(edit, ctx.text(), tb,
                       holes.empty() ? te : tree.at(holes.front().first).begin);
    for (const auto& h : holes) {
      const NodeId values[2] = {h.first, h.second};
      predication::anchor_copies(ctx, edit, values);
    }
    runtime_rewrite::attach_fix(ctx, d, description, {std::move(edit)});
    if (unsafe && d.fix) d.fix->applicability = edits::Applicability::Unsafe;
    return true;
  }
};

}  // namespace

const lint::Rule& gm104_data_dependent_effect_if() {
  static const DataDependentEffectIf rule;
  return rule;
}

}  // namespace gm::rules

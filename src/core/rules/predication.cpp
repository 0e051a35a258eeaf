#include "rules/predication.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "edits/text.h"
#include "edits/tree_query.h"
#include "rules/traps.h"
#include "semantic/ops.h"
#include "semantic/value_range.h"

namespace gm::rules::predication {
namespace {

using ast::NodeKind;

// Op knowledge comes from the op table (semantic/torch_ops.def via ops.h).
// Predicable: pure (no effect, no RNG draw, deterministic) and total on
// values (raises only for shapes, dtypes or devices, which do not depend on
// the condition). Index-taking ops (gather, index_select, embedding,
// scatter), data-dependent shapes (nonzero, unique, masked_select), host
// reads (item, tolist), in-place ops and random ops are not.
bool predicable_op(std::string_view name) {
  const sema::ops::OpInfo* op = sema::ops::lookup(name);
  return op && op->predicable();
}

// Derivative bounded independently of the input values, so a NaN or Inf
// computed in the arm `where` does not select cannot reach the gradient
// (0 * bounded = 0).
bool grad_bounded_op(std::string_view name) {
  const sema::ops::OpInfo* op = sema::ops::lookup(name);
  return op && op->has(sema::ops::GradBounded);
}

bool has_flag(std::string_view name, sema::ops::Flag f) {
  const sema::ops::OpInfo* op = sema::ops::lookup(name);
  return op && op->has(f);
}

// Reductions / predicates that are tensor evidence as methods.
bool evidence_method(std::string_view name) {
  const sema::ops::OpInfo* op = sema::ops::lookup(name);
  return op && op->evidence != sema::ops::Evidence::None;
}

// Pre-order; f returns false to skip a node's subtree.
// The expression analyses below recurse over operands; they share one
// depth bound (ast::DepthGuard) and give their "unknown" answer past it.
thread_local int expr_depth = 0;

template <typename F>
void walk(const ast::Tree& tree, NodeId n, const F& f) {
  ast::preorder(tree, n, [&](NodeId c) { return static_cast<bool>(f(c)); });
}

NodeKind op_of(const ast::Tree& tree, NodeId n, int field) {
  return static_cast<NodeKind>(tree.field(n, field).a);
}

std::string_view name_id(const ast::Tree& tree, NodeId n) {
  return tree.text(tree.field(n, GM_F(Name, id)));
}

bool is_load(const ast::Tree& tree, NodeId n) {
  return op_of(tree, n, GM_F(Name, ctx)) == NodeKind::Load;
}

// The method name of a call on a value (not a function reached through an
// imported module such as `torch.isinf`), else "".
std::string_view method_of(const sema::Model& m, NodeId call) {
  const ast::Tree& tree = m.tree();
  const NodeId func = tree.child(call, GM_F(Call, func));
  if (tree.kind(func) != NodeKind::Attribute || m.qualified_name(func)) return {};
  return tree.text(tree.field(func, GM_F(Attribute, attr)));
}

// "torch.isinf" -> "isinf", "torch.nn.functional.relu" -> "relu"; "" if the
// callee is not a torch function.
// The result views into `q`: keep the optional alive (never pass a temporary).
std::string_view torch_function_leaf(const std::optional<std::string>& q) {
  return q ? sema::ops::torch_leaf(*q) : std::string_view{};
}
std::string_view torch_function_leaf(std::optional<std::string>&& q) = delete;

bool is_constant(const ast::Tree& tree, NodeId n) {
  if (tree.kind(n) == NodeKind::Constant) return true;
  if (tree.kind(n) == NodeKind::UnaryOp && (op_of(tree, n, GM_F(UnaryOp, op)) == NodeKind::USub ||
                                            op_of(tree, n, GM_F(UnaryOp, op)) == NodeKind::UAdd))
    return tree.kind(tree.child(n, GM_F(UnaryOp, operand))) == NodeKind::Constant;
  return false;
}

bool nonzero_constant(const lint::RuleContext& ctx, NodeId n) {
  if (!is_constant(ctx.tree(), n)) return false;
  std::string_view t = ctx.text_of(n);
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  return t.find_first_not_of("0._eE+-jJxXoObB") != std::string_view::npos;
}

void fail(Purity& p, const lint::RuleContext& ctx, NodeId n, std::string what) {
  if (!p.ok) return;
  p.ok = false;
  p.why = std::move(what) + line_suffix(ctx, n);
}

bool proven_tensor(const sema::Model& m, NodeId e) {
  return m.tensor_evidence(e) == sema::TensorEvidence::Proven;
}

bool is_self_name(const lint::RuleContext& ctx, NodeId n) {
  const ast::Tree& tree = ctx.tree();
  if (tree.kind(n) != NodeKind::Name || name_id(tree, n) != "self") return false;
  const sema::Binding* b = ctx.model()->resolve(n);
  return b && b->kind == sema::BindingKind::Parameter;
}

void check_call(const lint::RuleContext& ctx, NodeId call, Purity& p);

void check_slice(const lint::RuleContext& ctx, NodeId s, Purity& p) {
  const ast::Tree& tree = ctx.tree();
  switch (tree.kind(s)) {
    case NodeKind::Slice:
      for (int f : {GM_F(Slice, lower), GM_F(Slice, upper), GM_F(Slice, step)}) {
        const NodeId b = tree.child(s, f);
        if (!b) continue;
        check_pure_total(ctx, b, p);
        if (!is_constant(tree, b) && ctx.model()->fact(b).kind != sema::TensorKind::NotTensor)
          fail(p, ctx, b, "a slice bound that may be a tensor");
      }
      return;
    case NodeKind::Tuple:
      for (NodeId e : tree.children(s, GM_F(Tuple, elts))) check_slice(ctx, e, p);
      return;
    case NodeKind::Constant: {
      // None and Ellipsis never raise; an integer raises IndexError when the
      // dimension is too short, which the branch not taken never did.
      const auto k = tree.constant_at(tree.field(s, GM_F(Constant, value))).kind;
      if (k == ast::ConstantValue::Kind::None || k == ast::ConstantValue::Kind::Ellipsis) return;
      fail(p, ctx, s,
           "indexing with `" + std::string(ctx.text_of(s)) +
               "`, which raises IndexError when the dimension is shorter");
      return;
    }
    default:
      fail(p, ctx, s,
           "indexing with `" + std::string(ctx.text_of(s)) + "`, which can raise for some values");
  }
}

}  // namespace

std::uint32_t line_of(const lint::RuleContext& ctx, std::uint32_t offset) {
  return ctx.location(offset, offset).line;
}

std::string line_suffix(const lint::RuleContext& ctx, NodeId n) {
  return " (line " + std::to_string(line_of(ctx, ctx.tree().at(n).begin)) + ")";
}

// ------------------------------------------------------------------ where

void for_each_region_if(const lint::RuleContext& ctx,
                        const std::function<void(NodeId func, NodeId stmt)>& f) {
  if (!ctx.model()) return;
  const ast::Tree& tree = ctx.tree();
  for (const sema::RegionFunction& rf : ctx.model()->region_functions()) {
    const NodeId func = rf.function;
    ast::preorder(tree, func, [&](NodeId n) {
      const NodeKind k = tree.kind(n);
      if (n != func && (k == NodeKind::FunctionDef || k == NodeKind::AsyncFunctionDef ||
                        k == NodeKind::ClassDef))
        return false;
      if (k == NodeKind::If) f(func, n);
      return true;
    });
  }
}

std::optional<ReturnPair> return_pair(const lint::RuleContext& ctx, NodeId if_stmt) {
  const ast::Tree& tree = ctx.tree();
  auto single_return = [&](std::span<const NodeId> stmts) {
    return stmts.size() == 1 && tree.kind(stmts[0]) == NodeKind::Return ? stmts[0] : NodeId{};
  };
  const NodeId a = single_return(tree.children(if_stmt, GM_F(If, body)));
  if (!a) return std::nullopt;
  const auto orelse = tree.children(if_stmt, GM_F(If, orelse));
  if (!orelse.empty()) {
    const NodeId b = single_return(orelse);
    return b ? std::optional<ReturnPair>({a, b}) : std::nullopt;
  }
  const edits::StatementSlot slot = edits::find_statement_slot(
      tree, if_stmt, ctx.model() ? ctx.model()->parent(if_stmt) : NodeId{});
  if (slot.parent && slot.index + 1 < slot.body.size() &&
      tree.kind(slot.body[slot.index + 1]) == NodeKind::Return)
    return ReturnPair{a, slot.body[slot.index + 1]};
  return std::nullopt;
}

std::optional<TailPair> tail_pair(const lint::RuleContext& ctx, NodeId if_stmt) {
  const ast::Tree& tree = ctx.tree();
  const auto body = tree.children(if_stmt, GM_F(If, body));
  const auto orelse = tree.children(if_stmt, GM_F(If, orelse));
  if (body.empty() || orelse.empty()) return std::nullopt;
  if (orelse.size() == 1 && tree.kind(orelse[0]) == NodeKind::If) return std::nullopt;  // elif
  TailPair out{body.back(), orelse.back(), {}};
  const NodeId a = out.if_tail, b = out.else_tail;
  if (tree.kind(a) != tree.kind(b)) return std::nullopt;
  auto same = [&](NodeId x, NodeId y) { return ctx.text_of(x) == ctx.text_of(y); };
  auto pair = [&](NodeId x, NodeId y) {
    if (!same(x, y)) out.holes.emplace_back(x, y);
  };
  if (tree.kind(a) == NodeKind::Expr) {
    const NodeId ca = tree.child(a, GM_F(Expr, value)), cb = tree.child(b, GM_F(Expr, value));
    if (tree.kind(ca) != NodeKind::Call || tree.kind(cb) != NodeKind::Call) return std::nullopt;
    if (!same(tree.child(ca, GM_F(Call, func)), tree.child(cb, GM_F(Call, func))))
      return std::nullopt;
    const auto aa = tree.children(ca, GM_F(Call, args)), ab = tree.children(cb, GM_F(Call, args));
    const auto ka = tree.children(ca, GM_F(Call, keywords));
    const auto kb = tree.children(cb, GM_F(Call, keywords));
    if (aa.size() != ab.size() || ka.size() != kb.size()) return std::nullopt;
    for (std::size_t i = 0; i < aa.size(); ++i) {
      if ((tree.kind(aa[i]) == NodeKind::Starred || tree.kind(ab[i]) == NodeKind::Starred) &&
          !same(aa[i], ab[i]))
        return std::nullopt;
      pair(aa[i], ab[i]);
    }
    for (std::size_t i = 0; i < ka.size(); ++i) {
      const auto na = tree.field(ka[i], GM_F(keyword, arg));
      const auto nb = tree.field(kb[i], GM_F(keyword, arg));
      const bool sa = ast::Tree::is_none_string(na), sb = ast::Tree::is_none_string(nb);
      if (sa != sb) return std::nullopt;
      if (sa) {  // `**mapping`
        if (!same(ka[i], kb[i])) return std::nullopt;
        continue;
      }
      if (tree.text(na) != tree.text(nb)) return std::nullopt;
      pair(tree.child(ka[i], GM_F(keyword, value)), tree.child(kb[i], GM_F(keyword, value)));
    }
  } else if (tree.kind(a) == NodeKind::Assign) {
    const auto ta = tree.children(a, GM_F(Assign, targets));
    const auto tb = tree.children(b, GM_F(Assign, targets));
    if (ta.size() != 1 || tb.size() != 1 || !same(ta[0], tb[0])) return std::nullopt;
    const NodeKind k = tree.kind(ta[0]);
    if (k != NodeKind::Attribute && k != NodeKind::Subscript) return std::nullopt;
    pair(tree.child(a, GM_F(Assign, value)), tree.child(b, GM_F(Assign, value)));
  } else {
    return std::nullopt;
  }
  if (out.holes.empty()) return std::nullopt;
  return out;
}

NodeId strip_not(const ast::Tree& tree, NodeId test, bool* negated) {
  *negated = tree.kind(test) == NodeKind::UnaryOp &&
             static_cast<NodeKind>(tree.field(test, GM_F(UnaryOp, op)).a) == NodeKind::Not;
  return *negated ? tree.child(test, GM_F(UnaryOp, operand)) : test;
}

// ------------------------------------------------------------------ evidence

bool tensor_evidence(const lint::RuleContext& ctx, NodeId e) {
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) return false;  // no evidence: no finding
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  if (static_value(ctx, e)) return false;
  if (proven_tensor(m, e)) return true;
  switch (tree.kind(e)) {
    case NodeKind::Compare: {
      // `t.item() > 0`: lowered to `compare_item`, a tensor while tracing.
      if (traps::item_comparison(m, e)) return true;
      if (tensor_evidence(ctx, tree.child(e, GM_F(Compare, left)))) return true;
      for (NodeId c : tree.children(e, GM_F(Compare, comparators)))
        if (tensor_evidence(ctx, c)) return true;
      return false;
    }
    case NodeKind::BoolOp:
      for (NodeId v : tree.children(e, GM_F(BoolOp, values)))
        if (tensor_evidence(ctx, v)) return true;
      return false;
    case NodeKind::UnaryOp: return tensor_evidence(ctx, tree.child(e, GM_F(UnaryOp, operand)));
    case NodeKind::BinOp:
      return tensor_evidence(ctx, tree.child(e, GM_F(BinOp, left))) ||
             tensor_evidence(ctx, tree.child(e, GM_F(BinOp, right)));
    case NodeKind::Call:
    case NodeKind::Name:
      // `.any()`, `.sum()` ...: a builtin container has no such method (a
      // name: bound once to such a call).
      return m.tensor_evidence(e) == sema::TensorEvidence::Syntactic;
    default: return false;
  }
}

// ------------------------------------------------------------------ condition

namespace {

bool static_atom(const lint::RuleContext& ctx, NodeId e) {
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) return true;  // taken as static: no finding
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  // A non-tensor fact settles values, not tests: `not t` and `t and u` are
  // Python values computed from the tensors' truth (see static_value).
  const NodeKind k = tree.kind(e);
  if (traps::item_receiver(m, e)) return false;  // a Python number read from tensor data
  if (m.fact(e).kind == sema::TensorKind::NotTensor && k != NodeKind::UnaryOp &&
      k != NodeKind::BoolOp && k != NodeKind::Compare && k != NodeKind::IfExp)
    return true;
  switch (k) {
    case NodeKind::Constant: return true;
    case NodeKind::Attribute: {
      if (m.qualified_name(e)) return true;  // torch.float16, a module constant
      // tensor metadata, or a module's `training` flag
      const std::string_view attr = tree.text(tree.field(e, GM_F(Attribute, attr)));
      return attr == "training" || has_flag(attr, sema::ops::MetaAttr);
    }
    case NodeKind::Subscript:
      return static_atom(ctx, tree.child(e, GM_F(Subscript, value))) &&
             tree.kind(tree.child(e, GM_F(Subscript, slice))) == NodeKind::Constant;
    case NodeKind::Call: {
      const NodeId func = tree.child(e, GM_F(Call, func));
      const auto q = m.qualified_name(func);
      if (q && (*q == "builtins.len" || *q == "builtins.isinstance" || *q == "builtins.hasattr" ||
                *q == "builtins.callable" || *q == "torch.is_grad_enabled" ||
                *q == "torch.is_floating_point" || *q == "torch.is_tensor" ||
                *q == "torch.jit.is_tracing" || *q == "torch.jit.is_scripting" ||
                *q == "torch.compiler.is_compiling"))
        return true;
      const std::string_view meth = method_of(m, e);
      return !meth.empty() && has_flag(meth, sema::ops::MetaCall);
    }
    default: return false;
  }
}

}  // namespace

bool range_compare(const lint::RuleContext& ctx, NodeId e) {
  const ast::Tree& tree = ctx.tree();
  switch (tree.kind(e)) {
    case NodeKind::Compare: {
      if (sema::value_range(*ctx.model(), tree.child(e, GM_F(Compare, left)))) return true;
      for (NodeId c : tree.children(e, GM_F(Compare, comparators)))
        if (sema::value_range(*ctx.model(), c)) return true;
      return false;
    }
    case NodeKind::UnaryOp:
      return static_cast<NodeKind>(tree.field(e, GM_F(UnaryOp, op)).a) == NodeKind::Not &&
             range_compare(ctx, tree.child(e, GM_F(UnaryOp, operand)));
    case NodeKind::BoolOp:
      for (NodeId v : tree.children(e, GM_F(BoolOp, values)))
        if (range_compare(ctx, v)) return true;
      return false;
    default: return false;
  }
}

bool static_value(const lint::RuleContext& ctx, NodeId e) {
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) return true;  // taken as static: no finding
  const ast::Tree& tree = ctx.tree();
  if (static_atom(ctx, e)) return true;
  switch (tree.kind(e)) {
    case NodeKind::Compare: {
      for (NodeId op : tree.raw_list(e, GM_F(Compare, ops))) {
        const auto k = static_cast<NodeKind>(op.index);
        if (k == NodeKind::Is || k == NodeKind::IsNot) return true;
      }
      if (!static_atom(ctx, tree.child(e, GM_F(Compare, left)))) return false;
      for (NodeId c : tree.children(e, GM_F(Compare, comparators)))
        if (!static_atom(ctx, c)) return false;
      return true;
    }
    case NodeKind::UnaryOp:
      return static_cast<NodeKind>(tree.field(e, GM_F(UnaryOp, op)).a) == NodeKind::Not &&
             static_value(ctx, tree.child(e, GM_F(UnaryOp, operand)));
    case NodeKind::BoolOp:
      for (NodeId v : tree.children(e, GM_F(BoolOp, values)))
        if (!static_value(ctx, v)) return false;
      return true;
    default: return false;
  }
}

namespace {

bool bool_valued(const lint::RuleContext& ctx, NodeId e) {
  const ast::Tree& tree = ctx.tree();
  const sema::TensorFact f = ctx.model()->fact(e);
  if (f.kind == sema::TensorKind::Tensor && f.dtype == sema::DType::Bool) return true;
  switch (tree.kind(e)) {
    case NodeKind::Compare: return true;  // a Python bool or an elementwise bool tensor
    case NodeKind::BoolOp: return true;  // lowered to & / | of bool-valued operands
    case NodeKind::UnaryOp: return op_of(tree, e, GM_F(UnaryOp, op)) == NodeKind::Not;
    case NodeKind::Call: {
      const std::string_view meth = method_of(*ctx.model(), e);
      if (!meth.empty()) return has_flag(meth, sema::ops::BoolResult);
      const auto q = ctx.model()->qualified_name(tree.child(e, GM_F(Call, func)));
      const std::string_view leaf = torch_function_leaf(q);
      return !leaf.empty() && has_flag(leaf, sema::ops::BoolResult) && leaf != "equal";
    }
    default: return false;
  }
}

bool simple_operand(const ast::Tree& tree, NodeId e) {
  switch (tree.kind(e)) {
    case NodeKind::Name:
    case NodeKind::Attribute:
    case NodeKind::Call:
    case NodeKind::Subscript:
    case NodeKind::Constant:
    case NodeKind::List:
    case NodeKind::Dict:
    case NodeKind::Set: return true;
    default: return false;
  }
}

std::string wrap(const ast::Tree& tree, NodeId e, std::string text) {
  if (simple_operand(tree, e)) return text;
  std::string out;
  out.reserve(text.size() + 2);
  out += '(';
  out += text;
  out += ')';
  return out;
}

}  // namespace

std::optional<std::string> lower_condition(const lint::RuleContext& ctx, NodeId e, std::string* why,
                                           const std::set<std::string>* known) {
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) {
    *why = "the condition is nested too deeply to analyse";
    return std::nullopt;
  }
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  if (tree.kind(e) == NodeKind::BoolOp) {
    const bool is_and = op_of(tree, e, GM_F(BoolOp, op)) == NodeKind::And;
    std::string out;
    bool first = true;
    // Names the operands before this one used as tensors: they ran first, so
    // those names hold tensors when this operand runs (`x.isnan().any() or
    // x.isinf().any()`).
    std::set<std::string> before = known ? *known : std::set<std::string>{};
    for (NodeId v : tree.children(e, GM_F(BoolOp, values))) {
      if (!bool_valued(ctx, v)) {
        *why = "`" + std::string(ctx.text_of(v)) + "` is not proven bool-valued, so `" +
               (is_and ? "and" : "or") + "` cannot become `" + (is_and ? "&" : "|") + "`";
        return std::nullopt;
      }
      if (!first) {
        Purity p;
        p.tensor_names = before;
        check_pure_total(ctx, v, p);
        if (!p.ok) {
          *why = "an operand `" + std::string(is_and ? "and" : "or") +
                 "` may skip would now always run: " + p.why;
          return std::nullopt;
        }
      }
      auto lowered = lower_condition(ctx, v, why, &before);
      before.merge(tensor_names_of(ctx, v));
      if (!lowered) return std::nullopt;
      if (!first) out += is_and ? " & " : " | ";
      out += wrap(tree, v, *lowered);
      first = false;
    }
    return out;
  }
  if (tree.kind(e) == NodeKind::UnaryOp && op_of(tree, e, GM_F(UnaryOp, op)) == NodeKind::Not) {
    const NodeId v = tree.child(e, GM_F(UnaryOp, operand));
    const sema::TensorFact f = m.fact(v);
    // `~` of a Python bool is an int: the operand must be a tensor. Names it
    // uses as tensors count (`not x.isnan().any()`: with `x` anything else
    // the operand raises before `~` is reached, as `not` would).
    Purity kp;
    if (known) kp.tensor_names = *known;
    kp.tensor_names.merge(tensor_names_of(ctx, v));
    const bool tensor_bool =
        (f.kind == sema::TensorKind::Tensor && f.dtype == sema::DType::Bool) ||
        (tree.kind(v) == NodeKind::BoolOp && f.kind == sema::TensorKind::Tensor) ||
        (tree.kind(v) != NodeKind::BoolOp && bool_valued(ctx, v) && known_tensor(ctx, v, kp));
    if (!tensor_bool) {
      *why = "`not " + std::string(ctx.text_of(v)) +
             "`: the operand is not proven a bool tensor, so `not` cannot become `~`";
      return std::nullopt;
    }
    auto lowered = lower_condition(ctx, v, why, known);
    if (!lowered) return std::nullopt;
    std::string out = "~";
    out += wrap(tree, v, *lowered);
    return out;
  }
  if (const auto side = traps::item_comparison(m, e))
    return traps::compare_item_call(ctx, e, *side);
  return std::string(ctx.text_of(e));
}

std::string join_and(const lint::RuleContext& ctx, std::span<const NodeId> values) {
  const ast::Tree& tree = ctx.tree();
  std::string out;
  for (NodeId v : values) {
    if (!out.empty()) out += " and ";
    const NodeKind k = tree.kind(v);
    const bool paren = k == NodeKind::BoolOp || k == NodeKind::IfExp || k == NodeKind::Lambda ||
                       k == NodeKind::NamedExpr;
    if (paren) out += '(';
    out += ctx.text_of(v);
    if (paren) out += ')';
  }
  return out;
}

// ------------------------------------------------------------------ purity

namespace {

// An int or float literal, or one negated.
bool number_constant(const ast::Tree& tree, NodeId e) {
  if (tree.kind(e) == NodeKind::UnaryOp && op_of(tree, e, GM_F(UnaryOp, op)) == NodeKind::USub)
    e = tree.child(e, GM_F(UnaryOp, operand));
  if (tree.kind(e) != NodeKind::Constant) return false;
  const auto k = tree.constant_at(tree.field(e, GM_F(Constant, value))).kind;
  return k == ast::ConstantValue::Kind::Int || k == ast::ConstantValue::Kind::Float;
}

}  // namespace

std::set<std::string> tensor_names_of(const lint::RuleContext& ctx, NodeId cond) {
  const ast::Tree& tree = ctx.tree();
  std::set<std::string> out;
  walk(tree, cond, [&](NodeId n) {
    if (tree.kind(n) != NodeKind::Call) return true;
    const NodeId func = tree.child(n, GM_F(Call, func));
    NodeId subject;
    const std::string_view meth = method_of(*ctx.model(), n);
    if (!meth.empty() && evidence_method(meth)) {
      subject = tree.child(func, GM_F(Attribute, value));
    } else {
      const auto q = ctx.model()->qualified_name(func);
      const std::string_view leaf = torch_function_leaf(q);
      const auto args = tree.children(n, GM_F(Call, args));
      if (!leaf.empty() && predicable_op(leaf) && !args.empty()) subject = args[0];
    }
    // `(x >= 0).all()`: a comparison with a number has a tensor method only
    // when `x` is a tensor (or array); with a Python number it is a bool.
    if (subject && tree.kind(subject) == NodeKind::Compare &&
        tree.raw_list(subject, GM_F(Compare, ops)).size() == 1) {
      const NodeId sides[2] = {tree.child(subject, GM_F(Compare, left)),
                               tree.children(subject, GM_F(Compare, comparators))[0]};
      for (int i = 0; i < 2; ++i)
        if (tree.kind(sides[i]) == NodeKind::Name && number_constant(tree, sides[1 - i]))
          subject = sides[i];
    }
    if (subject && tree.kind(subject) == NodeKind::Name) out.emplace(name_id(tree, subject));
    return true;
  });
  return out;
}

bool known_tensor(const lint::RuleContext& ctx, NodeId e, const Purity& p) {
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) return false;
  if (proven_tensor(*ctx.model(), e)) return true;
  const ast::Tree& tree = ctx.tree();
  if (tree.kind(e) == NodeKind::Name)
    return p.tensor_names.count(std::string(name_id(tree, e))) > 0;
  if (tree.kind(e) == NodeKind::Call) {
    // A pure torch op applied to known tensors returns a tensor.
    const NodeId func = tree.child(e, GM_F(Call, func));
    const std::string_view meth = method_of(*ctx.model(), e);
    if (!meth.empty())
      return predicable_op(meth) && known_tensor(ctx, tree.child(func, GM_F(Attribute, value)), p);
    const auto q = ctx.model()->qualified_name(func);
    const std::string_view leaf = torch_function_leaf(q);
    const auto args = tree.children(e, GM_F(Call, args));
    return !leaf.empty() && predicable_op(leaf) && !args.empty() && known_tensor(ctx, args[0], p);
  }
  if (tree.kind(e) == NodeKind::BinOp)
    return known_tensor(ctx, tree.child(e, GM_F(BinOp, left)), p) ||
           known_tensor(ctx, tree.child(e, GM_F(BinOp, right)), p);
  if (tree.kind(e) == NodeKind::Compare) {
    // One rich comparison with a tensor on either side: an elementwise bool
    // tensor (`(x == 0.5).any()`).
    const auto ops = tree.raw_list(e, GM_F(Compare, ops));
    if (ops.size() != 1) return false;
    switch (static_cast<NodeKind>(ops[0].index)) {
      case NodeKind::Eq:
      case NodeKind::NotEq:
      case NodeKind::Lt:
      case NodeKind::LtE:
      case NodeKind::Gt:
      case NodeKind::GtE: break;
      default: return false;
    }
    return known_tensor(ctx, tree.child(e, GM_F(Compare, left)), p) ||
           known_tensor(ctx, tree.children(e, GM_F(Compare, comparators))[0], p);
  }
  return false;
}

void check_pure_total(const lint::RuleContext& ctx, NodeId e, Purity& p) {
  if (!p.ok) return;
  const ast::DepthGuard guard(expr_depth);
  if (guard.exceeded()) return fail(p, ctx, e, "an expression nested too deeply to analyse");
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  switch (tree.kind(e)) {
    case NodeKind::Constant: return;
    case NodeKind::Name: return;
    case NodeKind::Attribute: {
      const NodeId v = tree.child(e, GM_F(Attribute, value));
      const std::string_view attr = tree.text(tree.field(e, GM_F(Attribute, attr)));
      if (m.qualified_name(e)) return;  // torch.float16, math.pi, a module attribute
      if (is_self_name(ctx, v)) {
        if (m.assigns_self_attr(attr)) return;
        return fail(p, ctx, e,
                    "reads `self." + std::string(attr) +
                        "`, which this file never assigns (it may be absent)");
      }
      check_pure_total(ctx, v, p);
      if (has_flag(attr, sema::ops::TotalAttr) && known_tensor(ctx, v, p)) return;
      if (tree.kind(v) == NodeKind::Call) {
        const auto q = m.qualified_name(tree.child(v, GM_F(Call, func)));
        if (q && (*q == "torch.finfo" || *q == "torch.iinfo")) return;
      }
      return fail(
          p, ctx, e,
          "reads attribute `" + std::string(ctx.text_of(e)) + "` of a value not proven to have it");
    }
    case NodeKind::Subscript: {
      const NodeId v = tree.child(e, GM_F(Subscript, value));
      check_pure_total(ctx, v, p);
      if (!known_tensor(ctx, v, p))
        return fail(
            p, ctx, e,
            "subscript of `" + std::string(ctx.text_of(v)) + "`, not proven a tensor (may raise)");
      check_slice(ctx, tree.child(e, GM_F(Subscript, slice)), p);
      return;
    }
    case NodeKind::BinOp: {
      const NodeId l = tree.child(e, GM_F(BinOp, left));
      const NodeId r = tree.child(e, GM_F(BinOp, right));
      check_pure_total(ctx, l, p);
      check_pure_total(ctx, r, p);
      if (!p.ok) return;
      for (NodeId s : {l, r})
        if (m.fact(s).kind == sema::TensorKind::TensorOrNone)
          return fail(p, ctx, s, "`" + std::string(ctx.text_of(s)) + "` may be None");
      const bool tensor_side = known_tensor(ctx, l, p) || known_tensor(ctx, r, p);
      switch (op_of(tree, e, GM_F(BinOp, op))) {
        case NodeKind::Add:
        case NodeKind::Sub:
        case NodeKind::BitAnd:
        case NodeKind::BitOr:
        case NodeKind::BitXor: return;
        case NodeKind::Mult:
          if (!is_constant(tree, l) && !is_constant(tree, r)) p.grad_safe = false;
          return;
        case NodeKind::MatMult: p.grad_safe = false; return;
        case NodeKind::Div:
          if (!tensor_side && !nonzero_constant(ctx, r))
            return fail(p, ctx, e, "Python division may raise ZeroDivisionError");
          if (!nonzero_constant(ctx, r)) p.grad_safe = false;
          return;
        case NodeKind::Pow:
          if (!tensor_side) return fail(p, ctx, e, "Python `**` may raise");
          p.grad_safe = false;
          return;
        default:
          return fail(p, ctx, e,
                      "`" + std::string(ctx.text_of(e)) +
                          "`: integer division, modulo or shifts may raise");
      }
    }
    case NodeKind::UnaryOp: check_pure_total(ctx, tree.child(e, GM_F(UnaryOp, operand)), p); return;
    case NodeKind::Compare:
      check_pure_total(ctx, tree.child(e, GM_F(Compare, left)), p);
      for (NodeId c : tree.children(e, GM_F(Compare, comparators))) check_pure_total(ctx, c, p);
      return;
    case NodeKind::BoolOp:
      for (NodeId v : tree.children(e, GM_F(BoolOp, values))) check_pure_total(ctx, v, p);
      return;
    case NodeKind::IfExp:
      check_pure_total(ctx, tree.child(e, GM_F(IfExp, test)), p);
      check_pure_total(ctx, tree.child(e, GM_F(IfExp, body)), p);
      check_pure_total(ctx, tree.child(e, GM_F(IfExp, orelse)), p);
      return;
    case NodeKind::Tuple:
      for (NodeId v : tree.children(e, GM_F(Tuple, elts))) check_pure_total(ctx, v, p);
      return;
    case NodeKind::List:
      for (NodeId v : tree.children(e, GM_F(List, elts))) check_pure_total(ctx, v, p);
      return;
    case NodeKind::Call: check_call(ctx, e, p); return;
    case NodeKind::JoinedStr:  // an f-string without fields is a constant
      for (NodeId v : tree.children(e, GM_F(JoinedStr, values)))
        if (tree.kind(v) != NodeKind::Constant)
          return fail(p, ctx, e,
                      "`" + std::string(ctx.text_of(e)) + "` formats values (it may raise)");
      return;
    default:
      return fail(p, ctx, e, "`" + std::string(ctx.text_of(e)) + "` is not proven pure and total");
  }
}

namespace {

// `torch.zeros(())`, `torch.ones(2, 3)`, `x.new_zeros((4,))`: a tensor of a
// constant value and a constant shape, so it cannot raise (sizes are
// non-negative int literals, as positional ints or one tuple/list of them)
// and is the same tensor on every call; `dtype=`/`device=` only (no
// `requires_grad=`, which would make a leaf where `where` makes a result).
bool constant_factory(const ast::Tree& tree, NodeId call) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto arg = tree.field(k, GM_F(keyword, arg));
    if (ast::Tree::is_none_string(arg) || (tree.text(arg) != "dtype" && tree.text(arg) != "device"))
      return false;
  }
  auto size = [&](NodeId e) {
    if (tree.kind(e) != NodeKind::Constant) return false;
    const auto& c = tree.constant_at(tree.field(e, GM_F(Constant, value)));
    return c.kind == ast::ConstantValue::Kind::Int && tree.str(c.text).size() < 10;
  };
  auto args = tree.children(call, GM_F(Call, args));
  if (args.size() == 1 &&
      (tree.kind(args[0]) == NodeKind::Tuple || tree.kind(args[0]) == NodeKind::List))
    args = tree.children(
        args[0], tree.kind(args[0]) == NodeKind::Tuple ? GM_F(Tuple, elts) : GM_F(List, elts));
  return std::all_of(args.begin(), args.end(), size);
}

void check_call(const lint::RuleContext& ctx, NodeId call, Purity& p) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  const NodeId func = tree.child(call, GM_F(Call, func));
  for (NodeId a : tree.children(call, GM_F(Call, args))) {
    if (tree.kind(a) == NodeKind::Starred) return fail(p, ctx, a, "a `*args` argument");
    check_pure_total(ctx, a, p);
  }
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto arg = tree.field(k, GM_F(keyword, arg));
    if (ast::Tree::is_none_string(arg)) return fail(p, ctx, k, "a `**kwargs` argument");
    if (tree.text(arg) == "out") return fail(p, ctx, k, "an `out=` argument writes a tensor");
    if (tree.text(arg) == "inplace") return fail(p, ctx, k, "an `inplace=` argument");
    check_pure_total(ctx, tree.child(k, GM_F(keyword, value)), p);
  }
  if (!p.ok) return;
  const auto q = m.qualified_name(func);
  if (q) {
    if (*q == "torch.finfo" || *q == "torch.iinfo") return;
    // An earlier predication: as pure as its arguments (checked above).
    if (*q == "graphmend.runtime.where") return;
    // A deferred read (GM201-GM203): `t.item()`, `float(t)`, `bool(t)` of
    // a tensor of one element cannot raise (`int(t)` can: NaN, inf).
    if (*q == "graphmend.runtime.item") {
      const auto args = tree.children(call, GM_F(Call, args));
      if (args.empty() || !m.one_element(args[0]))
        return fail(p, ctx, call,
                    "`" + std::string(ctx.text_of(call)) +
                        "` reads a tensor not proven to have one element (it may raise)");
      if (args.size() > 1) {
        const auto conv = m.qualified_name(args[1]);
        if (!conv ||
            (*conv != "builtins.float" && *conv != "builtins.bool" && *conv != "builtins.complex"))
          return fail(p, ctx, call,
                      "`" + std::string(ctx.text_of(call)) + "` converts with `" +
                          std::string(ctx.text_of(args[1])) +
                          "`, which may raise (`int` of NaN or inf)");
      }
      return;
    }
    const std::string_view leaf = torch_function_leaf(q);
    if ((leaf == "zeros" || leaf == "ones") && constant_factory(tree, call)) return;
    if (!leaf.empty() && predicable_op(leaf)) {
      if (!grad_bounded_op(leaf)) p.grad_safe = false;
      return;
    }
    return fail(p, ctx, call, "calls `" + *q + "`, not in the allow-list of pure, total torch ops");
  }
  if (tree.kind(func) == NodeKind::Attribute) {
    const NodeId recv = tree.child(func, GM_F(Attribute, value));
    const std::string_view meth = tree.text(tree.field(func, GM_F(Attribute, attr)));
    check_pure_total(ctx, recv, p);
    if (!p.ok) return;
    if (!known_tensor(ctx, recv, p))
      return fail(p, ctx, call,
                  "calls `" + std::string(ctx.text_of(func)) + "` on a value not proven a tensor");
    // Metadata of a known tensor (`dim()`, `numel()`, `size()`): known
    // while tracing, read without touching the data.
    if (const sema::ops::OpInfo* op = sema::ops::lookup(meth); op && op->has(sema::ops::MetaCall))
      return;
    if ((meth == "new_zeros" || meth == "new_ones") && constant_factory(tree, call)) return;
    if (!predicable_op(meth))
      return fail(p, ctx, call,
                  "calls tensor method `." + std::string(meth) +
                      "()`, not in the allow-list of pure, total ops");
    if (!grad_bounded_op(meth)) p.grad_safe = false;
    return;
  }
  fail(p, ctx, call,
       "calls `" + std::string(ctx.text_of(func)) + "` (a submodule or function not proven pure)");
}

}  // namespace

bool evaluable_unconditionally(const lint::RuleContext& ctx, std::span<const NodeId> values,
                               std::span<const NodeId> conds, NodeId stmt, std::string& why) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  // Attributes the test reads on every evaluation (no `and`/`or`/`if` in it
  // that could skip them) are present when the values run after it.
  std::set<std::string_view> read_by_cond;
  bool may_skip = false;
  std::vector<std::string> cond_names;
  Purity p;
  for (NodeId cond : conds) {
    walk(tree, cond, [&](NodeId n) {
      const NodeKind k = tree.kind(n);
      if (k == NodeKind::BoolOp || k == NodeKind::IfExp || k == NodeKind::Lambda) may_skip = true;
      if (k == NodeKind::Attribute) read_by_cond.insert(ctx.text_of(n));
      return true;
    });
    p.tensor_names.merge(tensor_names_of(ctx, cond));
    for (std::string& n : names_read(ctx, cond)) cond_names.push_back(std::move(n));
  }
  if (may_skip) read_by_cond.clear();
  const NodeId func = enclosing_function(m, stmt);
  for (NodeId v : values) {
    if (tree.kind(v) == NodeKind::Attribute && read_by_cond.count(ctx.text_of(v))) continue;
    check_pure_total(ctx, v, p);
    if (!p.ok) return why = p.why, false;
    // A local the original read only when the test held may be unbound
    // otherwise (`n` assigned in one branch above).
    if (!func) continue;
    for (const std::string& name : names_read(ctx, v)) {
      if (std::find(cond_names.begin(), cond_names.end(), name) != cond_names.end()) continue;
      if (m.bindings_of(m.scope_of(stmt), name).empty() || bound_before(ctx, func, stmt, name))
        continue;
      why = "`" + name + "` is not bound on every path to the check";
      return false;
    }
  }
  return true;
}

std::optional<Select> select_arms(const lint::RuleContext& ctx, NodeId test, NodeId if_true,
                                  NodeId if_false, std::string_view impure_prefix,
                                  std::string* why) {
  bool negated = false;
  test = strip_not(ctx.tree(), test, &negated);
  if (negated) std::swap(if_true, if_false);
  auto cond = lower_condition(ctx, test, why);
  if (!cond) return std::nullopt;
  Purity p;
  p.tensor_names = tensor_names_of(ctx, test);
  check_pure_total(ctx, if_true, p);
  check_pure_total(ctx, if_false, p);
  if (!p.ok) {
    *why = std::string(impure_prefix) + p.why;
    return std::nullopt;
  }
  return Select{std::move(*cond), if_true, if_false, p.grad_safe};
}

// ------------------------------------------------------------------ names

NodeId enclosing_function(const sema::Model& m, NodeId node) {
  const ast::Tree& tree = m.tree();
  for (NodeId n = m.parent(node); n; n = m.parent(n)) {
    const NodeKind k = tree.kind(n);
    if (k == NodeKind::FunctionDef || k == NodeKind::AsyncFunctionDef) return n;
    if (k == NodeKind::Lambda || k == NodeKind::ClassDef) return {};
  }
  return {};
}

namespace {

// What the per-`if` questions below ask of a whole function, computed in one
// walk per function and file (kept in the RuleContext's scratch), so that
// checking a function with n `if`s is not n walks of it.
struct FunctionIndex {
  // Loads under the function that resolve to its own binding or that sit in
  // nested scopes without their own binding (closures), by name, in source
  // order.
  std::unordered_map<std::string_view, std::vector<NodeId>> loads;
  std::unordered_set<std::string_view> names;     // every Name id under it
  std::unordered_set<std::string_view> declared;  // global / nonlocal names
  std::unordered_map<std::string, std::string> in_place;  // memo of in_place_use
};
struct FunctionIndexes {
  std::unordered_map<std::uint32_t, FunctionIndex> by_function;
};

FunctionIndex& function_index(const lint::RuleContext& ctx, NodeId func) {
  auto& all = ctx.scratch<FunctionIndexes>().by_function;
  auto [it, fresh] = all.try_emplace(func.index);
  FunctionIndex& fi = it->second;
  if (!fresh) return fi;
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  const sema::ScopeId fs = m.scope_opened_by(func);
  walk(tree, func, [&](NodeId n) {
    const NodeKind k = tree.kind(n);
    if (k == NodeKind::Name) {
      const std::string_view id = name_id(tree, n);
      fi.names.insert(id);
      if (is_load(tree, n)) {
        const sema::Binding* b = m.resolve(n);
        if (!b || b->scope == fs) fi.loads[id].push_back(n);
      }
    } else if (k == NodeKind::Global || k == NodeKind::Nonlocal) {
      const int f = k == NodeKind::Global ? GM_F(Global, names) : GM_F(Nonlocal, names);
      const ast::Field fl = tree.field(n, f);
      const auto raw = tree.children(n, f);
      for (std::uint32_t i = 0; i < fl.b; ++i)
        fi.declared.insert(tree.str({raw.data()[2 * i].index, raw.data()[2 * i + 1].index}));
    }
    return true;
  });
  for (auto& [name, v] : fi.loads)
    std::stable_sort(v.begin(), v.end(),
                     [&](NodeId a, NodeId b) { return tree.at(a).begin < tree.at(b).begin; });
  return fi;
}

const std::vector<NodeId>& loads_of(const lint::RuleContext& ctx, NodeId func,
                                    std::string_view name) {
  static const std::vector<NodeId> none;
  const FunctionIndex& fi = function_index(ctx, func);
  auto it = fi.loads.find(name);
  return it == fi.loads.end() ? none : it->second;
}

// The first load at or after `offset` in a position-sorted list.
std::vector<NodeId>::const_iterator first_at_or_after(const ast::Tree& tree,
                                                      const std::vector<NodeId>& loads,
                                                      std::uint32_t offset) {
  return std::lower_bound(loads.begin(), loads.end(), offset,
                          [&](NodeId n, std::uint32_t o) { return tree.at(n).begin < o; });
}

// Loads of `name` under `func` (see FunctionIndex::loads), in source order.
template <typename F>
void for_each_load(const lint::RuleContext& ctx, NodeId func, std::string_view name, const F& f) {
  for (NodeId n : loads_of(ctx, func, name)) f(n);
}

// The statement a node belongs to: its innermost enclosing statement.
NodeId statement_of(const sema::Model& m, NodeId n) {
  const ast::Tree& tree = m.tree();
  for (; n; n = m.parent(n))
    if (edits::is_statement(tree, n)) return n;
  return {};
}

// Where a statement sits (its parent's body list and its index there), from
// the model's parent links instead of a search of the whole tree.
edits::StatementSlot slot_of(const sema::Model& m, NodeId stmt) {
  edits::StatementSlot slot;
  const ast::Tree& tree = m.tree();
  const NodeId parent = m.parent(stmt);
  const int field = m.field_in_parent(stmt);
  if (!parent || field < 0) return slot;
  if (ast::fields_of(tree.kind(parent))[field].kind != ast::FieldKind::List) return slot;
  const auto body = tree.children(parent, field);
  const auto it = std::find(body.begin(), body.end(), stmt);
  if (it == body.end()) return slot;
  slot.parent = parent;
  slot.body = body;
  slot.index = static_cast<std::size_t>(it - body.begin());
  return slot;
}

}  // namespace

bool read_outside(const lint::RuleContext& ctx, NodeId func, std::string_view name,
                  std::uint32_t begin, std::uint32_t end) {
  const auto& loads = loads_of(ctx, func, name);
  if (loads.empty()) return false;
  const ast::Tree& tree = ctx.tree();
  return tree.at(loads.front()).begin < begin || tree.at(loads.back()).begin >= end;
}

bool read_inside(const lint::RuleContext& ctx, NodeId func, std::string_view name,
                 std::uint32_t begin, std::uint32_t end) {
  const auto& loads = loads_of(ctx, func, name);
  const ast::Tree& tree = ctx.tree();
  if (begin >= end) return false;
  return first_at_or_after(tree, loads, begin) != first_at_or_after(tree, loads, end);
}

namespace {

// `stmt` unconditionally binds `name` (plain, annotated or unpacking
// assignment to a bare name).
bool assigns_name(const ast::Tree& tree, NodeId stmt, std::string_view name) {
  auto target_binds = [&](auto&& self, NodeId t) -> bool {
    switch (tree.kind(t)) {
      case NodeKind::Name: return name_id(tree, t) == name;
      case NodeKind::Tuple:
        for (NodeId e : tree.children(t, GM_F(Tuple, elts)))
          if (self(self, e)) return true;
        return false;
      case NodeKind::List:
        for (NodeId e : tree.children(t, GM_F(List, elts)))
          if (self(self, e)) return true;
        return false;
      case NodeKind::Starred: return self(self, tree.child(t, GM_F(Starred, value)));
      default: return false;
    }
  };
  switch (tree.kind(stmt)) {
    case NodeKind::Assign:
      for (NodeId t : tree.children(stmt, GM_F(Assign, targets)))
        if (target_binds(target_binds, t)) return true;
      return false;
    case NodeKind::AnnAssign:
      return tree.child(stmt, GM_F(AnnAssign, value)) &&
             target_binds(target_binds, tree.child(stmt, GM_F(AnnAssign, target)));
    case NodeKind::AugAssign:
      return target_binds(target_binds, tree.child(stmt, GM_F(AugAssign, target)));
    default: return false;
  }
}

}  // namespace

bool live_after(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  const std::uint32_t sb = tree.at(stmt).begin, se = tree.at(stmt).end;
  const auto& loads = loads_of(ctx, func, name);
  // Loads before `stmt`: only a loop around it (within the function) can
  // carry the value back to them.
  for (NodeId a = m.parent(stmt); a && a != func; a = m.parent(a)) {
    const NodeKind k = tree.kind(a);
    if (k != NodeKind::For && k != NodeKind::AsyncFor && k != NodeKind::While) continue;
    const std::uint32_t lb = tree.at(a).begin;
    const auto it = first_at_or_after(tree, loads, lb);
    if (it != loads.end() && tree.at(*it).begin < std::min(sb, tree.at(a).end)) return true;
  }
  // Loads after it, in order: live unless each is preceded by a rebinding
  // that follows `stmt`.
  for (auto it = first_at_or_after(tree, loads, se); it != loads.end(); ++it) {
    const NodeId user = statement_of(m, *it);
    if (!user || !bound_before(ctx, func, user, name, se)) return true;
  }
  return false;
}

bool bound_before(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name,
                  std::uint32_t min_offset) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  NodeId cur = stmt;
  while (cur && cur != func) {
    const edits::StatementSlot slot = slot_of(m, cur);
    if (!slot.parent) return false;
    for (std::size_t i = 0; i < slot.index; ++i)
      if (tree.at(slot.body[i]).begin >= min_offset && assigns_name(tree, slot.body[i], name))
        return true;
    cur = slot.parent;
    // Leaving a handler or a loop body: what ran before in the try/loop is
    // not certain to have run, but the statements before the compound
    // statement itself (checked on the next round) are.
    while (cur && cur != func && !edits::is_statement(tree, cur)) cur = m.parent(cur);
  }
  if (cur != func || min_offset > 0) return false;
  const NodeId args = tree.child(func, GM_F(FunctionDef, args));
  bool found = false;
  walk(tree, args, [&](NodeId n) {
    if (tree.kind(n) == NodeKind::arg && tree.text(tree.field(n, GM_F(arg, arg))) == name)
      found = true;
    return tree.kind(n) == NodeKind::arguments;  // do not enter defaults
  });
  return found;
}

bool none_before(const lint::RuleContext& ctx, NodeId func, NodeId stmt, std::string_view name) {
  const ast::Tree& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  auto is_none_test = [&](NodeId c) {
    if (tree.kind(c) != NodeKind::Compare) return false;
    const NodeId left = tree.child(c, GM_F(Compare, left));
    const auto ops = tree.raw_list(c, GM_F(Compare, ops));
    const auto rhs = tree.children(c, GM_F(Compare, comparators));
    return tree.kind(left) == NodeKind::Name && name_id(tree, left) == name && ops.size() == 1 &&
           static_cast<NodeKind>(ops[0].index) == NodeKind::Is &&
           tree.kind(rhs[0]) == NodeKind::Constant && ctx.text_of(rhs[0]) == "None";
  };
  auto says_none = [&](NodeId test) {
    if (is_none_test(test)) return true;
    if (tree.kind(test) != NodeKind::BoolOp || op_of(tree, test, GM_F(BoolOp, op)) != NodeKind::And)
      return false;
    for (NodeId v : tree.children(test, GM_F(BoolOp, values)))
      if (is_none_test(v)) return true;
    return false;
  };
  const std::uint32_t at = tree.at(stmt).begin;
  NodeId cur = stmt;
  while (cur && cur != func) {
    const edits::StatementSlot slot = slot_of(m, cur);
    if (!slot.parent) return false;
    const NodeId parent = slot.parent;
    const NodeKind k = tree.kind(parent);
    if (k == NodeKind::For || k == NodeKind::AsyncFor || k == NodeKind::While) return false;
    if (k == NodeKind::If && slot.body.data() == tree.children(parent, GM_F(If, body)).data() &&
        says_none(tree.child(parent, GM_F(If, test)))) {
      const std::uint32_t from = tree.at(tree.child(parent, GM_F(If, test))).end;
      for (const sema::Binding* b : m.bindings_of(m.scope_of(stmt), name))
        if (b->node && tree.at(b->node).begin >= from && tree.at(b->node).begin < at) return false;
      return true;
    }
    cur = parent;
    while (cur && cur != func && !edits::is_statement(tree, cur)) cur = m.parent(cur);
  }
  return false;
}

namespace {

// In-place updates of whatever `is_it` matches inside `root`; `label` names it.
template <typename Match>
std::string in_place_use_of(const lint::RuleContext& ctx, NodeId root, const Match& is_it,
                            std::string_view label) {
  const ast::Tree& tree = ctx.tree();
  std::string found;
  const std::string name(label);
  auto note = [&](NodeId n, std::string what) {
    if (found.empty()) found = "`" + what + "`" + line_suffix(ctx, n);
  };
  walk(tree, root, [&](NodeId n) {
    switch (tree.kind(n)) {
      case NodeKind::Call: {
        const NodeId f = tree.child(n, GM_F(Call, func));
        if (tree.kind(f) == NodeKind::Attribute && is_it(tree.child(f, GM_F(Attribute, value)))) {
          const std::string_view meth = tree.text(tree.field(f, GM_F(Attribute, attr)));
          if (meth.size() > 1 && meth.back() == '_' && meth[meth.size() - 2] != '_')
            note(n, name + "." + std::string(meth) + "(...)");
        }
        for (NodeId k : tree.children(n, GM_F(Call, keywords))) {
          const auto arg = tree.field(k, GM_F(keyword, arg));
          if (!ast::Tree::is_none_string(arg) && tree.text(arg) == "out" &&
              is_it(tree.child(k, GM_F(keyword, value))))
            note(k, "out=" + name);
        }
        break;
      }
      case NodeKind::Subscript:
        if (op_of(tree, n, GM_F(Subscript, ctx)) != NodeKind::Load &&
            is_it(tree.child(n, GM_F(Subscript, value))))
          note(n, name + "[...] = ...");
        break;
      case NodeKind::Attribute:
        if (op_of(tree, n, GM_F(Attribute, ctx)) != NodeKind::Load &&
            is_it(tree.child(n, GM_F(Attribute, value))))
          note(n, std::string(ctx.text_of(n)) + " = ...");
        break;
      case NodeKind::AugAssign:
        if (is_it(tree.child(n, GM_F(AugAssign, target)))) note(n, name + " op= ...");
        break;
      default: break;
    }
    return true;
  });
  return found;
}

}  // namespace

std::string in_place_use(const lint::RuleContext& ctx, NodeId func, std::string_view name) {
  const ast::Tree& tree = ctx.tree();
  auto& memo = function_index(ctx, func).in_place;
  const std::string key(name);
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  std::string found = in_place_use_of(
      ctx, func,
      [&](NodeId n) { return tree.kind(n) == NodeKind::Name && name_id(tree, n) == name; }, name);
  memo.emplace(key, found);
  return found;
}

std::string attr_in_place_use(const lint::RuleContext& ctx, std::string_view attr) {
  const ast::Tree& tree = ctx.tree();
  return in_place_use_of(
      ctx, tree.root(),
      [&](NodeId n) {
        return tree.kind(n) == NodeKind::Attribute &&
               tree.text(tree.field(n, GM_F(Attribute, attr))) == attr;
      },
      "." + std::string(attr));
}

bool declared_nonlocal(const lint::RuleContext& ctx, NodeId func, std::string_view name) {
  return function_index(ctx, func).declared.count(name) > 0;
}

std::vector<std::string> names_read(const lint::RuleContext& ctx, NodeId e) {
  const ast::Tree& tree = ctx.tree();
  std::vector<std::string> out;
  walk(tree, e, [&](NodeId n) {
    if (tree.kind(n) == NodeKind::Name && is_load(tree, n)) {
      std::string s(name_id(tree, n));
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    }
    return true;
  });
  return out;
}

std::string fresh_name(const lint::RuleContext& ctx, NodeId func, std::string_view base) {
  const auto& used = function_index(ctx, func).names;
  std::string name(base);
  for (int i = 2; used.count(name); ++i) name = std::string(base) + std::to_string(i);
  return name;
}

// ------------------------------------------------------------------ text

std::string operand_text(const lint::RuleContext& ctx, NodeId e) {
  return wrap(ctx.tree(), e, std::string(ctx.text_of(e)));
}

std::string where_call(std::string_view cond, std::string_view if_true, std::string_view if_false,
                       bool grad_safe) {
  std::string s = "_graphmend_rt.where(";
  s += cond;
  s += ", ";
  s += if_true;
  s += ", ";
  s += if_false;
  if (!grad_safe) s += ", grad_safe=False";
  s += ")";
  return s;
}

namespace {
// The file's longest line (at least Wrap's default): one scan per file, not
// one per fix.
struct LongestLine {
  std::size_t length = 0;
  bool done = false;
};
}  // namespace

Wrap wrap_of(const lint::RuleContext& ctx, NodeId stmt) {
  const std::string_view text = ctx.text();
  Wrap w;
  auto& longest = ctx.scratch<LongestLine>();
  if (!longest.done) {
    longest.length = w.limit;
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t nl = text.find('\n', start);
      const std::size_t stop = nl == std::string_view::npos ? text.size() : nl;
      std::size_t len = stop - start;
      if (len > 0 && text[stop - 1] == '\r') --len;
      longest.length = std::max(longest.length, len);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    longest.done = true;
  }
  w.limit = longest.length;
  if (stmt) w.base = edits::line_indentation(text, ctx.tree().at(stmt).begin).size();
  return w;
}

namespace {

std::size_t column_of(std::string_view text, std::uint32_t offset) {
  return offset - edits::line_start(text, offset);
}

}  // namespace

bool keep_verbatim(std::string_view t) {
  return t.find("\"\"\"") != std::string_view::npos || t.find("'''") != std::string_view::npos ||
         t.find("\\\n") != std::string_view::npos || t.find("\\\r") != std::string_view::npos;
}

Doc source_doc(const lint::RuleContext& ctx, NodeId e, bool parens) {
  const auto& n = ctx.tree().at(e);
  Doc d = range_doc(ctx, n.begin, n.end);
  if (!parens) return d;
  std::string t = operand_text(ctx, e);
  if (t.size() != d.text.size()) {
    d.text = std::move(t);
    if (d.col > 0) --d.col;  // the `(` put before it
  }
  return d;
}

Doc range_doc(const lint::RuleContext& ctx, std::uint32_t begin, std::uint32_t end,
              std::string prefix) {
  const std::size_t col = column_of(ctx.text(), begin);
  const std::size_t plen = prefix.size();
  Doc d = Doc::atom(std::move(prefix) + std::string(ctx.text().substr(begin, end - begin)));
  d.col = col >= plen ? col - plen : 0;
  d.line_indent = edits::line_indentation(ctx.text(), begin).size();
  d.verbatim = keep_verbatim(d.text);
  return d;
}

void anchor_copies(const lint::RuleContext& ctx, edits::Edit& edit, std::span<const NodeId> nodes) {
  for (NodeId n : nodes) {
    const auto& r = ctx.tree().at(n);
    edits::anchor_copy(edit, ctx.text(), r.begin, r.end);
  }
}

Doc where_doc(Doc cond, Doc if_true, Doc if_false, bool grad_safe, std::string_view head_prefix) {
  std::vector<Doc> args;
  args.push_back(std::move(cond));
  args.push_back(std::move(if_true));
  args.push_back(std::move(if_false));
  if (!grad_safe) args.push_back(Doc::atom("grad_safe=False"));
  return Doc::call_of(std::string(head_prefix) + "_graphmend_rt.where(", std::move(args));
}

namespace {

// `d` on one line, or nullopt when an atom spans several.
std::optional<std::string> flat(const Doc& d) {
  if (!d.call) {
    if (d.text.find('\n') != std::string::npos) return std::nullopt;
    return d.text;
  }
  std::string s = d.text;
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    auto a = flat(d.args[i]);
    if (!a) return std::nullopt;
    if (i) s += ", ";
    s += *a;
  }
  return s + ")";
}

// An atom's lines, the first at absolute column `col` on a line indented
// `line_col`: continuation lines keep their position relative to the
// first's indentation when it ends in an open bracket (a hanging indent),
// else relative to its start (aligned with its text); written with their
// relative indentation.
std::vector<std::string> atom_lines(const Wrap& w, const Doc& d, std::size_t col,
                                    std::size_t line_col) {
  const std::size_t first_end = d.text.find_last_not_of(" \t\r\n", d.text.find('\n'));
  const bool hanging = first_end != std::string::npos &&
                       std::string_view("([{").find(d.text[first_end]) != std::string_view::npos;
  const long origin = hanging ? static_cast<long>(line_col) - static_cast<long>(d.line_indent)
                              : static_cast<long>(col) - static_cast<long>(d.col);
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t nl = d.text.find('\n', pos);
    std::string line = d.text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (d.verbatim) {
      // Kept byte for byte: one element with its line breaks.
      return {d.text};
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (out.empty()) {
      out.push_back(std::move(line));
    } else {
      const std::size_t lead = line.find_first_not_of(" \t");
      if (lead == std::string::npos) {
        out.emplace_back();
      } else {
        const long shifted = static_cast<long>(lead) + origin - static_cast<long>(w.base);
        out.push_back(std::string(static_cast<std::size_t>(std::max(shifted, 0L)), ' ') +
                      line.substr(lead));
      }
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

// `d`'s lines: the first without what precedes it (it starts at absolute
// column `col`), the others with their relative indentation; `tail` columns
// follow the last line.
std::vector<std::string> render_doc(const Wrap& w, std::string_view indent, std::size_t col,
                                    const Doc& d, std::size_t tail) {
  if (auto f = flat(d); f && col + f->size() + tail <= w.limit) return {*f};
  if (!d.call) return atom_lines(w, d, col, w.base + indent.size());
  const std::string inner = std::string(indent) + "    ";
  const std::size_t inner_col = w.base + inner.size();
  std::vector<std::string> out{d.text};
  // All arguments on one line of their own, else one per line.
  std::optional<std::string> joined = std::string();
  for (std::size_t i = 0; i < d.args.size() && joined; ++i) {
    auto a = flat(d.args[i]);
    if (!a)
      joined.reset();
    else
      *joined += (i ? ", " : "") + *a;
  }
  if (joined && inner_col + joined->size() <= w.limit) {
    out.push_back(inner + *joined);
  } else {
    // A sole argument split inside its own brackets takes no trailing comma
    // (black's right-hand split); one per line, each takes one.
    const bool sole = d.args.size() == 1;
    for (const Doc& a : d.args) {
      auto sub = render_doc(w, inner, inner_col, a, sole ? 0 : 1);
      sub.front() = inner + sub.front();
      if (!sole) sub.back() += ",";
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  out.push_back(std::string(indent) + ")");
  return out;
}

}  // namespace

std::vector<std::string> layout(const Wrap& w, std::string_view indent, std::string_view lead,
                                const Doc& d, std::string_view trail) {
  auto lines = render_doc(w, indent, w.base + indent.size() + lead.size(), d, trail.size());
  lines.front() = std::string(indent) + std::string(lead) + lines.front();
  lines.back() += trail;
  return lines;
}

const std::vector<std::string>* Comments::above_of(NodeId s) const {
  for (const auto& [n, c] : above)
    if (n == s) return &c;
  return nullptr;
}

const std::vector<std::string>* Comments::trailing_of(NodeId s) const {
  for (const auto& [n, c] : trailing)
    if (n == s) return &c;
  return nullptr;
}

namespace {

// The comment at `off` is on a line before the statement at `sb`.
bool p_line_ok(const lint::RuleContext& ctx, std::uint32_t off, std::uint32_t sb) {
  return line_of(ctx, off) < line_of(ctx, sb);
}

}  // namespace

Comments attach_comments(const lint::RuleContext& ctx, std::uint32_t begin, std::uint32_t end,
                         std::span<const NodeId> stmts) {
  const ast::Tree& tree = ctx.tree();
  const std::string_view text = ctx.text();
  Comments out;
  auto add = [](auto& list, NodeId s, std::string c) {
    for (auto& [n, v] : list)
      if (n == s) return v.push_back(std::move(c));
    list.push_back({s, {std::move(c)}});
  };
  for (std::string_view c : edits::comments_in(ctx.file(), begin, end)) {
    const auto off = static_cast<std::uint32_t>(c.data() - text.data());
    const std::uint32_t line = line_of(ctx, off);
    const bool own_line = edits::line_indentation(text, off).size() == column_of(text, off);
    NodeId owner;
    bool is_above = false;
    NodeId next;  // the first statement after an own-line comment
    for (NodeId s : stmts) {
      const std::uint32_t sb = tree.at(s).begin;
      const std::uint32_t sl = line_of(ctx, sb), el = line_of(ctx, tree.at(s).end);
      if (!own_line && line >= sl && line <= el) owner = s;
      if (own_line && off < sb && (!next || sb < tree.at(next).begin)) next = s;
    }
    if (next) {
      // Directly above it: only comment lines in between.
      const std::uint32_t sb = tree.at(next).begin;
      bool only_comments = true;
      for (std::uint32_t p = edits::full_line_end(text, off); p < edits::line_start(text, sb);) {
        const std::string_view l = text.substr(p, edits::line_end(text, p) - p);
        const std::size_t f = l.find_first_not_of(" \t\f");
        if (f == std::string_view::npos || l[f] != '#') only_comments = false;
        const std::uint32_t after = edits::full_line_end(text, p);
        if (after == p) break;
        p = after;
      }
      if (only_comments && p_line_ok(ctx, off, sb)) {
        owner = next;
        is_above = true;
      }
    }
    if (!owner)
      out.loose.emplace_back(c);
    else if (is_above)
      add(out.above, owner, std::string(c));
    else
      add(out.trailing, owner, std::string(c));
  }
  return out;
}

}  // namespace gm::rules::predication

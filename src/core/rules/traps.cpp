#include "rules/traps.h"

#include <algorithm>
#include <map>
#include <set>

#include "edits/text.h"
#include "edits/tree_query.h"
#include "rules/predication.h"
#include "rules/runtime_rewrite.h"
#include "semantic/ops.h"

namespace gm::rules::traps {

using ast::NodeKind;

namespace {

// ------------------------------------------------------------------ evidence

// A reduction whose 0-d result guards test (the op table's Reduction
// evidence: any, all, sum, max, mean, ...).
bool is_reduction_name(std::string_view n) {
  const sema::ops::OpInfo* op = sema::ops::lookup(n);
  return op && op->evidence == sema::ops::Evidence::Reduction;
}

std::string_view last_component(std::string_view q) {
  const auto dot = q.rfind('.');
  return dot == std::string_view::npos ? q : q.substr(dot + 1);
}

bool is_torch_name(const std::optional<std::string>& q) { return q && q->starts_with("torch."); }

// `np`, `torch.linalg`, `F`: a Name/Attribute chain that starts at an import.
bool is_module_ref(const sema::Model& m, NodeId e) {
  const auto q = m.qualified_name(e);
  return q && !q->starts_with("builtins.");
}

// The result of a call of a function imported from elsewhere than torch
// (`np.asarray(v)`, `math.fsum(v)`): not a tensor as far as syntax tells.
bool foreign_value(const sema::Model& m, NodeId e) {
  const auto& tree = m.tree();
  if (tree.kind(e) != NodeKind::Call) return false;
  const auto q = m.qualified_name(tree.child(e, GM_F(Call, func)));
  return q && !q->starts_with("torch.") && !q->starts_with("builtins.") && !q->starts_with(".");
}

// `t.sum()` (a reduction method, no positional argument, on a receiver not
// proven to be something else) or `torch.sum(t)` (one positional argument).
bool reduction_call(const sema::Model& m, NodeId e) {
  const auto& tree = m.tree();
  if (tree.kind(e) != NodeKind::Call) return false;
  const NodeId func = tree.child(e, GM_F(Call, func));
  const auto args = tree.children(e, GM_F(Call, args));
  if (has_starred(tree, args)) return false;
  const auto q = m.qualified_name(func);
  if (is_torch_name(q)) return is_reduction_name(last_component(*q)) && args.size() == 1;
  if (tree.kind(func) != NodeKind::Attribute) return false;
  if (!is_reduction_name(tree.text(tree.field(func, GM_F(Attribute, attr))))) return false;
  const NodeId recv = tree.child(func, GM_F(Attribute, value));
  if (is_module_ref(m, recv)) return false;  // np.max(...), math.prod(...)
  if (foreign_value(m, recv)) return false;  // np.asarray(v).max()
  if (m.fact(recv).kind == sema::TensorKind::NotTensor) return false;
  return args.empty();
}

enum class EqualKind : std::uint8_t { None, Function, Method, Allclose };

EqualKind equal_kind(const sema::Model& m, NodeId e) {
  const auto& tree = m.tree();
  if (tree.kind(e) != NodeKind::Call) return EqualKind::None;
  const NodeId func = tree.child(e, GM_F(Call, func));
  const auto q = m.qualified_name(func);
  if (q && *q == "torch.equal") return EqualKind::Function;
  if (q && *q == "torch.allclose") return EqualKind::Allclose;
  if (q || tree.kind(func) != NodeKind::Attribute) return EqualKind::None;
  const auto attr = tree.text(tree.field(func, GM_F(Attribute, attr)));
  if (attr != "equal" && attr != "allclose") return EqualKind::None;
  const NodeId recv = tree.child(func, GM_F(Attribute, value));
  if (is_module_ref(m, recv) || m.fact(recv).kind == sema::TensorKind::NotTensor)
    return EqualKind::None;
  if (tree.children(e, GM_F(Call, args)).empty()) return EqualKind::None;
  return attr == "equal" ? EqualKind::Method : EqualKind::Allclose;
}

bool is_tensor_fact(const sema::Model& m, NodeId e) {
  return m.fact(e).kind == sema::TensorKind::Tensor;
}

NodeKind op_of(const ast::Tree& tree, NodeId n, int field) {
  return static_cast<NodeKind>(tree.field(n, field).a);
}

// One side of a comparison.
thread_local int evidence_depth = 0;  // ast::DepthGuard's counter

bool operand_evidence(const sema::Model& m, NodeId o) {
  const ast::DepthGuard guard(evidence_depth);
  if (guard.exceeded()) return false;  // no evidence: no finding
  const auto& tree = m.tree();
  if (is_tensor_fact(m, o) || reduction_call(m, o) || equal_kind(m, o) != EqualKind::None)
    return true;
  switch (tree.kind(o)) {
    case NodeKind::BinOp:
      return operand_evidence(m, tree.child(o, GM_F(BinOp, left))) ||
             operand_evidence(m, tree.child(o, GM_F(BinOp, right)));
    case NodeKind::UnaryOp:
      if (op_of(tree, o, GM_F(UnaryOp, op)) == NodeKind::Not) return false;
      return operand_evidence(m, tree.child(o, GM_F(UnaryOp, operand)));
    case NodeKind::NamedExpr: return operand_evidence(m, tree.child(o, GM_F(NamedExpr, value)));
    case NodeKind::Name: return m.tensor_evidence(o) == sema::TensorEvidence::Syntactic;
    default: return false;
  }
}

bool is_rich_comparison(NodeKind k) {
  return k == NodeKind::Eq || k == NodeKind::NotEq || k == NodeKind::Lt || k == NodeKind::LtE ||
         k == NodeKind::Gt || k == NodeKind::GtE;
}

std::string_view comparison_text(NodeKind k) {
  switch (k) {
    case NodeKind::Eq: return "==";
    case NodeKind::NotEq: return "!=";
    case NodeKind::Lt: return "<";
    case NodeKind::LtE: return "<=";
    case NodeKind::Gt: return ">";
    default: return ">=";
  }
}

// An operand whose evaluation has no effect and cannot raise in a way that
// depends on when it runs: names, constants, attribute chains and constant
// subscripts of those, a sign applied to one. `compare_item` evaluates it
// before the `.item()` it was compared with.
bool plain_operand(const ast::Tree& tree, NodeId e) {
  for (;;) {  // iterative: an attribute chain can be as long as the file
    switch (tree.kind(e)) {
      case NodeKind::Name:
      case NodeKind::Constant: return true;
      case NodeKind::Attribute: e = tree.child(e, GM_F(Attribute, value)); break;
      case NodeKind::Subscript:
        if (tree.kind(tree.child(e, GM_F(Subscript, slice))) != NodeKind::Constant) return false;
        e = tree.child(e, GM_F(Subscript, value));
        break;
      case NodeKind::UnaryOp:
        if (op_of(tree, e, GM_F(UnaryOp, op)) == NodeKind::Not) return false;
        e = tree.child(e, GM_F(UnaryOp, operand));
        break;
      default: return false;
    }
  }
}

}  // namespace

bool has_starred(const ast::Tree& tree, std::span<const NodeId> args) {
  for (NodeId a : args)
    if (tree.kind(a) == NodeKind::Starred) return true;
  return false;
}

bool tensor_evidence(const sema::Model& m, NodeId e) {
  const ast::DepthGuard guard(evidence_depth);
  if (guard.exceeded()) return false;  // no evidence: no finding
  const auto& tree = m.tree();
  if (is_tensor_fact(m, e)) return true;
  switch (tree.kind(e)) {
    case NodeKind::Call: return reduction_call(m, e) || equal_kind(m, e) != EqualKind::None;
    case NodeKind::Compare: {
      for (NodeId op : tree.raw_list(e, GM_F(Compare, ops)))
        if (!is_rich_comparison(static_cast<NodeKind>(op.index))) return false;
      if (operand_evidence(m, tree.child(e, GM_F(Compare, left)))) return true;
      if (item_receiver(m, tree.child(e, GM_F(Compare, left)))) return true;
      for (NodeId c : tree.children(e, GM_F(Compare, comparators)))
        if (operand_evidence(m, c) || item_receiver(m, c)) return true;
      return false;
    }
    case NodeKind::UnaryOp:
      if (op_of(tree, e, GM_F(UnaryOp, op)) != NodeKind::Not) return false;
      return tensor_evidence(m, tree.child(e, GM_F(UnaryOp, operand)));
    case NodeKind::BoolOp:
      for (NodeId v : tree.children(e, GM_F(BoolOp, values)))
        if (tensor_evidence(m, v)) return true;
      return false;
    case NodeKind::NamedExpr: return tensor_evidence(m, tree.child(e, GM_F(NamedExpr, value)));
    // `bad = x.isnan().any()` then `if bad:` (bound once to such a call)
    case NodeKind::Name: return m.tensor_evidence(e) == sema::TensorEvidence::Syntactic;
    default: return false;
  }
}

// ------------------------------------------------------------------ condition

namespace {

template <typename F>
void walk(const ast::Tree& tree, NodeId n, const F& f) {
  ast::preorder(tree, n, [&](NodeId c) { f(c); });
}

}  // namespace

Condition analyze_condition(const lint::RuleContext& ctx, NodeId test) {
  const auto& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  Condition c;
  c.expr = test;
  if (tree.kind(test) == NodeKind::UnaryOp &&
      op_of(tree, test, GM_F(UnaryOp, op)) == NodeKind::Not) {
    c.negated = true;
    c.expr = tree.child(test, GM_F(UnaryOp, operand));
  }
  bool combined = false;  // `and` / `or` / an inner `not`
  walk(tree, c.expr, [&](NodeId n) {
    if (!c.declined.empty()) return;
    switch (tree.kind(n)) {
      case NodeKind::BoolOp: combined = true; return;
      case NodeKind::UnaryOp:
        if (op_of(tree, n, GM_F(UnaryOp, op)) == NodeKind::Not) combined = true;
        return;
      case NodeKind::Compare:
        if (tree.raw_list(n, GM_F(Compare, ops)).size() > 1)
          c.declined = "chained comparison (`a < b < c` is an implicit `and`; not yet lowered)";
        return;
      case NodeKind::Call:
        if (n != c.expr && equal_kind(m, n) != EqualKind::None)
          c.declined =
              "`torch.equal`/`allclose` inside a larger condition (its Python bool would still "
              "break the graph)";
        return;
      default: return;
    }
  });
  if (!c.declined.empty()) return c;
  if (combined) {
    // One expression with the same truth value: `&` / `|` / `~` of
    // bool-valued operands, where an operand `and`/`or` may skip must be pure
    // and total (it now always runs, also on the trap's eager path).
    std::string why;
    auto lowered = predication::lower_condition(ctx, c.expr, &why);
    if (!lowered) {
      c.declined = "condition combines tests with and/or/not: " + why;
      return c;
    }
    if (lowered->find('\n') != std::string::npos) {
      // Operands spanning lines are joined onto one line, unless a comment or
      // a triple-quoted string would change meaning.
      if (lowered->find('#') != std::string::npos || lowered->find('\\') != std::string::npos ||
          lowered->find("\"\"\"") != std::string::npos ||
          lowered->find("'''") != std::string::npos) {
        c.declined =
            "the combined condition spans lines with a comment, a backslash or a long string";
        return c;
      }
      lowered = edits::join_lines(*lowered);
    }
    c.equal = Condition::Equal::Lowered;
    c.lowered = std::move(*lowered);
    return c;
  }
  if (const auto side = item_comparison(m, c.expr)) {
    c.equal = Condition::Equal::Item;
    c.item_side = *side;
    return c;
  }
  if (tree.kind(c.expr) == NodeKind::Compare) {
    // A `.item()` compared with something item_comparison does not take.
    const NodeId sides[2] = {tree.child(c.expr, GM_F(Compare, left)),
                             tree.children(c.expr, GM_F(Compare, comparators))[0]};
    for (int side = 0; side < 2; ++side) {
      if (!item_receiver(m, sides[side]) || operand_evidence(m, sides[1 - side])) continue;
      if (!is_rich_comparison(
              static_cast<NodeKind>(tree.raw_list(c.expr, GM_F(Compare, ops))[0].index)))
        break;
      c.declined = "`" + std::string(ctx.text_of(sides[1 - side])) +
                   "` is compared with `.item()` and is not a plain name, constant or "
                   "attribute (it would be evaluated before the `.item()`)";
      return c;
    }
  }
  switch (equal_kind(m, c.expr)) {
    case EqualKind::None: break;
    case EqualKind::Allclose:
      c.declined =
          "`allclose` returns a Python bool computed from tensor data; no trap helper lowers "
          "it yet";
      break;
    case EqualKind::Function:
    case EqualKind::Method: {
      const bool fn = equal_kind(m, c.expr) == EqualKind::Function;
      const auto args = tree.children(c.expr, GM_F(Call, args));
      const auto kws = tree.children(c.expr, GM_F(Call, keywords));
      if (args.size() != (fn ? 2u : 1u) || !kws.empty() || has_starred(tree, args)) {
        c.declined = fn ? "`torch.equal` is not called as `torch.equal(a, b)`"
                        : "`Tensor.equal` is not called as `a.equal(b)`";
        break;
      }
      c.equal = fn ? Condition::Equal::Function : Condition::Equal::Method;
      break;
    }
  }
  return c;
}

PythonPrefix python_prefix(const lint::RuleContext& ctx, NodeId test) {
  const auto& tree = ctx.tree();
  PythonPrefix out{{}, test};
  if (tree.kind(test) != NodeKind::BoolOp || op_of(tree, test, GM_F(BoolOp, op)) != NodeKind::And)
    return out;
  const auto values = tree.children(test, GM_F(BoolOp, values));
  std::size_t k = 0;
  while (k < values.size() && predication::static_value(ctx, values[k]) &&
         !predication::tensor_evidence(ctx, values[k]))
    ++k;
  if (k > 0 && k + 1 == values.size()) {
    out.statics.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k));
    out.data = values[k];
  }
  return out;
}

// `t.item()` with no arguments, t not proven a non-tensor: its receiver,
// else None.
NodeId item_receiver(const sema::Model& m, NodeId e) {
  const auto& tree = m.tree();
  if (tree.kind(e) != NodeKind::Call || !tree.children(e, GM_F(Call, args)).empty() ||
      !tree.children(e, GM_F(Call, keywords)).empty())
    return {};
  const NodeId func = tree.child(e, GM_F(Call, func));
  if (tree.kind(func) != NodeKind::Attribute ||
      tree.text(tree.field(func, GM_F(Attribute, attr))) != "item")
    return {};
  const NodeId recv = tree.child(func, GM_F(Attribute, value));
  if (m.tensor_evidence(recv) == sema::TensorEvidence::NotTensor) return {};
  return recv;
}

std::optional<int> item_comparison(const sema::Model& m, NodeId e) {
  const auto& tree = m.tree();
  if (tree.kind(e) != NodeKind::Compare) return std::nullopt;
  const auto ops = tree.raw_list(e, GM_F(Compare, ops));
  if (ops.size() != 1 || !is_rich_comparison(static_cast<NodeKind>(ops[0].index)))
    return std::nullopt;
  const NodeId sides[2] = {tree.child(e, GM_F(Compare, left)),
                           tree.children(e, GM_F(Compare, comparators))[0]};
  for (int side = 0; side < 2; ++side)
    if (item_receiver(m, sides[side]) && !operand_evidence(m, sides[1 - side]) &&
        plain_operand(tree, sides[1 - side]))
      return side;
  return std::nullopt;
}

std::string compare_item_call(const lint::RuleContext& ctx, NodeId e, int side) {
  // The call condition_pieces writes for a trap's condition, on one line.
  Condition c;
  c.expr = e;
  c.equal = Condition::Equal::Item;
  c.item_side = side;
  std::string declined, out;
  for (const Piece& p : condition_pieces(ctx, c, declined)) {
    switch (p.kind) {
      case Piece::Kind::Literal: out += p.text; break;
      case Piece::Kind::Separator: out += ", "; break;
      case Piece::Kind::Source: out += ctx.text().substr(p.begin, p.end - p.begin); break;
      case Piece::Kind::Call: break;  // never a condition's
    }
  }
  return out;
}

std::vector<Piece> condition_pieces(const lint::RuleContext& ctx, const Condition& c,
                                    std::string& declined) {
  const auto& tree = ctx.tree();
  const auto& e = tree.at(c.expr);
  const std::string equal = std::string(runtime_rewrite::kRuntimeAlias) + ".equal";
  switch (c.equal) {
    case Condition::Equal::None: return {Piece::source(e.begin, e.end)};
    case Condition::Equal::Lowered: return {Piece::literal(c.lowered)};
    case Condition::Equal::Item: {
      const NodeId left = tree.child(c.expr, GM_F(Compare, left));
      const NodeId right = tree.children(c.expr, GM_F(Compare, comparators))[0];
      const auto op = static_cast<NodeKind>(tree.raw_list(c.expr, GM_F(Compare, ops))[0].index);
      auto side = [&](NodeId n, bool item) {
        if (item) n = tree.child(tree.child(n, GM_F(Call, func)), GM_F(Attribute, value));
        return Piece::source(tree.at(n).begin, tree.at(n).end);
      };
      std::vector<Piece> out{
          Piece::literal(std::string(runtime_rewrite::kRuntimeAlias) + ".compare_item("),
          side(left, c.item_side == 0),
          Piece::separator(),
          Piece::literal(std::string(ctx.quote(comparison_text(op)))),
          Piece::separator(),
          side(right, c.item_side == 1)};
      if (c.item_side == 1) {
        out.push_back(Piece::separator());
        out.push_back(Piece::literal("item=1"));
      }
      out.push_back(Piece::literal(")"));
      return out;
    }
    case Condition::Equal::Function: {
      const auto paren = runtime_rewrite::open_paren(ctx, c.expr);
      if (!paren) {
        declined = "cannot locate the argument list of `torch.equal`";
        return {};
      }
      return {Piece::literal(equal), Piece::source(*paren, e.end)};
    }
    case Condition::Equal::Method: {
      const NodeId func = tree.child(c.expr, GM_F(Call, func));
      const NodeId recv = tree.child(func, GM_F(Attribute, value));
      const NodeId arg = tree.children(c.expr, GM_F(Call, args))[0];
      return {Piece::literal(equal + "("), Piece::source(tree.at(recv).begin, tree.at(recv).end),
              Piece::separator(), Piece::source(tree.at(arg).begin, tree.at(arg).end),
              Piece::literal(")")};
    }
  }
  return {};
}

// ------------------------------------------------------------------ constants

namespace {

std::string short_text(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n' || ch == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += ch;
  }
  // Collapse runs of spaces left by line breaks and indentation.
  std::string compact;
  for (char ch : out)
    if (!(ch == ' ' && !compact.empty() && compact.back() == ' ')) compact += ch;
  if (compact.size() > 40) compact = compact.substr(0, 37) + "...";
  return compact;
}

}  // namespace

std::string non_constant_reason(const lint::RuleContext& ctx, NodeId e) {
  const auto& tree = ctx.tree();
  switch (tree.kind(e)) {
    case NodeKind::Constant: return {};
    case NodeKind::JoinedStr:
      for (NodeId v : tree.children(e, GM_F(JoinedStr, values)))
        if (tree.kind(v) != NodeKind::Constant)
          return "`" + short_text(ctx.text_of(e)) + "` is an f-string with placeholders";
      return {};
    case NodeKind::UnaryOp: {
      const auto op = op_of(tree, e, GM_F(UnaryOp, op));
      const NodeId operand = tree.child(e, GM_F(UnaryOp, operand));
      if ((op == NodeKind::USub || op == NodeKind::UAdd) &&
          tree.kind(operand) == NodeKind::Constant) {
        const auto k = tree.constant_at(tree.field(operand, GM_F(Constant, value))).kind;
        using K = ast::ConstantValue::Kind;
        if (k == K::Int || k == K::Float || k == K::Complex) return {};
      }
      break;
    }
    default: break;
  }
  return "`" + short_text(ctx.text_of(e)) + "` is not a constant";
}

std::optional<Piece> lazy_argument(const lint::RuleContext& ctx, NodeId arg, NodeId cond,
                                   NodeId stmt, std::string& why) {
  std::vector<NodeId> values;
  auto text = runtime_rewrite::lazy_message(ctx, arg, values);
  if (!text) {
    why =
        "only f-strings, `str.format` with positional arguments and `%` formatting are "
        "deferred, without a tensor read (`.item()`, `float(t)`) in a value, a `{x:{w}}` "
        "field or `%(name)s`";
    return std::nullopt;
  }
  const NodeId conds[] = {cond};
  if (!predication::evaluable_unconditionally(ctx, values, conds, stmt, why)) {
    why = "a value it formats would now run on every call: " + why;
    return std::nullopt;
  }
  return Piece::call(std::move(text->head), std::move(text->args));
}

// ------------------------------------------------------------------ after the guard

namespace {

constexpr std::string_view kMutatingMethods[] = {"append",
                                                 "extend",
                                                 "insert",
                                                 "pop",
                                                 "remove",
                                                 "clear",
                                                 "update",
                                                 "setdefault",
                                                 "popitem",
                                                 "register_buffer",
                                                 "register_parameter",
                                                 "register_module",
                                                 "add_module",
                                                 "__setitem__",
                                                 "__setattr__",
                                                 "__delitem__",
                                                 "__delattr__"};

bool is_mutating_method(std::string_view n) {
  return std::find(std::begin(kMutatingMethods), std::end(kMutatingMethods), n) !=
         std::end(kMutatingMethods);
}

// `add_`, `copy_`, `zero_`: a name ending in a single underscore.
bool is_inplace_name(std::string_view n) {
  return n.size() >= 2 && n.back() == '_' && n[n.size() - 2] != '_';
}

class AfterScan {
 public:
  AfterScan(const lint::RuleContext& ctx, sema::ScopeId scope, std::string_view noun)
      : ctx_(ctx), m_(*ctx.model()), tree_(ctx.tree()), scope_(scope), noun_(noun) {}

  // The first statement-level change found in `n`, or empty.
  std::string scan(NodeId n) {
    visit(n);
    return found_;
  }

 private:
  std::uint32_t line(NodeId n) const { return ctx_.lexed().lines.line_of(tree_.at(n).begin); }

  void violate(NodeId at, std::string what) {
    if (!found_.empty()) return;
    found_ = "line " + std::to_string(line(at)) + " after the " + std::string(noun_) + " " + what +
             ", which the deferred check would let happen before the error is raised";
  }

  bool is_kwarg_param(NodeId arg) const {
    const NodeId args = m_.parent(arg);
    return args && tree_.kind(args) == NodeKind::arguments &&
           tree_.child(args, GM_F(arguments, kwarg)) == arg;
  }

  // The name is bound in the guard's function, not as a parameter (except
  // `**kwargs`, a fresh dict), and no binding makes it an alias of something
  // from outside (`y = self.buf`, `for layer in self.layers`, `y = x[0]`).
  bool symbol_is_local(std::string_view name, int depth) const {
    if (depth > 8) return false;
    const auto bs = m_.bindings_of(scope_, name);
    if (bs.empty()) return false;
    for (const sema::Binding* b : bs) {
      switch (b->kind) {
        case sema::BindingKind::Parameter:
          if (is_kwarg_param(b->node)) continue;
          return false;
        case sema::BindingKind::Import:
        case sema::BindingKind::ImportFrom:
        case sema::BindingKind::FunctionDef:
        case sema::BindingKind::ClassDef:
        case sema::BindingKind::TypeParam: return false;
        case sema::BindingKind::Declaration:
        case sema::BindingKind::Delete:
        case sema::BindingKind::AugAssign: continue;
        default: {
          const NodeId v = b->value ? b->value : b->source;
          if (v && aliases_outside(v, depth + 1)) return false;
        }
      }
    }
    return true;
  }

  NodeId chain_root(NodeId e) const {
    for (;;) {
      switch (tree_.kind(e)) {
        case NodeKind::Attribute: e = tree_.child(e, GM_F(Attribute, value)); break;
        case NodeKind::Subscript: e = tree_.child(e, GM_F(Subscript, value)); break;
        case NodeKind::Starred: e = tree_.child(e, GM_F(Starred, value)); break;
        default: return e;
      }
    }
  }

  bool name_is_local(NodeId name, int depth) const {
    const sema::Binding* b = m_.resolve(name);
    if (b == nullptr || b->scope != scope_) return false;
    return symbol_is_local(tree_.text(tree_.field(name, GM_F(Name, id))), depth);
  }

  // A value that is another object's alias (a name, attribute or item of it)
  // whose root is not a local of this function.
  bool aliases_outside(NodeId v, int depth) const {
    const auto k = tree_.kind(v);
    if (k != NodeKind::Name && k != NodeKind::Attribute && k != NodeKind::Subscript &&
        k != NodeKind::Starred)
      return false;
    const NodeId root = chain_root(v);
    if (tree_.kind(root) != NodeKind::Name) return false;  // f().x: a fresh object
    return !name_is_local(root, depth);
  }

  // A store or mutation through `e` (`e.a = v`, `e[i] = v`, `e.add_(1)`)
  // stays inside this call of the function.
  bool root_is_local(NodeId e) const {
    const NodeId root = chain_root(e);
    return tree_.kind(root) == NodeKind::Name && name_is_local(root, 0);
  }

  std::string quoted(NodeId n) const { return "`" + short_text(ctx_.text_of(n)) + "`"; }

  void target(NodeId t, NodeId stmt, bool aug) {
    switch (tree_.kind(t)) {
      case NodeKind::Tuple:
        for (NodeId e : tree_.children(t, GM_F(Tuple, elts))) target(e, stmt, aug);
        break;
      case NodeKind::List:
        for (NodeId e : tree_.children(t, GM_F(List, elts))) target(e, stmt, aug);
        break;
      case NodeKind::Starred: target(tree_.child(t, GM_F(Starred, value)), stmt, aug); break;
      case NodeKind::Attribute:
      case NodeKind::Subscript:
        if (!root_is_local(t)) violate(stmt, "stores to " + quoted(t));
        break;
      case NodeKind::Name:
        // `x += y` updates a tensor in place: visible when `x` came from outside.
        if (aug && m_.fact(t).kind != sema::TensorKind::NotTensor &&
            !symbol_is_local(tree_.text(tree_.field(t, GM_F(Name, id))), 0))
          violate(stmt, "updates " + quoted(t) + " in place");
        break;
      default: break;
    }
  }

  void call(NodeId c) {
    const NodeId func = tree_.child(c, GM_F(Call, func));
    if (tree_.kind(func) == NodeKind::Attribute) {
      const auto attr = tree_.text(tree_.field(func, GM_F(Attribute, attr)));
      const NodeId recv = tree_.child(func, GM_F(Attribute, value));
      const bool module_recv = is_module_ref(m_, recv);
      if (is_inplace_name(attr)) {
        // torch.nn.init.zeros_(w), F.relu_(x): the first argument is updated.
        NodeId updated = recv;
        if (module_recv) {
          const auto args = tree_.children(c, GM_F(Call, args));
          updated = args.empty() ? NodeId{} : args[0];
        }
        if (!updated || !root_is_local(updated))
          violate(c, "calls the in-place `" + std::string(attr) + "` on " +
                         (updated ? quoted(updated) : quoted(c)));
      } else if (is_mutating_method(attr) && !module_recv && !root_is_local(recv)) {
        violate(c, "calls `." + std::string(attr) + "(...)` on " + quoted(recv));
      }
    } else if (tree_.kind(func) == NodeKind::Name) {
      const auto q = m_.qualified_name(func);
      if (q && (*q == "builtins.setattr" || *q == "builtins.delattr"))
        violate(c, "calls `" + q->substr(9) + "`");
    }
    if (NodeId kw = runtime_rewrite::keyword(tree_, c, "out"))
      violate(kw, "writes a result into `out=`");
  }

  void visit(NodeId root) {
    ast::preorder(tree_, root, [&](NodeId n) { return visit_one(n); });
  }

  ast::Visit visit_one(NodeId n) {
    if (!found_.empty()) return ast::Visit::Stop;
    switch (tree_.kind(n)) {
      case NodeKind::FunctionDef:
      case NodeKind::AsyncFunctionDef:
      case NodeKind::ClassDef:
      case NodeKind::Lambda:
        return ast::Visit::SkipChildren;  // bodies run when called: a call is the documented caveat
      case NodeKind::Global:
      case NodeKind::Nonlocal:
        violate(n, "declares `global`/`nonlocal`");
        return ast::Visit::SkipChildren;
      case NodeKind::Assign:
        for (NodeId t : tree_.children(n, GM_F(Assign, targets))) target(t, n, false);
        break;
      case NodeKind::AnnAssign:
        if (tree_.child(n, GM_F(AnnAssign, value)))
          target(tree_.child(n, GM_F(AnnAssign, target)), n, false);
        break;
      case NodeKind::AugAssign: target(tree_.child(n, GM_F(AugAssign, target)), n, true); break;
      case NodeKind::Delete:
        for (NodeId t : tree_.children(n, GM_F(Delete, targets))) target(t, n, false);
        break;
      case NodeKind::For: target(tree_.child(n, GM_F(For, target)), n, false); break;
      case NodeKind::AsyncFor: target(tree_.child(n, GM_F(AsyncFor, target)), n, false); break;
      case NodeKind::withitem:
        if (NodeId v = tree_.child(n, GM_F(withitem, optional_vars))) target(v, n, false);
        break;
      case NodeKind::Call: call(n); break;
      default: break;
    }
    return ast::Visit::Continue;
  }

  const lint::RuleContext& ctx_;
  const sema::Model& m_;
  const ast::Tree& tree_;
  sema::ScopeId scope_;
  std::string_view noun_;
  std::string found_;
};

// The List field of `parent` holding `child`, and its index there.
std::optional<std::pair<int, std::size_t>> slot_in(const ast::Tree& tree, NodeId parent,
                                                   NodeId child) {
  const auto fields = ast::fields_of(tree.kind(parent));
  for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
    if (fields[i].kind != ast::FieldKind::List) continue;
    const auto items = tree.children(parent, i);
    for (std::size_t k = 0; k < items.size(); ++k)
      if (items[k] == child) return std::make_pair(i, k);
  }
  return std::nullopt;
}

bool is_function(NodeKind k) {
  return k == NodeKind::FunctionDef || k == NodeKind::AsyncFunctionDef;
}

}  // namespace

std::string scan_after(const lint::RuleContext& ctx, NodeId guard, std::string_view noun) {
  const auto& tree = ctx.tree();
  const sema::Model& m = *ctx.model();
  const sema::ScopeId scope = m.scope_of(guard);
  if (scope == sema::kNone || m.scope(scope).kind != sema::ScopeKind::Function ||
      !is_function(tree.kind(m.scope(scope).node)))
    return "the guard is not directly inside a function";
  const NodeId fn = m.scope(scope).node;
  auto line_of = [&](NodeId n) { return ctx.lexed().lines.line_of(tree.at(n).begin); };

  // Everything that runs after the guard, in order, up to the function's end.
  std::vector<NodeId> after;
  auto rest_of = [&](std::span<const NodeId> list, std::size_t from) {
    for (std::size_t k = from; k < list.size(); ++k) after.push_back(list[k]);
  };
  NodeId cur = guard;
  while (cur != fn) {
    NodeId parent = m.parent(cur);
    if (!parent) return "the guard is not directly inside a function";
    const auto slot = slot_in(tree, parent, cur);
    if (!slot) return "the guard is not a statement of a block";
    const auto [field, index] = *slot;
    rest_of(tree.children(parent, field), index + 1);
    switch (tree.kind(parent)) {
      case NodeKind::For:
      case NodeKind::AsyncFor:
      case NodeKind::While: {
        const int body = tree.kind(parent) == NodeKind::While ? GM_F(While, body)
                         : tree.kind(parent) == NodeKind::For ? GM_F(For, body)
                                                              : GM_F(AsyncFor, body);
        // Later iterations (and the loop's test and target) run before the
        // deferred check: the whole loop counts.
        if (field == body) after.push_back(parent);
        break;
      }
      case NodeKind::Try:
      case NodeKind::TryStar: {
        const bool star = tree.kind(parent) == NodeKind::TryStar;
        const int body = star ? GM_F(TryStar, body) : GM_F(Try, body);
        const int handlers = star ? GM_F(TryStar, handlers) : GM_F(Try, handlers);
        const int orelse = star ? GM_F(TryStar, orelse) : GM_F(Try, orelse);
        const int finalbody = star ? GM_F(TryStar, finalbody) : GM_F(Try, finalbody);
        if (field == body) {
          if (!tree.children(parent, handlers).empty())
            return "the " + std::string(noun) + " is inside a `try` with `except` handlers (line " +
                   std::to_string(line_of(parent)) +
                   "): the trap raises at the end of the graph, where they cannot catch it";
          rest_of(tree.children(parent, orelse), 0);
        }
        if (field != finalbody) rest_of(tree.children(parent, finalbody), 0);
        break;
      }
      case NodeKind::ExceptHandler: {
        const NodeId tr = m.parent(parent);
        if (tr && (tree.kind(tr) == NodeKind::Try || tree.kind(tr) == NodeKind::TryStar))
          rest_of(tree.children(tr, tree.kind(tr) == NodeKind::Try ? GM_F(Try, finalbody)
                                                                   : GM_F(TryStar, finalbody)),
                  0);
        parent = tr;  // continue after the whole try
        break;
      }
      case NodeKind::match_case: parent = m.parent(parent); break;
      case NodeKind::If:
      case NodeKind::With:
      case NodeKind::AsyncWith: break;
      default:
        if (!is_function(tree.kind(parent))) return "the guard is not directly inside a function";
        break;
    }
    if (!parent) return "the guard is not directly inside a function";
    cur = parent;
  }

  AfterScan scan(ctx, scope, noun);
  // A global/nonlocal declaration anywhere in the function makes plain name
  // stores after the guard visible outside it.
  for (NodeId s :
       tree.children(fn, tree.kind(fn) == NodeKind::FunctionDef ? GM_F(FunctionDef, body)
                                                                : GM_F(AsyncFunctionDef, body))) {
    std::string found;
    walk(tree, s, [&](NodeId n) {
      if (!found.empty()) return;
      const auto k = tree.kind(n);
      if ((k == NodeKind::Global || k == NodeKind::Nonlocal) && m.scope_of(n) == scope)
        found = "the function declares `global`/`nonlocal` (line " + std::to_string(line_of(n)) +
                "): its stores after the " + std::string(noun) +
                " would be visible on the error path";
    });
    if (!found.empty()) return found;
  }
  for (NodeId s : after)
    if (auto found = scan.scan(s); !found.empty()) return found;
  return {};
}

// ------------------------------------------------------------------ layout

std::optional<std::string> render(const lint::RuleContext& ctx, NodeId stmt,
                                  const std::vector<Piece>& pieces, std::string_view close,
                                  std::string_view block, std::string_view before) {
  const std::string_view text = ctx.text();
  const auto& node = ctx.tree().at(stmt);
  if (pieces.empty() || pieces.front().kind != Piece::Kind::Literal || close != ")")
    return std::nullopt;
  const auto indent = edits::statement_indentation(text, node.begin);
  if (!indent) return std::nullopt;

  // The call's arguments: the pieces between top-level separators.
  std::vector<predication::Doc> args;
  int depth = 0;
  bool open = false;  // an argument is being built
  std::uint32_t prev_end = node.begin;
  auto cur = [&]() -> predication::Doc& {
    if (!open) {
      args.push_back(predication::Doc::atom({}));
      args.back().col = std::string::npos;
      open = true;
    }
    return args.back();
  };
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    switch (p.kind) {
      case Piece::Kind::Literal:
        cur().text += p.text;
        for (char c : p.text) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        break;
      case Piece::Kind::Separator:
        if (depth == 0)
          open = false;
        else
          cur().text += ", ";
        break;
      case Piece::Kind::Call: {
        if (open) return std::nullopt;  // a call is a whole argument
        std::vector<predication::Doc> inner;
        for (const auto& a : p.args) inner.push_back(predication::Doc::atom(a));
        args.push_back(predication::Doc::call_of(p.text, std::move(inner)));
        open = true;
        break;
      }
      case Piece::Kind::Source: {
        if (p.begin < prev_end || p.end > node.end || p.end <= p.begin) return std::nullopt;
        predication::Doc& d = cur();
        if (d.col == std::string::npos) {
          const std::size_t col = p.begin - edits::line_start(text, p.begin);
          d.col = col >= d.text.size() ? col - d.text.size() : 0;
          d.line_indent = edits::line_indentation(text, p.begin).size();
        }
        const std::string_view src = text.substr(p.begin, p.end - p.begin);
        d.text += src;
        d.verbatim = d.verbatim || predication::keep_verbatim(src);
        prev_end = p.end;
        break;
      }
    }
  }
  for (auto& a : args)
    if (a.col == std::string::npos) a.col = 0;

  // Comments of the statement outside the copied ranges go above it.
  std::vector<std::string> lines;
  const auto& trivia = ctx.lexed().trivia;  // in source order: start at the statement
  for (auto it = std::lower_bound(trivia.begin(), trivia.end(), node.begin,
                                  [](const Trivia& t, std::uint32_t o) { return t.begin < o; });
       it != trivia.end(); ++it) {
    const Trivia& t = *it;
    if (t.begin >= node.end) break;
    if (t.kind != Trivia::Kind::Comment) continue;
    if (t.begin < node.begin || t.end > node.end) continue;
    const bool copied = std::any_of(pieces.begin(), pieces.end(), [&](const Piece& p) {
      return p.kind == Piece::Kind::Source && p.begin <= t.begin && t.end <= p.end;
    });
    if (!copied) lines.emplace_back(text.substr(t.begin, t.end - t.begin));
  }
  const predication::Wrap wrap = predication::wrap_of(ctx, stmt);
  std::string head = pieces.front().text;
  // `if __debug__: trap(...)` that does not fit one line: the call goes in
  // the block, as one would write it.
  constexpr std::string_view kDebug = "if __debug__: ";
  const bool debug = head.starts_with(kDebug);
  predication::Doc doc = predication::Doc::call_of(head, args);
  if (!before.empty()) lines.emplace_back(before);
  if (!block.empty()) {
    lines.emplace_back(block);
    const auto call = predication::layout(wrap, "    ", "", doc);
    lines.insert(lines.end(), call.begin(), call.end());
    return edits::render_lines(lines, *indent, ctx.style());
  }
  auto call = predication::layout(wrap, "", "", doc);
  if (debug && call.size() > 1) {
    lines.emplace_back(kDebug.substr(0, kDebug.size() - 1));
    doc.text = head.substr(kDebug.size());
    call = predication::layout(wrap, "    ", "", doc);
  }
  lines.insert(lines.end(), call.begin(), call.end());
  return edits::render_lines(lines, *indent, ctx.style());
}

}  // namespace gm::rules::traps

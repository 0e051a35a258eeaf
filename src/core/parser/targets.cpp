// Targets: Store/Del contexts and CPython's messages for invalid targets.
//
// CPython 3.8 (ast.c set_context) and 3.9+ (pegen's invalid_* rules) word
// these differently; the tables below follow each version:
//   3.8/3.9  "cannot assign to operator", "dict display", "Ellipsis"
//   3.10+    "cannot assign to expression", "dict literal", "ellipsis", and
//            for a whole assignment target that is a bitwise_or-level
//            expression: "cannot assign to X here. Maybe you meant '=='
//            instead of '='?"
#include <string>

#include "parser/parser.h"

namespace gm::detail {

std::string Parser::expr_name(NodeId e) const {
  const bool old = !version_at_least(10);
  switch (tree_.kind(e)) {
    case NodeKind::Attribute: return "attribute";
    case NodeKind::Subscript: return "subscript";
    case NodeKind::Starred: return "starred";
    case NodeKind::Name: return "name";
    case NodeKind::List: return "list";
    case NodeKind::Tuple: return "tuple";
    case NodeKind::Lambda: return "lambda";
    case NodeKind::Call: return "function call";
    case NodeKind::BoolOp:
    case NodeKind::BinOp:
    case NodeKind::UnaryOp: return old ? "operator" : "expression";
    case NodeKind::GeneratorExp: return "generator expression";
    case NodeKind::Yield:
    case NodeKind::YieldFrom: return "yield expression";
    case NodeKind::Await: return "await expression";
    case NodeKind::ListComp: return "list comprehension";
    case NodeKind::SetComp: return "set comprehension";
    case NodeKind::DictComp: return "dict comprehension";
    case NodeKind::Dict: return old ? "dict display" : "dict literal";
    case NodeKind::Set: return "set display";
    case NodeKind::JoinedStr:
    case NodeKind::FormattedValue: return "f-string expression";
    case NodeKind::Constant: {
      using K = ast::ConstantValue::Kind;
      switch (tree_.constant_at(tree_.field(e, GM_F(Constant, value))).kind) {
        case K::None: return "None";
        case K::True: return "True";
        case K::False: return "False";
        case K::Ellipsis: return old ? "Ellipsis" : "ellipsis";
        default: return "literal";
      }
    }
    case NodeKind::Compare: return "comparison";
    case NodeKind::IfExp: return "conditional expression";
    case NodeKind::NamedExpr: return "named expression";
    default: return "expression";
  }
}

// The first sub-target that cannot be assigned (or deleted), or None.
NodeId Parser::invalid_target(NodeId e, NodeKind ctx) const {
  switch (tree_.kind(e)) {
    case NodeKind::Name:
    case NodeKind::Attribute:
    case NodeKind::Subscript: return NodeId{};
    case NodeKind::Starred:
      if (ctx == NodeKind::Del)
        return version_at_least(9) ? e : invalid_target(tree_.child(e, GM_F(Starred, value)), ctx);
      return invalid_target(tree_.child(e, GM_F(Starred, value)), ctx);
    case NodeKind::Tuple:
    case NodeKind::List: {
      const int idx = tree_.kind(e) == NodeKind::Tuple ? GM_F(Tuple, elts) : GM_F(List, elts);
      for (const NodeId c : tree_.children(e, idx)) {
        const NodeId bad = invalid_target(c, ctx);
        if (bad) return bad;
      }
      return NodeId{};
    }
    default: return e;
  }
}

void Parser::apply_context(NodeId e, NodeKind ctx) {
  switch (tree_.kind(e)) {
    case NodeKind::Name: tree_.set_field(e, GM_F(Name, ctx), ast::Tree::op(ctx)); return;
    case NodeKind::Attribute: tree_.set_field(e, GM_F(Attribute, ctx), ast::Tree::op(ctx)); return;
    case NodeKind::Subscript: tree_.set_field(e, GM_F(Subscript, ctx), ast::Tree::op(ctx)); return;
    case NodeKind::Starred:
      tree_.set_field(e, GM_F(Starred, ctx), ast::Tree::op(ctx));
      apply_context(tree_.child(e, GM_F(Starred, value)), ctx);
      return;
    case NodeKind::Tuple:
      tree_.set_field(e, GM_F(Tuple, ctx), ast::Tree::op(ctx));
      for (const NodeId c : tree_.children(e, GM_F(Tuple, elts))) apply_context(c, ctx);
      return;
    case NodeKind::List:
      tree_.set_field(e, GM_F(List, ctx), ast::Tree::op(ctx));
      for (const NodeId c : tree_.children(e, GM_F(List, elts))) apply_context(c, ctx);
      return;
    default: return;
  }
}

void Parser::set_context(NodeId e, NodeKind ctx, TargetKind why) {
  const NodeKind k = tree_.kind(e);
  switch (why) {
    case TargetKind::NamedExpr:
      // Only reached for `<non-name> :=`.
      fail_node(e, "cannot use assignment expressions with " + expr_name(e));
    case TargetKind::AugAssign:
      if (k == NodeKind::Name || k == NodeKind::Attribute || k == NodeKind::Subscript) break;
      if (!version_at_least(9)) {
        if (k == NodeKind::Tuple || k == NodeKind::List || k == NodeKind::Starred) {
          const NodeId bad = invalid_target(e, ctx);
          if (bad) fail_node(bad, "cannot assign to " + expr_name(bad));
          fail_node(e, "illegal expression for augmented assignment");
        }
        fail_node(e, "cannot assign to " + expr_name(e));
      }
      fail_node(e, "'" + expr_name(e) + "' is an illegal expression for augmented assignment");
    case TargetKind::AnnAssign:
      if (k == NodeKind::Name || k == NodeKind::Attribute || k == NodeKind::Subscript) break;
      if (k == NodeKind::Tuple) fail_node(e, "only single target (not tuple) can be annotated");
      if (k == NodeKind::List) fail_node(e, "only single target (not list) can be annotated");
      fail_node(e, "illegal target for annotation");
    default: {
      const NodeId bad = invalid_target(e, ctx);
      if (!bad) break;
      if (ctx == NodeKind::Del) fail_node(bad, "cannot delete " + expr_name(bad));
      if (why == TargetKind::Assign && bad == e &&
          (k == NodeKind::Yield || k == NodeKind::YieldFrom) && !is_parenthesized(e))
        fail_node(e, "assignment to yield expression not possible");
      if (why == TargetKind::Assign && bad == e && version_at_least(10) &&
          assignment_hint_applies(e))
        fail_node(
            e, "cannot assign to " + expr_name(e) + " here. Maybe you meant '==' instead of '='?");
      fail_node(bad, "cannot assign to " + expr_name(bad));
    }
  }
  if (!version_at_least(9) && ctx != NodeKind::Del) check_debug_target(e, ctx);
  apply_context(e, ctx);
}

// 3.8 rejects assignment to __debug__ in the parser.
void Parser::check_debug_target(NodeId e, NodeKind ctx) {
  switch (tree_.kind(e)) {
    case NodeKind::Name:
      if (tree_.text(tree_.field(e, GM_F(Name, id))) == "__debug__")
        fail_node(e, "cannot assign to __debug__");
      return;
    case NodeKind::Attribute:
      if (tree_.text(tree_.field(e, GM_F(Attribute, attr))) == "__debug__")
        fail_node(e, "cannot assign to __debug__");
      return;
    case NodeKind::Starred: check_debug_target(tree_.child(e, GM_F(Starred, value)), ctx); return;
    case NodeKind::Tuple:
      for (const NodeId c : tree_.children(e, GM_F(Tuple, elts))) check_debug_target(c, ctx);
      return;
    case NodeKind::List:
      for (const NodeId c : tree_.children(e, GM_F(List, elts))) check_debug_target(c, ctx);
      return;
    default: return;
  }
}

// CPython 3.10+'s invalid_named_expression: at the start of a statement,
// `!(list|tuple|genexp|True|None|False) bitwise_or '=' bitwise_or !('='|':=')`
// reports "cannot assign to X here. Maybe you meant '==' instead of '='?".
// Called after the '=' was consumed, before the value is parsed. Only runs on
// the error path, so the speculative parse of the value may be slow.
bool Parser::assignment_hint_applies(NodeId target) {
  const NodeKind k = tree_.kind(target);
  std::size_t i = first_token_index(target);
  bool parenthesised = false;
  while (i > 0 && lexed_.tokens[i - 1].kind == Tok::LPar) {
    parenthesised = true;
    --i;
  }
  if (i > 0) {
    const Tok before = lexed_.tokens[i - 1].kind;
    if (before == Tok::Equal) return false;  // not the first target
  }
  if (!parenthesised) {
    if (k == NodeKind::Compare || k == NodeKind::BoolOp || k == NodeKind::IfExp ||
        k == NodeKind::Lambda || k == NodeKind::NamedExpr || k == NodeKind::GeneratorExp)
      return false;
    if (k == NodeKind::UnaryOp &&
        tree_.field(target, GM_F(UnaryOp, op)).a == static_cast<std::uint32_t>(NodeKind::Not))
      return false;
    if (k == NodeKind::Yield || k == NodeKind::YieldFrom) return false;
  } else if (k == NodeKind::GeneratorExp) {
    return false;
  }
  if (k == NodeKind::Constant) {
    using K = ast::ConstantValue::Kind;
    const auto ck = tree_.constant_at(tree_.field(target, GM_F(Constant, value))).kind;
    if (ck == K::True || ck == K::False || ck == K::None) return false;
  }
  // The value: a bitwise_or not followed by '=' or ':='.
  const std::size_t saved_pos = pos_;
  const std::size_t saved_scratch = scratch_.size();
  const std::size_t saved_ops = ops_scratch_.size();
  bool ok = false;
  try {
    if (starts_value_bitwise_or()) {
      bitwise_or();
      ok = !at(Tok::Equal) && !at(Tok::ColonEqual);
    }
  } catch (const ParseAbort&) {
    ok = false;
  }
  error_.reset();
  pos_ = saved_pos;
  scratch_.resize(saved_scratch);
  ops_scratch_.resize(saved_ops);
  return ok;
}

// Index of the token where `e` begins (searching back from the cursor; only
// used on error paths).
std::size_t Parser::first_token_index(NodeId e) const {
  std::size_t i = pos_ == 0 ? 0 : pos_ - 1;
  while (i > 0 && lexed_.tokens[i].begin > begin_of(e)) --i;
  return i;
}

// Was `e` written in parentheses (a group: its first token follows '(')?
bool Parser::is_parenthesized(NodeId e) const {
  const std::size_t i = first_token_index(e);
  return i > 0 && lexed_.tokens[i - 1].kind == Tok::LPar;
}

bool Parser::starts_value_bitwise_or() const {
  switch (kind()) {
    case Tok::Name:
    case Tok::Number:
    case Tok::String:
    case Tok::FStringStart:
    case Tok::LPar:
    case Tok::LSqb:
    case Tok::LBrace:
    case Tok::Minus:
    case Tok::Plus:
    case Tok::Tilde:
    case Tok::KwAwait:
    case Tok::KwTrue:
    case Tok::KwFalse:
    case Tok::KwNone:
    case Tok::Ellipsis: return true;
    default: return false;
  }
}

}  // namespace gm::detail

// Expressions (CPython's Grammar/python.gram, `expressions` .. `atom`,
// comprehensions, calls, slices, targets).
//
// Positions follow CPython's EXTRA: a node spans the first token its rule
// consumed to the last one. A parenthesised operand therefore keeps its own
// (inner) position while a node built around it starts at the '(':
// `(a) + b` is a BinOp at col 0 whose left Name is at col 1. Every rule
// records `first = peek()` on entry and builds with make(kind, first,
// previous(), ...).
//
// Binary operators are parsed by precedence climbing (Pratt): one loop per
// call, right operands recursing only to the next precedence level, so long
// chains (`a + b + ... `) never deepen the C stack. Real nesting (brackets,
// unary operators, lambda bodies, ternaries, `not`, `await`, `**`) takes a
// DepthGuard.
//
// Child lists are built on scratch_ (see parser.h); no node allocates.
#include <string>
#include <utility>

#include "parser/parser.h"
#include "syntax/literals.h"

namespace gm::detail {

namespace {

using ast::Tree;

inline ast::Field N(NodeId id) { return Tree::node(id); }
inline ast::Field Op(NodeKind k) { return Tree::op(k); }

// Tokens that can begin an expression (without a leading '*').
bool starts_expression(Tok k) {
  switch (k) {
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
    case Tok::KwNot:
    case Tok::KwLambda:
    case Tok::KwAwait:
    case Tok::KwTrue:
    case Tok::KwFalse:
    case Tok::KwNone:
    case Tok::Ellipsis: return true;
    default: return false;
  }
}

bool starts_star_expression(Tok k) { return k == Tok::Star || starts_expression(k); }

// Fast path: a lone name or number followed by one of these tokens is the
// whole expression (no operator, trailer, ternary or string concatenation
// can follow), so the precedence chain can be skipped.
bool ends_expression(Tok k) {
  switch (k) {
    case Tok::Comma:
    case Tok::RPar:
    case Tok::RSqb:
    case Tok::RBrace:
    case Tok::Colon:
    case Tok::Newline:
    case Tok::Equal:
    case Tok::Semi: return true;
    default: return false;
  }
}

// Binary operators handled by the precedence climber, tightest last.
int binary_precedence(Tok k, NodeKind& op) {
  switch (k) {
    case Tok::VBar: op = NodeKind::BitOr; return 1;
    case Tok::Circumflex: op = NodeKind::BitXor; return 2;
    case Tok::Amper: op = NodeKind::BitAnd; return 3;
    case Tok::LeftShift: op = NodeKind::LShift; return 4;
    case Tok::RightShift: op = NodeKind::RShift; return 4;
    case Tok::Plus: op = NodeKind::Add; return 5;
    case Tok::Minus: op = NodeKind::Sub; return 5;
    case Tok::Star: op = NodeKind::Mult; return 6;
    case Tok::Slash: op = NodeKind::Div; return 6;
    case Tok::DoubleSlash: op = NodeKind::FloorDiv; return 6;
    case Tok::Percent: op = NodeKind::Mod; return 6;
    case Tok::At: op = NodeKind::MatMult; return 6;
    default: return 0;
  }
}

bool at_comprehension(const Parser& p) {
  return p.at(Tok::KwFor) || (p.at(Tok::KwAsync) && p.kind(1) == Tok::KwFor);
}

}  // namespace

// ---------------------------------------------------------------------------
// Expression lists

// expressions: expression (',' expression)* [',']
NodeId Parser::expressions() {
  const Token& first = peek();
  const NodeId e = expression();
  if (!at(Tok::Comma)) return e;
  const std::size_t base = scratch_.size();
  scratch_.push_back(e);
  while (accept(Tok::Comma)) {
    if (!starts_expression(kind())) break;
    scratch_.push_back(expression());
  }
  return make(NodeKind::Tuple, first, previous(), {scratch_list(base), Op(NodeKind::Load)});
}

// star_expressions: star_expression (',' star_expression)* [',']
NodeId Parser::star_expressions() {
  const Token& first = peek();
  const NodeId e = star_expression();
  if (!at(Tok::Comma)) return e;
  const std::size_t base = scratch_.size();
  scratch_.push_back(e);
  while (accept(Tok::Comma)) {
    if (!starts_star_expression(kind())) break;
    scratch_.push_back(star_expression());
  }
  return make(NodeKind::Tuple, first, previous(), {scratch_list(base), Op(NodeKind::Load)});
}

// star_expression: '*' bitwise_or | expression
NodeId Parser::star_expression() {
  if (!at(Tok::Star)) return expression();
  DepthGuard guard(*this);
  const Token& star = advance();
  const NodeId v = bitwise_or();
  return make(NodeKind::Starred, star, previous(), {N(v), Op(NodeKind::Load)});
}

// star_named_expression: '*' bitwise_or | named_expression
NodeId Parser::star_named_expression() {
  if (!at(Tok::Star)) return named_expression();
  DepthGuard guard(*this);
  const Token& star = advance();
  const NodeId v = bitwise_or();
  return make(NodeKind::Starred, star, previous(), {N(v), Op(NodeKind::Load)});
}

// The iterable of a `for` statement: star_expressions (3.9+); 3.8's
// `testlist` has no starred items.
NodeId Parser::star_named_expressions_tuple() {
  if (!version_at_least(9)) return expressions();
  return star_expressions();
}

// ---------------------------------------------------------------------------
// named_expression, expression, lambda

// named_expression: NAME ':=' expression | expression !':='
NodeId Parser::named_expression() {
  if (at(Tok::Name) && kind(1) == Tok::ColonEqual) {
    DepthGuard guard(*this);
    const Token& name = advance();
    advance();  // ':='
    const NodeId target = make(NodeKind::Name, name, name, {identifier(name), Op(NodeKind::Store)});
    const NodeId value = expression();
    return make(NodeKind::NamedExpr, name, previous(), {N(target), N(value)});
  }
  const NodeId e = expression();
  if (at(Tok::ColonEqual)) set_context(e, NodeKind::Store, TargetKind::NamedExpr);
  return e;
}

// expression: disjunction ['if' disjunction 'else' expression] | lambdef
NodeId Parser::expression() {
  const Tok k0 = kind();
  if ((k0 == Tok::Name || k0 == Tok::Number) && ends_expression(kind(1))) return atom();
  if (k0 == Tok::KwLambda) return lambda_expression();
  const Token& first = peek();
  NodeId body{};
  if (k0 == Tok::Name) {
    // Second fast path: a name with trailers (self.x, f(a), d[k]) is most
    // often the whole expression. Parse the primary first; if a token that
    // ends an expression follows, it is the result, and otherwise the
    // precedence chain starts from it (pending_primary_) instead of
    // descending eight rules to reach the same primary.
    const std::size_t start = mark();
    const NodeId p = primary();
    if (ends_expression(kind())) return p;
    pending_primary_ = p;
    pending_first_ = start;
    body = disjunction();
  } else {
    body = disjunction();
  }
  if (!at(Tok::KwIf)) {
    if (bracket_depth_ > 0 && starts_expression(kind()) && version_at_least(10))
      missing_comma_error(first, body);
    return body;
  }
  DepthGuard guard(*this);
  advance();
  const NodeId test = disjunction();
  if (!at(Tok::KwElse)) {
    if (version_at_least(10) && !at(Tok::Colon) && !at(Tok::Error))
      fail_range(begin_of(body), end_of(test), "expected 'else' after 'if' expression");
    syntax_error_here();
  }
  advance();
  const NodeId orelse = expression();
  return make(NodeKind::IfExp, first, previous(), {N(test), N(body), N(orelse)});
}

// lambdef: 'lambda' [lambda_params] ':' expression
NodeId Parser::lambda_expression() {
  DepthGuard guard(*this);
  const Token& kw = advance();
  const NodeId args = parameters(true);
  if (!accept(Tok::Colon)) syntax_error_here();
  const NodeId body = expression();
  return make(NodeKind::Lambda, kw, previous(), {N(args), N(body)});
}

// yield_expr: 'yield' 'from' expression | 'yield' [star_expressions]
NodeId Parser::yield_expression() {
  DepthGuard guard(*this);
  const Token& kw = expect(Tok::KwYield);
  if (accept(Tok::KwFrom)) {
    const NodeId v = expression();
    return make(NodeKind::YieldFrom, kw, previous(), {N(v)});
  }
  NodeId v{};
  if (starts_star_expression(kind())) v = star_expressions();
  return make(NodeKind::Yield, kw, previous(), {N(v)});
}

// 3.10+'s invalid_expression: inside brackets, `a b` where `b` parses as an
// expression -> "invalid syntax. Perhaps you forgot a comma?" over a..b,
// unless `a` starts with NAME STRING or a soft keyword, or is print/exec.
void Parser::missing_comma_error(const Token& first, NodeId a) {
  if (first.kind == Tok::Name) {
    const std::string_view t = text(first);
    if (t == "match" || t == "case" || t == "_" || (t == "type" && version_at_least(12))) return;
    const Tok next = lexed_.tokens[first_token_index(a) + 1].kind;
    if (next == Tok::String || next == Tok::FStringStart) return;
    if (tree_.kind(a) == NodeKind::Name && (t == "print" || t == "exec")) return;
  }
  const std::size_t saved_pos = pos_;
  const std::size_t saved_scratch = scratch_.size();
  const std::size_t saved_ops = ops_scratch_.size();
  const int saved_brackets = bracket_depth_;
  NodeId b{};
  try {
    bracket_depth_ = 0;  // no nested report from the speculative parse
    b = expression();
  } catch (const ParseAbort&) {
    b = NodeId{};
    pending_primary_ = NodeId{};
  }
  error_.reset();
  bracket_depth_ = saved_brackets;
  if (b) fail_range(begin_of(a), end_of(b), "invalid syntax. Perhaps you forgot a comma?");
  pos_ = saved_pos;
  scratch_.resize(saved_scratch);
  ops_scratch_.resize(saved_ops);
}

// ---------------------------------------------------------------------------
// Boolean operators, comparisons

// disjunction: conjunction ('or' conjunction)*
NodeId Parser::disjunction() {
  const Token& first = rule_first();
  const NodeId v = conjunction();
  if (!at(Tok::KwOr)) return v;
  const std::size_t base = scratch_.size();
  scratch_.push_back(v);
  while (accept(Tok::KwOr)) scratch_.push_back(conjunction());
  return make(NodeKind::BoolOp, first, previous(), {Op(NodeKind::Or), scratch_list(base)});
}

// conjunction: inversion ('and' inversion)*
NodeId Parser::conjunction() {
  const Token& first = rule_first();
  const NodeId v = inversion();
  if (!at(Tok::KwAnd)) return v;
  const std::size_t base = scratch_.size();
  scratch_.push_back(v);
  while (accept(Tok::KwAnd)) scratch_.push_back(inversion());
  return make(NodeKind::BoolOp, first, previous(), {Op(NodeKind::And), scratch_list(base)});
}

// inversion: 'not' inversion | comparison
NodeId Parser::inversion() {
  if (pending_primary_ || !at(Tok::KwNot)) return comparison();
  DepthGuard guard(*this);
  const Token& kw = advance();
  const NodeId operand = inversion();
  return make(NodeKind::UnaryOp, kw, previous(), {Op(NodeKind::Not), N(operand)});
}

// comparison: bitwise_or (compare_op bitwise_or)*
NodeId Parser::comparison() {
  const Token& first = rule_first();
  const NodeId left = bitwise_or();
  NodeKind op{};
  if (!at_compare_op(op)) return left;
  const std::size_t base = scratch_.size();
  const std::size_t obase = ops_scratch_.size();
  while (at_compare_op(op)) {
    // `<>` (the lexer makes it a NotEqual): every CPython 3.8-3.13 rejects
    // it in a file, also after `from __future__ import barry_as_FLUFL`
    // (only a compile flag enables it), with a plain "invalid syntax" there.
    if (kind() == Tok::NotEqual && source_.text().substr(peek().begin, 2) == "<>")
      fail(peek(), "invalid syntax");
    if (op == NodeKind::NotIn || op == NodeKind::IsNot) advance();
    advance();
    ops_scratch_.push_back(op);
    scratch_.push_back(bitwise_or());
  }
  const ast::Field ops = tree_.op_list(
      std::span<const NodeKind>(ops_scratch_.data() + obase, ops_scratch_.size() - obase));
  ops_scratch_.resize(obase);
  const ast::Field comparators = scratch_list(base);
  return make(NodeKind::Compare, first, previous(), {N(left), ops, comparators});
}

bool Parser::at_compare_op(NodeKind& op) const {
  switch (kind()) {
    case Tok::EqEqual: op = NodeKind::Eq; return true;
    case Tok::NotEqual: op = NodeKind::NotEq; return true;
    case Tok::Less: op = NodeKind::Lt; return true;
    case Tok::LessEqual: op = NodeKind::LtE; return true;
    case Tok::Greater: op = NodeKind::Gt; return true;
    case Tok::GreaterEqual: op = NodeKind::GtE; return true;
    case Tok::KwIn: op = NodeKind::In; return true;
    case Tok::KwIs: op = kind(1) == Tok::KwNot ? NodeKind::IsNot : NodeKind::Is; return true;
    case Tok::KwNot:
      if (kind(1) != Tok::KwIn) return false;
      op = NodeKind::NotIn;
      return true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------
// Binary and unary operators

NodeId Parser::bitwise_or() { return binary(1); }

// Precedence climbing over | ^ & << >> + - * / // % @ (all left-associative).
NodeId Parser::binary(int min_precedence) {
  const Token& first = rule_first();
  NodeId left = factor();
  NodeKind op{};
  for (int prec = binary_precedence(kind(), op); prec >= min_precedence;
       prec = binary_precedence(kind(), op)) {
    const NodeKind this_op = op;
    advance();
    const NodeId right = prec == 6 ? factor() : binary(prec + 1);
    left = make(NodeKind::BinOp, first, previous(), {N(left), Op(this_op), N(right)});
  }
  return left;
}

// factor: ('+' | '-' | '~') factor | power
NodeId Parser::factor() {
  if (pending_primary_) return power();
  NodeKind op{};
  switch (kind()) {
    case Tok::Plus: op = NodeKind::UAdd; break;
    case Tok::Minus: op = NodeKind::USub; break;
    case Tok::Tilde: op = NodeKind::Invert; break;
    default: return power();
  }
  DepthGuard guard(*this);
  const Token& tok = advance();
  const NodeId operand = factor();
  return make(NodeKind::UnaryOp, tok, previous(), {Op(op), N(operand)});
}

// power: await_primary ['**' factor]
// await_primary: AWAIT primary | primary
NodeId Parser::power() {
  const Token& first = rule_first();
  NodeId base{};
  if (!pending_primary_ && at(Tok::KwAwait)) {
    DepthGuard guard(*this);
    advance();
    const NodeId v = primary();
    base = make(NodeKind::Await, first, previous(), {N(v)});
  } else {
    base = primary();
  }
  if (!at(Tok::DoubleStar)) return base;
  DepthGuard guard(*this);
  advance();
  const NodeId exponent = factor();
  return make(NodeKind::BinOp, first, previous(), {N(base), Op(NodeKind::Pow), N(exponent)});
}

// ---------------------------------------------------------------------------
// Primaries: atom followed by .name, (args), [slices]

NodeId Parser::primary() {
  const Token& first = rule_first();
  NodeId e{};
  if (pending_primary_) {
    e = pending_primary_;  // the chain's leftmost primary, parsed already
    pending_primary_ = NodeId{};
  } else {
    e = atom();
  }
  for (;;) {
    switch (kind()) {
      case Tok::Dot: {
        advance();
        if (!at(Tok::Name)) syntax_error_here();
        const Token& name = advance();
        e = make(NodeKind::Attribute, first, name, {N(e), identifier(name), Op(NodeKind::Load)});
        break;
      }
      case Tok::LPar: e = call(e, first, true); break;
      case Tok::LSqb: {
        DepthGuard guard(*this);
        BracketGuard brackets(*this);
        advance();
        const NodeId s = slices();
        if (!at(Tok::RSqb)) syntax_error_here();
        advance();
        e = make(NodeKind::Subscript, first, previous(), {N(e), N(s), Op(NodeKind::Load)});
        break;
      }
      default: return e;
    }
  }
}

// slices: slice !',' | ','.(slice | starred_expression)+ [',']
NodeId Parser::slices() {
  const Token& first = peek();
  if (at(Tok::RSqb)) syntax_error_here();
  const NodeId s = slice_item();
  if (!at(Tok::Comma) && tree_.kind(s) != NodeKind::Starred) return s;
  const std::size_t base = scratch_.size();
  scratch_.push_back(s);
  while (accept(Tok::Comma)) {
    if (at(Tok::RSqb)) break;
    scratch_.push_back(slice_item());
  }
  return make(NodeKind::Tuple, first, previous(), {scratch_list(base), Op(NodeKind::Load)});
}

// slice: [expression] ':' [expression] [':' [expression]] | named_expression
// (3.11+ also '*' expression inside the tuple form)
NodeId Parser::slice_item() {
  const Token& first = peek();
  if (at(Tok::Star)) {
    require_version(11, first, "starred expression in subscript");
    DepthGuard guard(*this);
    advance();
    const NodeId v = expression();
    return make(NodeKind::Starred, first, previous(), {N(v), Op(NodeKind::Load)});
  }
  NodeId lower{};
  if (!at(Tok::Colon)) {
    lower = version_at_least(10) ? named_expression() : expression();
    if (!at(Tok::Colon)) return lower;
    // `a[b := 1 : 2]`: only a whole subscript may be a bare named expression.
    if (tree_.kind(lower) == NodeKind::NamedExpr && first.kind == Tok::Name) syntax_error_here();
  }
  advance();  // ':'
  NodeId upper{};
  NodeId step{};
  if (starts_expression(kind())) upper = expression();
  if (accept(Tok::Colon)) {
    if (starts_expression(kind())) step = expression();
  }
  return make(NodeKind::Slice, first, previous(), {N(lower), N(upper), N(step)});
}

// ---------------------------------------------------------------------------
// Calls

NodeId Parser::call_arguments(NodeId func) {
  // Class bases (func is None): a bare generator expression is not allowed.
  return call(func, peek(), /*allow_genexp=*/static_cast<bool>(func));
}

// '(' [args] ')' after `func`; the Call spans `first` .. ')'.
NodeId Parser::call(NodeId func, const Token& first, bool allow_genexp) {
  DepthGuard guard(*this);
  BracketGuard brackets(*this);
  const Token& lpar = advance();  // '('
  const std::size_t base = scratch_.size();
  bool seen_keyword = false;
  bool seen_double_star = false;
  NodeId first_double_star{};
  while (!at(Tok::RPar)) {
    const Token& afirst = peek();
    if (at(Tok::Star)) {
      advance();
      const NodeId v = expression();
      // 3.8 ends a starred argument at its value (`*(a)` ends before ')').
      const NodeId s = version_at_least(9)
                           ? make(NodeKind::Starred, afirst, previous(), {N(v), Op(NodeKind::Load)})
                           : make_from(NodeKind::Starred, afirst, v, {N(v), Op(NodeKind::Load)});
      if (seen_double_star) {
        if (!version_at_least(10) || minor() >= 13)
          fail_range(version_at_least(13) ? begin_of(first_double_star) : afirst.begin,
                     version_at_least(13) ? end_of(s) : afirst.end,
                     "iterable argument unpacking follows keyword argument unpacking");
        if (minor() == 10)
          fail_node(first_double_star,
                    "iterable argument unpacking follows keyword argument unpacking");
        fail(afirst, "iterable argument unpacking follows keyword argument unpacking");
      }
      scratch_.push_back(s);
    } else if (at(Tok::DoubleStar)) {
      advance();
      const NodeId v = expression();
      const NodeId k = make(NodeKind::keyword, afirst, previous(), {Tree::none_string(), N(v)});
      if (!seen_double_star) first_double_star = k;
      seen_double_star = true;
      scratch_.push_back(k);
    } else if (at(Tok::Name) && kind(1) == Tok::Equal) {
      const Token& name = advance();
      const Token& eq = advance();  // '='
      const NodeId v = expression();
      if (at_comprehension(*this)) {
        if (version_at_least(10))
          fail_range(name.begin, eq.end,
                     "invalid syntax. Maybe you meant '==' or ':=' instead of '='?");
        syntax_error_here();
      }
      const NodeId k = make(NodeKind::keyword, name, previous(), {identifier(name), N(v)});
      if (!version_at_least(9)) {
        if (text(name) == "__debug__") fail(name, "cannot assign to __debug__");
        check_repeated_keyword(base, name);
      }
      seen_keyword = true;
      scratch_.push_back(k);
    } else {
      NodeId e = named_expression();
      if (at_comprehension(*this)) {
        if (!allow_genexp) syntax_error_here();
        // 3.8's `argument: test [comp_for] | test ':=' test`: no bare walrus.
        if (!version_at_least(9) && tree_.kind(e) == NodeKind::NamedExpr &&
            afirst.kind == Tok::Name)
          syntax_error_here();
        if (tree_.kind(e) == NodeKind::Starred)
          fail_node(e, "iterable unpacking cannot be used in comprehension");
        const ast::Field gens = comprehension_clauses();
        const bool sole = scratch_.size() == base && at(Tok::RPar);
        if (sole) {
          e = make(NodeKind::GeneratorExp, lpar, peek(), {N(e), gens});
        } else {
          e = make(NodeKind::GeneratorExp, afirst, previous(), {N(e), gens});
          fail_node(e, "Generator expression must be parenthesized");
        }
      } else if (at(Tok::Equal)) {
        keyword_assignment_error(e);
      }
      if (seen_double_star) {
        if (version_at_least(9))
          syntax_error_after_argument(e, "positional argument follows keyword argument unpacking");
        fail_node(e, "positional argument follows keyword argument unpacking");
      }
      if (seen_keyword) {
        if (version_at_least(9))
          syntax_error_after_argument(e, "positional argument follows keyword argument");
        fail_node(e, "positional argument follows keyword argument");
      }
      scratch_.push_back(e);
    }
    if (!accept(Tok::Comma)) break;
  }
  if (!at(Tok::RPar)) syntax_error_here();
  advance();

  // Split the arguments: positional (and starred) vs keywords, in order.
  const std::size_t end = scratch_.size();
  for (std::size_t i = base; i < end; ++i)
    if (tree_.kind(scratch_[i]) != NodeKind::keyword) scratch_.push_back(scratch_[i]);
  const ast::Field args =
      tree_.list(std::span<const NodeId>(scratch_.data() + end, scratch_.size() - end));
  scratch_.resize(end);
  for (std::size_t i = base; i < end; ++i)
    if (tree_.kind(scratch_[i]) == NodeKind::keyword) scratch_.push_back(scratch_[i]);
  const ast::Field keywords =
      tree_.list(std::span<const NodeId>(scratch_.data() + end, scratch_.size() - end));
  scratch_.resize(base);
  return make(NodeKind::Call, first, previous(), {N(func), args, keywords});
}

void Parser::check_repeated_keyword(std::size_t base, const Token& name) {
  const std::string_view t = text(name);
  for (std::size_t i = base; i < scratch_.size(); ++i) {
    const NodeId k = scratch_[i];
    if (tree_.kind(k) != NodeKind::keyword) continue;
    const ast::Field arg = tree_.field(k, GM_F(keyword, arg));
    if (Tree::is_none_string(arg)) continue;
    if (tree_.text(arg) == t) fail(name, "keyword argument repeated");
  }
}

// `f(<expr> = ...)` where <expr> is not a plain name.
void Parser::keyword_assignment_error(NodeId e) {
  const NodeKind k = tree_.kind(e);
  if (k == NodeKind::Constant && minor() != 9) {
    const auto& v = tree_.constant_at(tree_.field(e, GM_F(Constant, value)));
    using K = ast::ConstantValue::Kind;
    if (v.kind == K::True) fail_node(e, "cannot assign to True");
    if (v.kind == K::False) fail_node(e, "cannot assign to False");
    if (v.kind == K::None) fail_node(e, "cannot assign to None");
  }
  if (version_at_least(10)) {
    const Token& eq = peek();
    fail_range(begin_of(e), eq.end,
               "expression cannot contain assignment, perhaps you meant \"==\"?");
  }
  fail_node(e, "expression cannot contain assignment, perhaps you meant \"==\"?");
}

// 3.9+ reports these argument-order errors at the token after the argument.
void Parser::syntax_error_after_argument(NodeId e, const char* message) {
  (void)e;
  fail(peek(), message);
}

// ---------------------------------------------------------------------------
// Atoms

NodeId Parser::atom() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Name:
      advance();
      return make(NodeKind::Name, t, t, {identifier(t), Op(NodeKind::Load)});
    case Tok::KwTrue:
    case Tok::KwFalse:
    case Tok::KwNone:
    case Tok::Ellipsis: {
      advance();
      ast::ConstantValue v;
      using K = ast::ConstantValue::Kind;
      v.kind = t.kind == Tok::KwTrue    ? K::True
               : t.kind == Tok::KwFalse ? K::False
               : t.kind == Tok::KwNone  ? K::None
                                        : K::Ellipsis;
      return make(NodeKind::Constant, t, t, {tree_.constant(v), Tree::none_string()});
    }
    case Tok::Number: return number();
    case Tok::String:
    case Tok::FStringStart: return strings();
    case Tok::LPar: return parenthesized();
    case Tok::LSqb: return list_display();
    case Tok::LBrace: return brace_display();
    default: syntax_error_here();
  }
}

// '(' ... ')': tuple, group, generator expression, parenthesised yield.
NodeId Parser::parenthesized() {
  DepthGuard guard(*this);
  BracketGuard brackets(*this);
  const Token& lpar = advance();
  if (at(Tok::RPar)) {
    const Token& rpar = advance();
    return make(NodeKind::Tuple, lpar, rpar,
                {tree_.list(std::span<const NodeId>()), Op(NodeKind::Load)});
  }
  if (at(Tok::KwYield)) {
    const NodeId y = yield_expression();
    if (!at(Tok::RPar)) syntax_error_here();
    advance();
    return y;
  }
  const NodeId e = star_named_expression();
  if (at_comprehension(*this)) {
    if (tree_.kind(e) == NodeKind::Starred)
      fail_node(e, "iterable unpacking cannot be used in comprehension");
    const ast::Field gens = comprehension_clauses();
    if (!at(Tok::RPar)) syntax_error_here();
    const Token& rpar = advance();
    return make(NodeKind::GeneratorExp, lpar, rpar, {N(e), gens});
  }
  if (at(Tok::RPar)) {
    if (tree_.kind(e) == NodeKind::Starred && version_at_least(9))
      fail_node(e, version_at_least(10) ? "cannot use starred expression here"
                                        : "can't use starred expression here");
    advance();
    return e;
  }
  if (!at(Tok::Comma)) syntax_error_here();
  const std::size_t base = scratch_.size();
  scratch_.push_back(e);
  while (accept(Tok::Comma)) {
    if (at(Tok::RPar)) break;
    scratch_.push_back(star_named_expression());
  }
  if (!at(Tok::RPar)) syntax_error_here();
  const Token& rpar = advance();
  return make(NodeKind::Tuple, lpar, rpar, {scratch_list(base), Op(NodeKind::Load)});
}

// '[' [star_named_expressions] ']' | '[' named_expression for_if_clauses ']'
NodeId Parser::list_display() {
  DepthGuard guard(*this);
  BracketGuard brackets(*this);
  const Token& lsqb = advance();
  const std::size_t base = scratch_.size();
  if (!at(Tok::RSqb)) {
    const NodeId e = star_named_expression();
    if (at_comprehension(*this)) {
      if (tree_.kind(e) == NodeKind::Starred)
        fail_node(e, "iterable unpacking cannot be used in comprehension");
      const ast::Field gens = comprehension_clauses();
      if (!at(Tok::RSqb)) syntax_error_here();
      const Token& rsqb = advance();
      return make(NodeKind::ListComp, lsqb, rsqb, {N(e), gens});
    }
    scratch_.push_back(e);
    while (accept(Tok::Comma)) {
      if (at(Tok::RSqb)) break;
      scratch_.push_back(star_named_expression());
    }
  }
  if (!at(Tok::RSqb)) syntax_error_here();
  const Token& rsqb = advance();
  return make(NodeKind::List, lsqb, rsqb, {scratch_list(base), Op(NodeKind::Load)});
}

// Set elements: 3.8's grammar has no walrus there.
NodeId Parser::set_element() {
  if (version_at_least(9)) return star_named_expression();
  return star_expression();
}

// '{' ... '}': dict, set, dict/set comprehension.
NodeId Parser::brace_display() {
  DepthGuard guard(*this);
  BracketGuard brackets(*this);
  const Token& lbrace = advance();
  if (at(Tok::RBrace)) {
    const Token& rbrace = advance();
    const ast::Field empty = tree_.list(std::span<const NodeId>());
    return make(NodeKind::Dict, lbrace, rbrace, {empty, empty});
  }
  const std::size_t base = scratch_.size();
  // First element decides: '**' or `key ':'` -> dict, else set.
  if (at(Tok::DoubleStar)) {
    const Token& dstar = advance();
    const NodeId v = bitwise_or();
    if (at_comprehension(*this))
      fail_range(dstar.begin, end_of(v), "dict unpacking cannot be used in dict comprehension");
    scratch_.push_back(NodeId{});
    scratch_.push_back(v);
    return dict_rest(lbrace, base);
  }
  const NodeId first = set_element();
  if (at(Tok::Colon) && tree_.kind(first) != NodeKind::Starred) {
    advance();
    const NodeId value = expression();
    if (at_comprehension(*this)) {
      const ast::Field gens = comprehension_clauses();
      if (!at(Tok::RBrace)) syntax_error_here();
      const Token& rbrace = advance();
      return make(NodeKind::DictComp, lbrace, rbrace, {N(first), N(value), gens});
    }
    scratch_.push_back(first);
    scratch_.push_back(value);
    return dict_rest(lbrace, base);
  }
  if (at_comprehension(*this)) {
    if (tree_.kind(first) == NodeKind::Starred)
      fail_node(first, "iterable unpacking cannot be used in comprehension");
    const ast::Field gens = comprehension_clauses();
    if (!at(Tok::RBrace)) syntax_error_here();
    const Token& rbrace = advance();
    return make(NodeKind::SetComp, lbrace, rbrace, {N(first), gens});
  }
  scratch_.push_back(first);
  while (accept(Tok::Comma)) {
    if (at(Tok::RBrace)) break;
    scratch_.push_back(set_element());
  }
  if (!at(Tok::RBrace)) syntax_error_here();
  const Token& rbrace = advance();
  return make(NodeKind::Set, lbrace, rbrace, {scratch_list(base)});
}

// The rest of a dict display; scratch_[base..] holds (key, value) pairs.
NodeId Parser::dict_rest(const Token& lbrace, std::size_t base) {
  while (accept(Tok::Comma)) {
    if (at(Tok::RBrace)) break;
    if (accept(Tok::DoubleStar)) {
      scratch_.push_back(NodeId{});
      scratch_.push_back(bitwise_or());
      continue;
    }
    const NodeId key = expression();
    if (!at(Tok::Colon)) syntax_error_here();
    advance();
    scratch_.push_back(key);
    scratch_.push_back(expression());
  }
  if (!at(Tok::RBrace)) syntax_error_here();
  const Token& rbrace = advance();
  // De-interleave the pairs into keys then values.
  const std::size_t end = scratch_.size();
  for (std::size_t i = base; i < end; i += 2) scratch_.push_back(scratch_[i]);
  const ast::Field keys =
      tree_.list(std::span<const NodeId>(scratch_.data() + end, scratch_.size() - end));
  scratch_.resize(end);
  for (std::size_t i = base + 1; i < end; i += 2) scratch_.push_back(scratch_[i]);
  const ast::Field values =
      tree_.list(std::span<const NodeId>(scratch_.data() + end, scratch_.size() - end));
  scratch_.resize(base);
  return make(NodeKind::Dict, lbrace, rbrace, {keys, values});
}

// ---------------------------------------------------------------------------
// Comprehensions

// for_if_clauses: (ASYNC? 'for' star_targets 'in' disjunction ('if' disjunction)*)+
ast::Field Parser::comprehension_clauses() {
  const std::size_t base = scratch_.size();
  while (at_comprehension(*this)) {
    const Token& first = peek();
    const bool is_async = accept(Tok::KwAsync);
    advance();  // 'for'
    const NodeId target = target_list(TargetKind::Comprehension);
    if (!at(Tok::KwIn)) syntax_error_here();
    advance();
    const NodeId iter = disjunction();
    const std::size_t ibase = scratch_.size();
    while (accept(Tok::KwIf)) {
      // 3.8's comp_if takes test_nocond: a lambda without a ternary body.
      if (!version_at_least(9) && at(Tok::KwLambda)) {
        scratch_.push_back(lambda_nocond());
      } else {
        scratch_.push_back(disjunction());
      }
    }
    const ast::Field ifs = scratch_list(ibase);
    const NodeId c = tree_.add(NodeKind::comprehension, first.begin, previous().end, Position{},
                               {N(target), N(iter), ifs, Tree::integer(is_async ? 1 : 0)});
    scratch_.push_back(c);
  }
  return scratch_list(base);
}

// 3.8: lambdef_nocond: 'lambda' [varargslist] ':' test_nocond
NodeId Parser::lambda_nocond() {
  DepthGuard guard(*this);
  const Token& kw = advance();
  const NodeId args = parameters(true);
  if (!accept(Tok::Colon)) syntax_error_here();
  const NodeId body = at(Tok::KwLambda) ? lambda_nocond() : disjunction();
  return make(NodeKind::Lambda, kw, previous(), {N(args), N(body)});
}

// ---------------------------------------------------------------------------
// Targets

// star_targets: star_target (',' star_target)* [',']  (for / with targets)
NodeId Parser::star_targets() { return target_list(TargetKind::For); }

NodeId Parser::target_list(TargetKind why) {
  const Token& first = peek();
  const NodeId t = star_target();
  NodeId result = t;
  if (at(Tok::Comma)) {
    const std::size_t base = scratch_.size();
    scratch_.push_back(t);
    while (accept(Tok::Comma)) {
      if (!starts_star_expression(kind())) break;
      scratch_.push_back(star_target());
    }
    // 3.8 starts a for/comprehension target tuple at its first element's
    // node (`for (a), b in c` -> col of `a`), ending at its last token.
    result =
        version_at_least(9)
            ? make(NodeKind::Tuple, first, previous(), {scratch_list(base), Op(NodeKind::Load)})
            : make_to(NodeKind::Tuple, t, previous(), {scratch_list(base), Op(NodeKind::Load)});
  }
  set_context(result, NodeKind::Store, why);
  return result;
}

// star_target: '*' star_target | bitwise_or (validated by set_context)
NodeId Parser::star_target() {
  if (!at(Tok::Star)) return bitwise_or();
  DepthGuard guard(*this);
  const Token& star = advance();
  if (at(Tok::Star)) syntax_error_here();
  const NodeId v = star_target();
  return make(NodeKind::Starred, star, previous(), {N(v), Op(NodeKind::Load)});
}

}  // namespace gm::detail

// ---------------------------------------------------------------------------
// Numbers

namespace gm::detail {

NodeId Parser::number() {
  const Token& t = advance();
  // The common case, a plain decimal int without '_' or leading zeros: its
  // digits are its source text.
  {
    const std::string_view tt = text(t);
    bool plain = tt.size() <= 4300 && (tt[0] != '0' || tt.size() == 1);
    for (std::size_t i = 0; plain && i < tt.size(); ++i) plain = tt[i] >= '0' && tt[i] <= '9';
    if (plain) {
      ast::ConstantValue v;
      v.kind = ast::ConstantValue::Kind::Int;
      v.text = tree_.source_ref(t.begin, t.end);
      return make(NodeKind::Constant, t, t, {tree_.constant(v), ast::Tree::none_string()});
    }
  }
  literals::Number n;
  if (auto err = literals::parse_number(text(t), n)) fail(t, std::move(err->message));
  ast::ConstantValue v;
  using K = ast::ConstantValue::Kind;
  switch (n.kind) {
    case literals::Number::Kind::Int:
      v.kind = K::Int;
      v.text = tree_.intern(n.digits);
      break;
    case literals::Number::Kind::Float:
      v.kind = K::Float;
      v.number = n.value;
      break;
    case literals::Number::Kind::Complex:
      v.kind = K::Complex;
      v.number = n.value;
      break;
  }
  return make(NodeKind::Constant, t, t, {tree_.constant(v), ast::Tree::none_string()});
}

}  // namespace gm::detail

// The match statement (3.10+) and its patterns (CPython's `match_stmt` ..
// `keyword_pattern`).
//
// Positions follow CPython's EXTRA: a pattern spans the tokens its rule
// consumed, so `(a) | b` starts at '(' while a group pattern `(a)` on its own
// is just `a`.
#include <string>

#include "parser/parser.h"

namespace gm::detail {

namespace {
using ast::Tree;

bool starts_pattern_follow_name(Tok k) {
  // pattern_capture_target: !"_" NAME !('.' | '(' | '=')
  return k == Tok::Dot || k == Tok::LPar || k == Tok::Equal;
}
}  // namespace

// match_stmt: "match" subject_expr ':' NEWLINE INDENT case_block+ DEDENT
// subject_expr: star_named_expression ',' star_named_expressions? | named_expression
NodeId Parser::match_subject() {
  const Token& first = peek();
  NodeId subject = star_named_expression();
  if (at(Tok::Comma)) {
    const std::size_t base = scratch_.size();
    scratch_.push_back(subject);
    while (accept(Tok::Comma)) {
      if (at(Tok::Colon) || at(Tok::Newline)) break;
      scratch_.push_back(star_named_expression());
    }
    const ast::Field elts = scratch_list(base);
    subject = make(NodeKind::Tuple, first, previous(), {elts, Tree::op(NodeKind::Load)});
  } else if (tree_.kind(subject) == NodeKind::Starred) {
    syntax_error_here();
  }
  return subject;
}

// A line starting with `match` failed as a simple statement: CPython's
// invalid_match_stmt ("match" subject_expr NEWLINE) turns that into
// "expected ':'". Called from a catch block; returns to let it rethrow.
void Parser::match_missing_colon(std::size_t start) {
  std::optional<SyntaxError> original = std::move(error_);
  error_.reset();
  const std::size_t base = scratch_.size();
  reset(start);
  advance();  // 'match'
  bool newline = false;
  try {
    match_subject();
    newline = at(Tok::Newline);
  } catch (const ParseAbort&) {
  }
  scratch_.resize(base);
  error_ = std::move(original);
  if (newline) {
    error_.reset();
    fail(peek(), "expected ':'");
  }
}

NodeId Parser::match_statement() {
  const Token& kw = advance();
  const NodeId subject = match_subject();
  expect_colon(false);
  if (!accept(Tok::Newline)) syntax_error_here();
  if (!at(Tok::Indent)) {
    const Token& t = peek();
    if (t.kind == Tok::Error) syntax_error_here();
    fail(t, "expected an indented block after 'match' statement on line " + std::to_string(kw.line),
         "IndentationError");
  }
  advance();
  const std::size_t base = scratch_.size();
  while (!at(Tok::Dedent) && !at(Tok::EndMarker)) {
    if (!at_soft_keyword("case")) syntax_error_here();
    scratch_.push_back(case_block());
  }
  if (scratch_.size() == base) syntax_error_here();
  accept(Tok::Dedent);
  const ast::Field cases = scratch_list(base);
  return make_compound(NodeKind::Match, kw, {Tree::node(subject), cases});
}

// case_block: "case" patterns guard? ':' block
NodeId Parser::case_block() {
  DepthGuard guard(*this);
  const Token& kw = advance();
  const NodeId pat = patterns_top();
  NodeId g{};
  if (accept(Tok::KwIf)) g = named_expression();
  expect_colon(false);
  const ast::Field body = block("'case' statement", kw.line);
  return tree_.add(NodeKind::match_case, kw.begin, end_of(pat), Position{},
                   {Tree::node(pat), Tree::node(g), body});
}

// patterns: open_sequence_pattern | pattern
NodeId Parser::patterns_top() {
  const Token& first = peek();
  const NodeId p = maybe_star_pattern();
  if (!at(Tok::Comma)) {
    if (tree_.kind(p) == NodeKind::MatchStar) syntax_error_here();
    return p;
  }
  const std::size_t base = scratch_.size();
  scratch_.push_back(p);
  while (accept(Tok::Comma)) {
    if (at(Tok::Colon) || at(Tok::KwIf)) break;
    scratch_.push_back(maybe_star_pattern());
  }
  const ast::Field pats = scratch_list(base);
  return make(NodeKind::MatchSequence, first, previous(), {pats});
}

// maybe_star_pattern: '*' (capture | '_') | pattern
NodeId Parser::maybe_star_pattern() {
  if (!at(Tok::Star)) return pattern();
  const Token& star = advance();
  const Token& name = expect(Tok::Name);
  if (starts_pattern_follow_name(kind())) syntax_error_here();
  const ast::Field id = text(name) == "_" ? Tree::none_string() : identifier(name);
  return make(NodeKind::MatchStar, star, name, {id});
}

// pattern: or_pattern 'as' pattern_capture_target | or_pattern
NodeId Parser::pattern() {
  DepthGuard guard(*this);
  const Token& first = peek();
  const NodeId p = or_pattern();
  if (!at(Tok::KwAs)) return p;
  advance();
  if (!at(Tok::Name)) {
    // invalid_as_pattern: or_pattern 'as' !NAME expression
    if (!version_at_least(10)) syntax_error_here();
    const NodeId target = expression();
    fail_node(target, "invalid pattern target");
  }
  const Token& name = peek();
  if (text(name) == "_") fail(name, "cannot use '_' as a target");
  advance();
  if (starts_pattern_follow_name(kind())) syntax_error_here();
  return make(NodeKind::MatchAs, first, name, {Tree::node(p), identifier(name)});
}

// or_pattern: '|'.closed_pattern+
NodeId Parser::or_pattern() {
  const Token& first = peek();
  const NodeId p = closed_pattern();
  if (!at(Tok::VBar)) return p;
  const std::size_t base = scratch_.size();
  scratch_.push_back(p);
  while (accept(Tok::VBar)) scratch_.push_back(closed_pattern());
  const ast::Field pats = scratch_list(base);
  return make(NodeKind::MatchOr, first, previous(), {pats});
}

// NAME ('.' NAME)* -> Name / Attribute (Load)
NodeId Parser::value_name_expr() {
  const Token& first = expect(Tok::Name);
  NodeId e = make(NodeKind::Name, first, first, {identifier(first), Tree::op(NodeKind::Load)});
  while (accept(Tok::Dot)) {
    const Token& attr = expect(Tok::Name);
    e = make(NodeKind::Attribute, first, attr,
             {Tree::node(e), identifier(attr), Tree::op(NodeKind::Load)});
  }
  return e;
}

// signed_number | complex_number | strings | None/True/False as expressions
// (literal_expr; the caller wraps them).
NodeId Parser::literal_value_expr() {
  const Token& first = peek();
  if (at(Tok::String) || at(Tok::FStringStart)) return strings();
  if (at(Tok::KwNone) || at(Tok::KwTrue) || at(Tok::KwFalse)) {
    advance();
    ast::ConstantValue v;
    v.kind = first.kind == Tok::KwNone   ? ast::ConstantValue::Kind::None
             : first.kind == Tok::KwTrue ? ast::ConstantValue::Kind::True
                                         : ast::ConstantValue::Kind::False;
    return make(NodeKind::Constant, first, first, {tree_.constant(v), Tree::none_string()});
  }
  auto is_imaginary = [&](NodeId c) {
    return tree_.kind(c) == NodeKind::Constant &&
           tree_.constant_at(tree_.field(c, GM_F(Constant, value))).kind ==
               ast::ConstantValue::Kind::Complex;
  };
  NodeId real{};
  if (at(Tok::Minus)) {
    advance();
    if (!at(Tok::Number)) syntax_error_here();
    const NodeId num = number();
    real = make_from(NodeKind::UnaryOp, first, num, {Tree::op(NodeKind::USub), Tree::node(num)});
  } else if (at(Tok::Number)) {
    real = number();
  } else {
    syntax_error_here();
  }
  if (!at(Tok::Plus) && !at(Tok::Minus)) return real;
  // complex_number: signed_real_number ('+' | '-') imaginary_number
  const NodeId real_num =
      tree_.kind(real) == NodeKind::UnaryOp ? tree_.child(real, GM_F(UnaryOp, operand)) : real;
  if (is_imaginary(real_num)) fail_node(real, "real number required in complex literal");
  const NodeKind op = at(Tok::Plus) ? NodeKind::Add : NodeKind::Sub;
  advance();
  if (!at(Tok::Number)) syntax_error_here();
  const NodeId imag = number();
  if (!is_imaginary(imag)) fail_node(imag, "imaginary number required in complex literal");
  return make_between(NodeKind::BinOp, real, imag,
                      {Tree::node(real), Tree::op(op), Tree::node(imag)});
}

// closed_pattern: literal | capture | wildcard | value | group | sequence |
//                 mapping | class
NodeId Parser::closed_pattern() {
  const Token& first = peek();
  switch (first.kind) {
    case Tok::KwNone:
    case Tok::KwTrue:
    case Tok::KwFalse: {
      advance();
      ast::ConstantValue v;
      v.kind = first.kind == Tok::KwNone   ? ast::ConstantValue::Kind::None
               : first.kind == Tok::KwTrue ? ast::ConstantValue::Kind::True
                                           : ast::ConstantValue::Kind::False;
      return make(NodeKind::MatchSingleton, first, first, {tree_.constant(v)});
    }
    case Tok::Number:
    case Tok::Minus:
    case Tok::String:
    case Tok::FStringStart: {
      const NodeId v = literal_value_expr();
      return tree_.add(NodeKind::MatchValue, begin_of(v), end_of(v), tree_.at(v).pos,
                       {Tree::node(v)});
    }
    case Tok::Name: {
      if (text(first) == "_") {
        advance();
        return make(NodeKind::MatchAs, first, first, {Tree::node(NodeId{}), Tree::none_string()});
      }
      if (kind(1) == Tok::Dot || kind(1) == Tok::LPar) {
        const NodeId v = value_name_expr();
        if (at(Tok::LPar)) return class_pattern_rest(v, first);
        if (at(Tok::Equal)) syntax_error_here();
        return tree_.add(NodeKind::MatchValue, begin_of(v), end_of(v), tree_.at(v).pos,
                         {Tree::node(v)});
      }
      advance();
      if (at(Tok::Equal)) syntax_error_here();
      return make(NodeKind::MatchAs, first, first, {Tree::node(NodeId{}), identifier(first)});
    }
    case Tok::LPar: {
      // group_pattern: '(' pattern ')' | sequence_pattern: '(' open_sequence? ')'
      advance();
      if (at(Tok::RPar)) {
        const Token& close = advance();
        return make(NodeKind::MatchSequence, first, close, {tree_.list(std::span<const NodeId>())});
      }
      const NodeId p = maybe_star_pattern();
      if (at(Tok::RPar) && tree_.kind(p) != NodeKind::MatchStar) {
        advance();
        return p;
      }
      const std::size_t base = scratch_.size();
      scratch_.push_back(p);
      if (!accept(Tok::Comma)) syntax_error_here();
      while (!at(Tok::RPar)) {
        scratch_.push_back(maybe_star_pattern());
        if (!accept(Tok::Comma)) break;
      }
      const Token& close = expect(Tok::RPar);
      const ast::Field pats = scratch_list(base);
      return make(NodeKind::MatchSequence, first, close, {pats});
    }
    case Tok::LSqb: return sequence_pattern();
    case Tok::LBrace: return mapping_pattern();
    default: syntax_error_here();
  }
}

// '[' maybe_sequence_pattern? ']'
NodeId Parser::sequence_pattern() {
  const Token& open = advance();
  const std::size_t base = scratch_.size();
  while (!at(Tok::RSqb)) {
    scratch_.push_back(maybe_star_pattern());
    if (!accept(Tok::Comma)) break;
  }
  const Token& close = expect(Tok::RSqb);
  const ast::Field pats = scratch_list(base);
  return make(NodeKind::MatchSequence, open, close, {pats});
}

// mapping_pattern: '{' [items] [',' '**' NAME] [','] '}'
// key_value_pattern: (literal_expr | attr) ':' pattern
NodeId Parser::mapping_pattern() {
  const Token& open = advance();
  const std::size_t base = scratch_.size();
  std::size_t count = 0;
  ast::Field rest = Tree::none_string();
  while (!at(Tok::RBrace)) {
    if (at(Tok::DoubleStar)) {
      advance();
      if (!at(Tok::Name) || text(peek()) == "_") syntax_error_here();
      rest = identifier(advance());
      accept(Tok::Comma);
      if (!at(Tok::RBrace)) syntax_error_here();
      break;
    }
    NodeId key{};
    if (at(Tok::Name)) {
      if (kind(1) != Tok::Dot) {
        advance();  // CPython fails on the token after the bare name
        syntax_error_here();
      }
      key = value_name_expr();
    } else {
      key = literal_value_expr();
    }
    if (!accept(Tok::Colon)) syntax_error_here();
    const NodeId value = pattern();
    scratch_.push_back(key);
    scratch_.push_back(value);
    ++count;
    if (!accept(Tok::Comma)) break;
  }
  const Token& close = expect(Tok::RBrace);
  std::size_t top = scratch_.size();
  for (std::size_t i = 0; i < count; ++i) scratch_.push_back(scratch_[base + 2 * i]);
  const ast::Field keys = scratch_list(top);
  for (std::size_t i = 0; i < count; ++i) scratch_.push_back(scratch_[base + 2 * i + 1]);
  const ast::Field pats = scratch_list(top);
  scratch_.resize(base);
  return make(NodeKind::MatchMapping, open, close, {keys, pats, rest});
}

// class_pattern: name_or_attr '(' [positional_patterns] [keyword_patterns] ','? ')'
NodeId Parser::class_pattern_rest(NodeId cls, const Token& first) {
  expect(Tok::LPar);
  const std::size_t base = scratch_.size();
  std::vector<ast::StrRef> kwd_attrs;
  std::size_t kw_base = 0;
  bool in_keywords = false;
  while (!at(Tok::RPar)) {
    if (at(Tok::Name) && kind(1) == Tok::Equal) {
      if (!in_keywords) {
        in_keywords = true;
        kw_base = scratch_.size();
      }
      const ast::Field id = identifier(advance());
      advance();  // '='
      kwd_attrs.push_back(ast::StrRef{id.a, id.b});
      scratch_.push_back(pattern());
    } else {
      const NodeId p = pattern();
      if (in_keywords) fail_node(p, "positional patterns follow keyword patterns");
      scratch_.push_back(p);
    }
    if (!accept(Tok::Comma)) break;
  }
  const Token& close = expect(Tok::RPar);
  ast::Field kwd_patterns;
  if (in_keywords) {
    kwd_patterns = scratch_list(kw_base);
  } else {
    kwd_patterns = tree_.list(std::span<const NodeId>());
  }
  const ast::Field pats = scratch_list(base);
  return make(NodeKind::MatchClass, first, close,
              {Tree::node(cls), pats, tree_.ident_list(kwd_attrs), kwd_patterns});
}

}  // namespace gm::detail

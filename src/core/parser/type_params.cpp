// PEP 695 type parameter lists (3.12+) with PEP 696 defaults (3.13+).
//
//   type_params: '[' ','.type_param+ [','] ']'
//   type_param: NAME [':' expression] ['=' expression]        -> TypeVar
//             | '*' NAME ['=' star_expression]                 -> TypeVarTuple
//             | '**' NAME ['=' expression]                     -> ParamSpec
// The `type` statement itself is in statements.cpp (type_alias).
#include "parser/parser.h"

namespace gm::detail {

namespace {
using ast::Tree;
}  // namespace

ast::Field Parser::type_params_opt() {
  // Before 3.12 a '[' here is left for the caller to reject.
  if (!at(Tok::LSqb) || !version_at_least(12)) return tree_.list(std::span<const NodeId>());
  const Token& open = advance();
  if (at(Tok::RSqb)) {
    if (version_at_least(13))
      fail_range(peek().begin, peek().begin, "Type parameter list cannot be empty");
    syntax_error_here();
  }
  (void)open;
  const std::size_t base = scratch_.size();
  for (;;) {
    scratch_.push_back(type_param());
    if (!accept(Tok::Comma)) break;
    if (at(Tok::RSqb)) break;
  }
  expect(Tok::RSqb);
  return scratch_list(base);
}

NodeId Parser::type_param() {
  const Token& first = peek();
  const bool v13 = version_at_least(13);
  if (accept(Tok::Star)) {
    const Token& name = expect(Tok::Name);
    if (at(Tok::Colon)) {
      const Token& colon = advance();
      const NodeId bound = expression();
      fail_range(colon.begin, end_of(bound), "cannot use bound with TypeVarTuple");
    }
    NodeId def{};
    if (v13 && accept(Tok::Equal)) def = star_expression();
    return make(NodeKind::TypeVarTuple, first.begin, previous().end,
                {identifier(name), Tree::node(def)});
  }
  if (accept(Tok::DoubleStar)) {
    const Token& name = expect(Tok::Name);
    if (at(Tok::Colon)) {
      const Token& colon = advance();
      const NodeId bound = expression();
      fail_range(colon.begin, end_of(bound), "cannot use bound with ParamSpec");
    }
    NodeId def{};
    if (v13 && accept(Tok::Equal)) def = expression();
    return make(NodeKind::ParamSpec, first.begin, previous().end,
                {identifier(name), Tree::node(def)});
  }
  const Token& name = expect(Tok::Name);
  NodeId bound{};
  if (accept(Tok::Colon)) bound = expression();
  NodeId def{};
  if (v13 && accept(Tok::Equal)) def = expression();
  return make(NodeKind::TypeVar, first.begin, previous().end,
              {identifier(name), Tree::node(bound), Tree::node(def)});
}

}  // namespace gm::detail

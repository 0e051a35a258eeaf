// Parameter lists of `def` and `lambda` -> arguments (CPython's `params`,
// `lambda_params` and their invalid_* rules).
//
// Parameters are collected on scratch_ as (arg, default-or-0) pairs in source
// order; the `/` and `*` marks split them into posonlyargs, args and
// kwonlyargs afterwards.
#include "parser/parser.h"

namespace gm::detail {

namespace {
using ast::Tree;
}  // namespace

// param: NAME [':' expression]   (lambda: NAME)
// The vararg of a def may have a star annotation (3.11+): `*args: *Ts`.
NodeId Parser::parameter(bool is_lambda, bool allow_star_annotation) {
  if (at(Tok::LPar) && version_at_least(11) && !is_lambda) {
    // `def f((a)):` — CPython 3.11+ names the mistake.
    const Token& open = peek();
    std::size_t i = mark() + 1;
    const auto& toks = lexed_.tokens;
    while (i < toks.size() && toks[i].kind == Tok::Name) {
      ++i;
      if (i < toks.size() && toks[i].kind == Tok::Comma)
        ++i;
      else
        break;
    }
    if (i < toks.size() && toks[i].kind == Tok::RPar && i > mark() + 1)
      fail_range(open.begin, toks[i].end, "Function parameters cannot be parenthesized");
  }
  const Token& name = expect(Tok::Name);
  NodeId annotation{};
  if (!is_lambda && accept(Tok::Colon)) {
    if (at(Tok::Star) && allow_star_annotation) {
      require_version(11, peek(), "star annotations");
      annotation = star_expression();
    } else {
      annotation = expression();
    }
  }
  // The arg spans the tokens consumed: a parenthesised annotation's ')' too.
  return make(NodeKind::arg, name, previous(),
              {identifier(name), Tree::node(annotation), Tree::none_string()});
}

NodeId Parser::parameters(bool is_lambda) {
  const Tok close = is_lambda ? Tok::Colon : Tok::RPar;
  const std::uint32_t here = peek().begin;
  const std::size_t first_param = mark();
  const std::size_t base = scratch_.size();
  std::size_t count = 0;             // (arg, default) pairs pushed
  std::size_t n_posonly = 0;         // pairs before '/'
  bool seen_slash = false;
  std::size_t n_positional = 0;      // pairs before '*' (valid when seen_star)
  bool seen_star = false;
  bool seen_default = false;
  const Token* bare_star = nullptr;
  NodeId vararg{}, kwarg{};
  const bool v11 = version_at_least(11);

  while (!at(close)) {
    const Token& t = peek();
    if (kwarg) {
      if (v11) fail(t, "arguments cannot follow var-keyword argument");
      syntax_error_here();
    }
    if (t.kind == Tok::Slash) {
      if (seen_star) {
        if (v11) fail(t, "/ must be ahead of *");
        syntax_error_here();
      }
      if (seen_slash) {
        if (v11) fail(t, "/ may appear only once");
        syntax_error_here();
      }
      if (count == 0) {
        if (v11 && kind(1) == Tok::Comma) fail(t, "at least one argument must precede /");
        syntax_error_here();
      }
      advance();
      seen_slash = true;
      n_posonly = count;
    } else if (t.kind == Tok::Star) {
      if (seen_star) {
        if (v11) fail(t, "* argument may appear only once");
        syntax_error_here();
      }
      advance();
      seen_star = true;
      n_positional = count;
      if (at(Tok::Comma) || at(close)) {
        bare_star = &t;
      } else {
        vararg = parameter(is_lambda, !is_lambda);
        if (at(Tok::Equal)) {
          if (v11) fail(peek(), "var-positional argument cannot have default value");
          syntax_error_here();
        }
      }
    } else if (t.kind == Tok::DoubleStar) {
      advance();
      kwarg = parameter(is_lambda, false);
      if (at(Tok::Equal)) {
        if (v11) fail(peek(), "var-keyword argument cannot have default value");
        syntax_error_here();
      }
    } else {
      const Token& name = peek();
      const NodeId a = parameter(is_lambda, false);
      // 3.8's keyword-only arg spans just its name (ast.c quirk).
      if (seen_star && !version_at_least(9))
        tree_.set_position(a, name.begin, name.end, position_of(name, name));
      NodeId d{};
      if (at(Tok::Equal)) {
        const Token& eq = advance();
        // invalid_default: '=' &(')' | ',')   (lambda: &',')
        if (v11 && (at(Tok::Comma) || (!is_lambda && at(Tok::RPar))))
          fail(eq, "expected default value expression");
        d = expression();
      }
      if (!seen_star) {
        if (d) {
          seen_default = true;
        } else if (seen_default) {
          // 3.8 points at the first parameter, 3.9 at the token after this
          // one, 3.10+ at this one.
          const Token& where = version_at_least(10)  ? name
                               : version_at_least(9) ? peek()
                                                     : lexed_.tokens[first_param];
          fail(where, version_at_least(12)
                          ? "parameter without a default follows parameter with a default"
                          : "non-default argument follows default argument");
        }
      }
      scratch_.push_back(a);
      scratch_.push_back(d);
      ++count;
    }
    if (!accept(Tok::Comma)) break;
  }
  if (bare_star && count == n_positional) {
    // Where each version points: 3.10+ def: the '*'; otherwise the token
    // after it, or after its comma (`*, **k`), with 3.8 preferring the '*'.
    const std::size_t star_index = static_cast<std::size_t>(bare_star - lexed_.tokens.data());
    const Token& after = lexed_.tokens[star_index + 1];
    const Token* at_tok = &after;
    if (after.kind == Tok::Comma) at_tok = &lexed_.tokens[star_index + 2];
    if (!version_at_least(9)) {
      if (at_tok->kind != Tok::DoubleStar) at_tok = bare_star;
    } else if (version_at_least(10) && !is_lambda) {
      at_tok = bare_star;
    }
    fail(*at_tok, "named arguments must follow bare *");
  }
  if (!seen_star) n_positional = count;

  // Split the pairs into the five lists (each built on top of scratch_).
  auto arg_at = [&](std::size_t i) { return scratch_[base + 2 * i]; };
  auto default_at = [&](std::size_t i) { return scratch_[base + 2 * i + 1]; };
  std::size_t top = scratch_.size();
  for (std::size_t i = 0; i < n_posonly; ++i) scratch_.push_back(arg_at(i));
  const ast::Field posonly = scratch_list(top);
  for (std::size_t i = n_posonly; i < n_positional; ++i) scratch_.push_back(arg_at(i));
  const ast::Field args = scratch_list(top);
  for (std::size_t i = 0; i < n_positional; ++i)
    if (default_at(i)) scratch_.push_back(default_at(i));
  const ast::Field defaults = scratch_list(top);
  for (std::size_t i = n_positional; i < count; ++i) scratch_.push_back(arg_at(i));
  const ast::Field kwonly = scratch_list(top);
  for (std::size_t i = n_positional; i < count; ++i) scratch_.push_back(default_at(i));
  const ast::Field kw_defaults = scratch_list(top);
  scratch_.resize(base);

  return tree_.add(
      NodeKind::arguments, here, here, Position{},
      {posonly, args, Tree::node(vararg), kwonly, kw_defaults, Tree::node(kwarg), defaults});
}

}  // namespace gm::detail

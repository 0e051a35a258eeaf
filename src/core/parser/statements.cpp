// Statements: the module body, simple statements, compound statements,
// blocks and decorators (CPython's Grammar/python.gram, `statements` ..
// `class_def`). Statement lists are built on the shared scratch_ stack.
//
// Positions: a simple statement spans its first to its last token. A
// compound statement spans its keyword (`async` included; decorators are not
// part of it) to, in 3.9+, the last token of its last block that is not
// NEWLINE/INDENT/DEDENT (so a trailing `;` counts), and in 3.8 to the end of
// the last statement of its last block.
#include <string>

#include "parser/parser.h"

namespace gm::detail {

namespace {

using ast::Tree;

bool is_augassign(Tok k, NodeKind& op) {
  switch (k) {
    case Tok::PlusEqual: op = NodeKind::Add; return true;
    case Tok::MinEqual: op = NodeKind::Sub; return true;
    case Tok::StarEqual: op = NodeKind::Mult; return true;
    case Tok::AtEqual: op = NodeKind::MatMult; return true;
    case Tok::SlashEqual: op = NodeKind::Div; return true;
    case Tok::PercentEqual: op = NodeKind::Mod; return true;
    case Tok::AmperEqual: op = NodeKind::BitAnd; return true;
    case Tok::VBarEqual: op = NodeKind::BitOr; return true;
    case Tok::CircumflexEqual: op = NodeKind::BitXor; return true;
    case Tok::LeftShiftEqual: op = NodeKind::LShift; return true;
    case Tok::RightShiftEqual: op = NodeKind::RShift; return true;
    case Tok::DoubleStarEqual: op = NodeKind::Pow; return true;
    case Tok::DoubleSlashEqual: op = NodeKind::FloorDiv; return true;
    default: return false;
  }
}

bool ends_simple_statement(Tok k) {
  return k == Tok::Newline || k == Tok::Semi || k == Tok::EndMarker;
}

ast::Field empty_list(Tree& tree) { return tree.list(std::span<const NodeId>()); }

}  // namespace

// ---------------------------------------------------------------------------
// Module and statement lists

NodeId Parser::parse_file() {
  const std::size_t base = scratch_.size();
  while (!at(Tok::EndMarker)) {
    if (at(Tok::Error)) syntax_error_here();
    statement();
  }
  const ast::Field body = scratch_list(base);
  return tree_.add(NodeKind::Module, 0, 0, Position{}, {body, empty_list(tree_)});
}

void Parser::statement() {
  switch (kind()) {
    case Tok::KwIf:
    case Tok::KwWhile:
    case Tok::KwFor:
    case Tok::KwTry:
    case Tok::KwWith:
    case Tok::KwDef:
    case Tok::KwClass:
    case Tok::KwAsync:
    case Tok::At: scratch_.push_back(compound_statement()); return;
    case Tok::Name:
      if (version_at_least(10) && at_soft_keyword("match")) {
        if (at_match_statement()) {
          scratch_.push_back(match_statement());
          return;
        }
        const std::size_t start = mark();
        try {
          simple_statements();
        } catch (const ParseAbort&) {
          match_missing_colon(start);
          throw;
        }
        return;
      }
      break;
    case Tok::Indent:
    case Tok::Dedent:
    case Tok::Error: syntax_error_here();
    default: break;
  }
  simple_statements();
}

void Parser::simple_statements() {
  for (;;) {
    scratch_.push_back(simple_statement());
    if (accept(Tok::Semi)) {
      if (at(Tok::Newline)) break;
      continue;
    }
    break;
  }
  if (!accept(Tok::Newline)) {
    if (at(Tok::EndMarker)) return;
    syntax_error_here();
  }
}

ast::Field Parser::block(std::string_view what, std::uint32_t line) {
  const std::size_t base = scratch_.size();
  if (accept(Tok::Newline)) {
    if (!at(Tok::Indent)) {
      const Token& t = peek();
      if (t.kind == Tok::Error) syntax_error_here();
      std::string msg = "expected an indented block";
      if (version_at_least(10)) {
        msg += " after ";
        msg += what;
        msg += " on line ";
        msg += std::to_string(line);
      }
      fail(t, std::move(msg), "IndentationError");
    }
    advance();
    while (!at(Tok::Dedent) && !at(Tok::EndMarker)) {
      if (at(Tok::Error)) syntax_error_here();
      statement();
    }
    accept(Tok::Dedent);
  } else {
    if (at(Tok::Indent) || at(Tok::Dedent) || at(Tok::EndMarker) || at(Tok::Error))
      syntax_error_here();
    simple_statements();
  }
  if (scratch_.size() == base) syntax_error_here();  // INDENT without a statement
  last_block_end_ = end_of(scratch_.back());
  return scratch_list(base);
}

void Parser::expect_colon(bool forced) {
  if (accept(Tok::Colon)) return;
  if (version_at_least(10) && (forced || at(Tok::Newline))) fail(peek(), "expected ':'");
  syntax_error_here();
}

std::uint32_t Parser::compound_end() const { return compound_end_position().end; }

Parser::EndPosition Parser::compound_end_position() const {
  if (!version_at_least(9)) return {last_block_end_, line_of(last_block_end_)};
  std::size_t i = mark();
  while (i > 0) {
    const Token& t = lexed_.tokens[i - 1];
    // Not a Newline, so the token does not end with a line break: the line
    // of its end offset is its end_line.
    if (t.kind != Tok::Newline && t.kind != Tok::Indent && t.kind != Tok::Dedent)
      return {t.end, t.end_line};
    --i;
  }
  return {0, 1};
}

NodeId Parser::make_compound(NodeKind kind, const Token& first,
                             std::initializer_list<ast::Field> fields) {
  const EndPosition end = compound_end_position();
  const std::uint32_t* starts = lexed_.lines.starts.data();
  Position p;
  p.lineno = static_cast<std::int32_t>(first.line);
  p.col_offset = static_cast<std::int32_t>(first.begin - starts[first.line - 1]);
  p.end_lineno = static_cast<std::int32_t>(end.line);
  p.end_col_offset = static_cast<std::int32_t>(end.end - starts[end.line - 1]);
  return tree_.add(kind, first.begin, end.end, p, fields);
}

// ---------------------------------------------------------------------------
// Simple statements

NodeId Parser::simple_statement() {
  const Token& first = peek();
  switch (first.kind) {
    case Tok::KwPass: advance(); return make(NodeKind::Pass, first, first, {});
    case Tok::KwBreak: advance(); return make(NodeKind::Break, first, first, {});
    case Tok::KwContinue: advance(); return make(NodeKind::Continue, first, first, {});
    case Tok::KwReturn: {
      advance();
      NodeId value{};
      if (!ends_simple_statement(kind())) value = star_expressions();
      return make(NodeKind::Return, first, previous(), {Tree::node(value)});
    }
    case Tok::KwRaise: {
      advance();
      NodeId exc{}, cause{};
      if (!ends_simple_statement(kind())) {
        exc = expression();
        if (accept(Tok::KwFrom)) cause = expression();
      }
      return make(NodeKind::Raise, first, previous(), {Tree::node(exc), Tree::node(cause)});
    }
    case Tok::KwGlobal:
    case Tok::KwNonlocal: {
      advance();
      std::vector<ast::StrRef> names;
      do {
        const Token& n = expect(Tok::Name);
        const ast::Field f = identifier(n);
        names.push_back(ast::StrRef{f.a, f.b});
      } while (accept(Tok::Comma));
      return make(first.kind == Tok::KwGlobal ? NodeKind::Global : NodeKind::Nonlocal, first,
                  previous(), {tree_.ident_list(names)});
    }
    case Tok::KwDel: {
      advance();
      const std::size_t base = scratch_.size();
      for (;;) {
        const NodeId t = star_expression();
        set_context(t, NodeKind::Del, TargetKind::Del);
        scratch_.push_back(t);
        if (!accept(Tok::Comma)) break;
        if (ends_simple_statement(kind())) break;
      }
      if (!ends_simple_statement(kind())) syntax_error_here();
      const ast::Field targets = scratch_list(base);
      return make(NodeKind::Delete, first, previous(), {targets});
    }
    case Tok::KwAssert: {
      advance();
      const NodeId test = expression();
      NodeId msg{};
      if (accept(Tok::Comma)) msg = expression();
      return make(NodeKind::Assert, first, previous(), {Tree::node(test), Tree::node(msg)});
    }
    case Tok::KwImport: return import_name();
    case Tok::KwFrom: return import_from();
    case Tok::Name:
      if (version_at_least(12) && at_soft_keyword("type") && kind(1) == Tok::Name) {
        if (kind(2) == Tok::Equal || kind(2) == Tok::LSqb) return type_alias();
        // NAME NAME is no expression: CPython's furthest failure is in
        // type_alias, on the token after the alias name.
        fail(peek(2), "invalid syntax");
      }
      break;
    default: break;
  }
  return expression_statement();
}

NodeId Parser::expression_statement() {
  const Token& first = peek();
  const NodeId e = at(Tok::KwYield) ? yield_expression() : star_expressions();
  NodeKind op{};
  const Tok k = kind();
  if (k == Tok::Equal) {
    const std::size_t base = scratch_.size();
    NodeId value = e;
    // 3.8 (ast.c) judges the targets once the whole statement has parsed.
    const bool late = !version_at_least(9);
    while (accept(Tok::Equal)) {
      if (!late) set_context(value, NodeKind::Store, TargetKind::Assign);
      scratch_.push_back(value);
      value = at(Tok::KwYield) ? yield_expression() : star_expressions();
    }
    if (late) {
      if (!ends_simple_statement(kind())) syntax_error_here();
      for (std::size_t i = base; i < scratch_.size(); ++i)
        set_context(scratch_[i], NodeKind::Store, TargetKind::Assign);
    }
    const ast::Field targets = scratch_list(base);
    return make(NodeKind::Assign, first, previous(),
                {targets, Tree::node(value), Tree::none_string()});
  }
  if (k == Tok::Colon) {
    const NodeKind tk = tree_.kind(e);
    auto check_target = [&] {
      if (tk == NodeKind::Tuple) {
        // `a, b: int` names the first element; `(a, b): int` the tuple.
        const auto elts = tree_.children(e, GM_F(Tuple, elts));
        if (first.kind != Tok::LPar && !elts.empty())
          fail_node(elts[0], "only single target (not tuple) can be annotated");
        fail_node(e, "only single target (not tuple) can be annotated");
      }
      if (tk == NodeKind::List) fail_node(e, "only single target (not list) can be annotated");
      if (tk != NodeKind::Name && tk != NodeKind::Attribute && tk != NodeKind::Subscript)
        fail_node(e, "illegal target for annotation");
      set_context(e, NodeKind::Store, TargetKind::AnnAssign);
    };
    advance();
    const NodeId annotation = expression();
    if (version_at_least(9)) check_target();
    NodeId value{};
    if (accept(Tok::Equal)) value = at(Tok::KwYield) ? yield_expression() : star_expressions();
    if (!version_at_least(9)) {
      if (!ends_simple_statement(kind())) syntax_error_here();
      check_target();
    }
    const int simple = (tk == NodeKind::Name && first.kind != Tok::LPar) ? 1 : 0;
    return make(NodeKind::AnnAssign, first, previous(),
                {Tree::node(e), Tree::node(annotation), Tree::node(value), Tree::integer(simple)});
  }
  if (is_augassign(k, op)) {
    set_context(e, NodeKind::Store, TargetKind::AugAssign);
    advance();
    // 3.8: augassign (yield_expr | testlist) — no unpacking.
    const NodeId value = at(Tok::KwYield)      ? yield_expression()
                         : version_at_least(9) ? star_expressions()
                                               : expressions();
    return make(NodeKind::AugAssign, first, previous(),
                {Tree::node(e), Tree::op(op), Tree::node(value)});
  }
  return make(NodeKind::Expr, first, previous(), {Tree::node(e)});
}

// import_name: 'import' dotted_as_names
NodeId Parser::import_name() {
  const Token& first = advance();
  if (at(Tok::Newline) && version_at_least(13))
    fail(peek(), "Expected one or more names after 'import'");
  const std::size_t base = scratch_.size();
  do {
    scratch_.push_back(import_alias(true));
  } while (accept(Tok::Comma));
  const ast::Field names = scratch_list(base);
  return make(NodeKind::Import, first, previous(), {names});
}

// dotted_as_name / import_from_as_name -> alias
NodeId Parser::import_alias(bool dotted) {
  const Token& first = expect(Tok::Name);
  ast::Field name;
  if (dotted && at(Tok::Dot)) {
    std::string joined(tree_.text(identifier(first)));
    while (accept(Tok::Dot)) {
      const Token& part = expect(Tok::Name);
      joined += '.';
      joined += tree_.text(identifier(part));
    }
    name = tree_.string(joined);
  } else {
    name = identifier(first);
  }
  ast::Field asname = Tree::none_string();
  if (accept(Tok::KwAs)) asname = identifier(expect(Tok::Name));
  return make(NodeKind::alias, first, previous(), {name, asname});
}

// import_from: 'from' ('.' | '...')* dotted_name 'import' targets
//            | 'from' ('.' | '...')+ 'import' targets
NodeId Parser::import_from() {
  const Token& first = advance();
  int level = 0;
  for (;;) {
    if (accept(Tok::Dot)) {
      ++level;
    } else if (accept(Tok::Ellipsis)) {
      level += 3;
    } else {
      break;
    }
  }
  ast::Field module = Tree::none_string();
  if (at(Tok::Name)) {
    const Token& m = advance();
    if (at(Tok::Dot)) {
      std::string joined(tree_.text(identifier(m)));
      while (accept(Tok::Dot)) {
        const Token& part = expect(Tok::Name);
        joined += '.';
        joined += tree_.text(identifier(part));
      }
      module = tree_.string(joined);
    } else {
      module = identifier(m);
    }
  } else if (level == 0) {
    syntax_error_here();
  }
  expect(Tok::KwImport);
  if (at(Tok::Newline) && version_at_least(13))
    fail(peek(), "Expected one or more names after 'import'");
  const std::size_t base = scratch_.size();
  if (at(Tok::Star)) {
    const Token& star = advance();
    scratch_.push_back(make(NodeKind::alias, star, star, {tree_.string("*"), Tree::none_string()}));
  } else if (accept(Tok::LPar)) {
    do {
      if (at(Tok::RPar) && scratch_.size() > base) break;
      scratch_.push_back(import_alias(false));
    } while (accept(Tok::Comma));
    expect(Tok::RPar);
  } else {
    for (;;) {
      const Token& alias_first = peek();
      scratch_.push_back(import_alias(false));
      if (!accept(Tok::Comma)) break;
      if (at(Tok::Newline))
        fail(version_at_least(9) ? peek() : alias_first,
             "trailing comma not allowed without surrounding parentheses");
    }
  }
  const ast::Field names = scratch_list(base);
  return make(NodeKind::ImportFrom, first, previous(), {module, names, Tree::integer(level)});
}

// ---------------------------------------------------------------------------
// Compound statements

NodeId Parser::compound_statement() {
  DepthGuard guard(*this);
  switch (kind()) {
    case Tok::KwIf: return if_statement();
    case Tok::KwWhile: return while_statement();
    case Tok::KwFor: return for_statement();
    case Tok::KwTry: return try_statement();
    case Tok::KwWith: return with_statement();
    case Tok::KwDef: return function_def(empty_list(tree_), peek());
    case Tok::KwClass: return class_def(empty_list(tree_), peek());
    case Tok::At: return decorated();
    case Tok::KwAsync:
      switch (kind(1)) {
        case Tok::KwDef: return function_def(empty_list(tree_), peek());
        case Tok::KwFor: return for_statement();
        case Tok::KwWith: return with_statement();
        default: advance(); syntax_error_here();
      }
    default: syntax_error_here();
  }
}

// if_stmt / elif_stmt. An elif chain is parsed iteratively and nested from
// the inside out; every If of the chain ends where the whole chain ends.
NodeId Parser::if_statement() {
  struct Clause {
    std::size_t keyword;  // token index of 'if' / 'elif'
    NodeId test;
    ast::Field body;
  };
  Clause head{mark(), NodeId{}, {}};
  std::vector<Clause> elifs;
  {
    const Token& kw = advance();
    head.test = named_expression();
    expect_colon(false);
    head.body = block("'if' statement", kw.line);
  }
  while (at(Tok::KwElif)) {
    Clause c{mark(), NodeId{}, {}};
    const Token& kw = advance();
    c.test = named_expression();
    expect_colon(false);
    c.body = block("'elif' statement", kw.line);
    elifs.push_back(c);
  }
  ast::Field orelse = empty_list(tree_);
  if (at(Tok::KwElse)) {
    const Token& kw = advance();
    expect_colon(true);
    orelse = block("'else' statement", kw.line);
  }
  for (std::size_t i = elifs.size(); i-- > 0;) {
    const Clause& c = elifs[i];
    const NodeId nested =
        make_compound(NodeKind::If, lexed_.tokens[c.keyword], {Tree::node(c.test), c.body, orelse});
    orelse = tree_.list(std::span<const NodeId>(&nested, 1));
  }
  return make_compound(NodeKind::If, lexed_.tokens[head.keyword],
                       {Tree::node(head.test), head.body, orelse});
}

NodeId Parser::while_statement() {
  const Token& kw = advance();
  const NodeId test = named_expression();
  expect_colon(false);
  const ast::Field body = block("'while' statement", kw.line);
  ast::Field orelse = empty_list(tree_);
  if (at(Tok::KwElse)) {
    const Token& e = advance();
    expect_colon(true);
    orelse = block("'else' statement", e.line);
  }
  return make_compound(NodeKind::While, kw, {Tree::node(test), body, orelse});
}

// for_stmt: [ASYNC] 'for' star_targets 'in' star_expressions ':' block [else_block]
NodeId Parser::for_statement() {
  const Token& first = peek();
  const bool is_async = accept(Tok::KwAsync);
  const Token& kw = expect(Tok::KwFor);
  const NodeId target = star_targets();
  expect(Tok::KwIn);
  // 3.8: 'in' testlist — no unpacking without parentheses.
  const NodeId iter = version_at_least(9) ? star_expressions() : expressions();
  expect_colon(false);
  const ast::Field body = block("'for' statement", kw.line);
  ast::Field orelse = empty_list(tree_);
  if (at(Tok::KwElse)) {
    const Token& e = advance();
    expect_colon(true);
    orelse = block("'else' statement", e.line);
  }
  return make_compound(is_async ? NodeKind::AsyncFor : NodeKind::For, first,
                       {Tree::node(target), Tree::node(iter), body, orelse, Tree::none_string()});
}

// with_item: expression 'as' star_target &(',' | ')' | ':') | expression
NodeId Parser::with_item() {
  const NodeId e = expression();
  NodeId vars{};
  if (accept(Tok::KwAs)) {
    if (at(Tok::Star) && !version_at_least(9)) syntax_error_here();
    vars = star_expression();
    set_context(vars, NodeKind::Store, TargetKind::With);
  }
  const std::uint32_t end = vars ? end_of(vars) : end_of(e);
  return make(NodeKind::withitem, begin_of(e), end, {Tree::node(e), Tree::node(vars)});
}

// 'with' '(' ','.with_item+ ','? ')' ':' (3.9+), tried when the parenthesis
// that follows 'with' is closed right before ':' or holds an `as`. Returns false (with the
// cursor and scratch_ restored) when the parenthesised group is an
// expression instead: `with (a, *b):`, `with (yield):`, `with (x := y):`,
// `with (a for a in b):`, `with ():`.
bool Parser::parenthesized_with_items(std::size_t base) {
  // Find the matching ')' and check that ':' follows it.
  // An `as` directly inside also settles it: no expression contains one, so
  // CPython's furthest failure is then in the parenthesised form.
  std::size_t i = mark();
  int depth = 0;
  bool has_as = false;
  const std::size_t n = lexed_.tokens.size();
  for (; i < n; ++i) {
    const Tok k = lexed_.tokens[i].kind;
    if (k == Tok::LPar || k == Tok::LSqb || k == Tok::LBrace) {
      ++depth;
    } else if (k == Tok::RPar || k == Tok::RSqb || k == Tok::RBrace) {
      if (--depth == 0) break;
    } else if (k == Tok::KwAs && depth == 1) {
      has_as = true;
    } else if (k == Tok::Newline || k == Tok::EndMarker || k == Tok::Error) {
      return false;
    }
  }
  if (i + 1 >= n) return false;
  if (lexed_.tokens[i + 1].kind != Tok::Colon && !has_as) return false;
  const Tok k1 = kind(1);
  if (k1 == Tok::RPar || k1 == Tok::Star || k1 == Tok::KwYield) return false;

  const std::size_t start = mark();
  const int saved_depth = depth_;
  bool committed = false;  // `expression 'as'` inside: no expression reading left
  try {
    advance();  // '('
    for (;;) {
      const NodeId e = expression();
      NodeId vars{};
      if (accept(Tok::KwAs)) {
        committed = true;
        vars = star_expression();
        set_context(vars, NodeKind::Store, TargetKind::With);
      }
      scratch_.push_back(make(NodeKind::withitem, begin_of(e), vars ? end_of(vars) : end_of(e),
                              {Tree::node(e), Tree::node(vars)}));
      if (accept(Tok::Comma)) {
        if (at(Tok::RPar)) break;
        continue;
      }
      if (at(Tok::RPar)) break;
      if (committed) syntax_error_here();
      throw ParseAbort{};  // not the parenthesised form: fall back (below)
    }
    advance();  // ')'
    return true;
  } catch (const ParseAbort&) {
    if (committed) throw;
    error_.reset();
    depth_ = saved_depth;
    scratch_.resize(base);
    reset(start);
    return false;
  }
}

NodeId Parser::with_statement() {
  const Token& first = peek();
  const bool is_async = accept(Tok::KwAsync);
  const Token& kw = expect(Tok::KwWith);
  const std::size_t base = scratch_.size();
  bool done = false;
  if (at(Tok::LPar) && version_at_least(9)) done = parenthesized_with_items(base);
  if (!done) {
    do {
      scratch_.push_back(with_item());
    } while (accept(Tok::Comma));
  }
  const ast::Field items = scratch_list(base);
  expect_colon(false);
  const ast::Field body = block("'with' statement", kw.line);
  return make_compound(is_async ? NodeKind::AsyncWith : NodeKind::With, first,
                       {items, body, Tree::none_string()});
}

// try_stmt: 'try' ':' block (except_block+ | except_star_block+)
//           [else_block] [finally_block] | 'try' ':' block finally_block
NodeId Parser::try_statement() {
  const Token& kw = advance();
  expect_colon(true);
  const ast::Field body = block("'try' statement", kw.line);
  const std::size_t base = scratch_.size();
  int style = 0;  // 1: except, 2: except*
  while (at(Tok::KwExcept)) {
    const Token& ex = advance();
    bool star = false;
    if (at(Tok::Star)) {
      require_version(11, peek(), "exception groups");
      advance();
      star = true;
    }
    const int this_style = star ? 2 : 1;
    if (style != 0 && style != this_style)
      fail(ex, "cannot have both 'except' and 'except*' on the same 'try'");
    style = this_style;
    NodeId type{};
    ast::Field name = Tree::none_string();
    if (star && at(Tok::Colon)) fail(peek(), "expected one or more exception types");
    if (!at(Tok::Colon) && !at(Tok::Newline)) {
      type = expression();
      if (at(Tok::Comma) && version_at_least(10)) {
        // 'except' expression ',' expressions ['as' NAME] ':'
        const std::uint32_t b = begin_of(type);
        advance();
        NodeId last = expression();
        while (accept(Tok::Comma)) {
          if (at(Tok::Colon) || at(Tok::KwAs)) break;
          last = expression();
        }
        fail_range(b, end_of(last), "multiple exception types must be parenthesized");
      }
      if (accept(Tok::KwAs)) name = identifier(expect(Tok::Name));
    }
    expect_colon(false);
    const ast::Field hbody = block(star ? "'except*' statement" : "'except' statement", ex.line);
    scratch_.push_back(make_compound(NodeKind::ExceptHandler, ex, {Tree::node(type), name, hbody}));
  }
  const bool has_handlers = scratch_.size() > base;
  const ast::Field handlers = scratch_list(base);
  ast::Field orelse = empty_list(tree_);
  ast::Field finalbody = empty_list(tree_);
  if (has_handlers && at(Tok::KwElse)) {
    const Token& e = advance();
    expect_colon(true);
    orelse = block("'else' statement", e.line);
  }
  if (at(Tok::KwFinally)) {
    const Token& f = advance();
    expect_colon(true);
    finalbody = block("'finally' statement", f.line);
  } else if (!has_handlers) {
    // At the end of the file CPython points at the last NEWLINE.
    const Token* where = &peek();
    if (where->kind == Tok::EndMarker) {
      for (std::size_t i = mark(); i > 0; --i) {
        if (lexed_.tokens[i - 1].kind == Tok::Newline) {
          where = &lexed_.tokens[i - 1];
          break;
        }
      }
      if (!version_at_least(10)) fail(*where, "unexpected EOF while parsing");
    }
    if (version_at_least(10)) fail(*where, "expected 'except' or 'finally' block");
    syntax_error_here();
  }
  return make_compound(style == 2 ? NodeKind::TryStar : NodeKind::Try, kw,
                       {body, handlers, orelse, finalbody});
}

// 3.8's decorator: '@' dotted_name [ '(' [arglist] ')' ] NEWLINE. Checked on
// the tokens (cursor after '@'); the first token that does not fit is the
// error, as in 3.8's LL(1) parser.
void Parser::check_38_decorator() {
  const auto& toks = lexed_.tokens;
  std::size_t i = mark();
  if (toks[i].kind != Tok::Name) fail(toks[i], "invalid syntax");
  ++i;
  while (toks[i].kind == Tok::Dot) {
    if (toks[i + 1].kind != Tok::Name) fail(toks[i + 1], "invalid syntax");
    i += 2;
  }
  if (toks[i].kind == Tok::LPar) {
    int depth = 0;
    for (; i < toks.size(); ++i) {
      const Tok k = toks[i].kind;
      if (k == Tok::LPar || k == Tok::LSqb || k == Tok::LBrace)
        ++depth;
      else if (k == Tok::RPar || k == Tok::RSqb || k == Tok::RBrace) {
        if (--depth == 0) break;
      } else if (k == Tok::Newline || k == Tok::EndMarker || k == Tok::Error) {
        return;  // unbalanced: the expression parser reports it
      }
    }
    ++i;
  }
  if (i < toks.size() && toks[i].kind != Tok::Newline) fail(toks[i], "invalid syntax");
}

NodeId Parser::decorated() {
  const std::size_t base = scratch_.size();
  while (at(Tok::At)) {
    advance();
    if (!version_at_least(9)) check_38_decorator();
    scratch_.push_back(named_expression());
    if (!accept(Tok::Newline)) syntax_error_here();
  }
  const ast::Field decorators = scratch_list(base);
  switch (kind()) {
    case Tok::KwDef: return function_def(decorators, peek());
    case Tok::KwAsync:
      if (kind(1) == Tok::KwDef) return function_def(decorators, peek());
      advance();
      syntax_error_here();
    case Tok::KwClass: return class_def(decorators, peek());
    default: syntax_error_here();
  }
}

// function_def_raw: [ASYNC] 'def' NAME [type_params] '(' [params] ')'
//                   ['->' expression] ':' block
NodeId Parser::function_def(ast::Field decorators, const Token& first) {
  const bool is_async = accept(Tok::KwAsync);
  const Token& kw = expect(Tok::KwDef);
  const ast::Field name = identifier(expect(Tok::Name));
  ast::Field tparams;
  {
    const Token& open = peek();
    try {
      tparams = type_params_opt();
    } catch (const ParseAbort&) {
      // PEG backtracks over a type_params it cannot parse and then fails on
      // the forced '(' — unless a specific error was raised on the way.
      if (error_ && error_->message == "invalid syntax") {
        error_.reset();
        fail(open, "expected '('");
      }
      throw;
    }
  }
  if (!at(Tok::LPar)) {
    if (version_at_least(11)) fail(peek(), "expected '('");
    syntax_error_here();
  }
  advance();
  const NodeId args = parameters(false);
  expect(Tok::RPar);
  NodeId returns{};
  if (accept(Tok::RArrow)) returns = expression();
  expect_colon(true);
  const ast::Field body = block("function definition", kw.line);
  return make_compound(is_async ? NodeKind::AsyncFunctionDef : NodeKind::FunctionDef, first,
                       {name, Tree::node(args), body, decorators, Tree::node(returns),
                        Tree::none_string(), tparams});
}

// class_def_raw: 'class' NAME [type_params] ['(' [arguments] ')'] ':' block
NodeId Parser::class_def(ast::Field decorators, const Token& first) {
  const Token& kw = expect(Tok::KwClass);
  const ast::Field name = identifier(expect(Tok::Name));
  const ast::Field tparams = type_params_opt();
  ast::Field bases = empty_list(tree_);
  ast::Field keywords = empty_list(tree_);
  if (at(Tok::LPar)) {
    const Token& lpar = peek();
    const NodeId call = call_arguments(NodeId{});
    bases = tree_.field(call, GM_F(Call, args));
    keywords = tree_.field(call, GM_F(Call, keywords));
    // `class C(x for x in y):` — a bare generator is a call's privilege.
    const auto base_nodes = tree_.children(call, GM_F(Call, args));
    if (base_nodes.size() == 1 && tree_.kind(base_nodes[0]) == NodeKind::GeneratorExp &&
        begin_of(base_nodes[0]) == lpar.begin)
      fail_node(base_nodes[0], "invalid syntax");
  }
  expect_colon(false);
  const ast::Field body = block("class definition", kw.line);
  return make_compound(NodeKind::ClassDef, first,
                       {name, bases, keywords, body, decorators, tparams});
}

// ---------------------------------------------------------------------------
// Soft keywords

// `match` starts a match statement (3.10+) when the logical line ends with
// ':' — no simple statement can — and the token after `match` can start a
// subject expression.
bool Parser::at_match_statement() const {
  if (!at_soft_keyword("match")) return false;
  switch (kind(1)) {
    case Tok::Newline:
    case Tok::EndMarker:
    case Tok::Equal:
    case Tok::Dot:
    case Tok::Comma:
    case Tok::Colon:
    case Tok::Semi:
    case Tok::RPar:
    case Tok::RSqb:
    case Tok::RBrace:
    case Tok::ColonEqual:
    case Tok::Error: return false;
    default: break;
  }
  NodeKind op{};
  if (is_augassign(kind(1), op)) return false;
  const std::size_t n = lexed_.tokens.size();
  for (std::size_t i = mark() + 1; i < n; ++i) {
    const Tok k = lexed_.tokens[i].kind;
    if (k == Tok::Newline) return lexed_.tokens[i - 1].kind == Tok::Colon;
    if (k == Tok::EndMarker || k == Tok::Error || k == Tok::Indent || k == Tok::Dedent)
      return false;
  }
  return false;
}

// type_alias: "type" NAME [type_params] '=' expression
NodeId Parser::type_alias() {
  const Token& first = advance();
  const Token& name_tok = expect(Tok::Name);
  const NodeId name =
      make(NodeKind::Name, name_tok, name_tok, {identifier(name_tok), Tree::op(NodeKind::Store)});
  const ast::Field tparams = type_params_opt();
  expect(Tok::Equal);
  const NodeId value = expression();
  return make(NodeKind::TypeAlias, first, previous(),
              {Tree::node(name), tparams, Tree::node(value)});
}

}  // namespace gm::detail

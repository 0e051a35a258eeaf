// String literals and f-strings: a run of adjacent STRING / f-string tokens
// becomes one Constant (str or bytes) or one JoinedStr, exactly as the
// selected CPython version builds it.
//
// The lexer always tokenizes f-strings the PEP 701 way:
//   FStringStart (FStringMiddle | '{' expr ['='] ['!' NAME] [':' spec] '}')* FStringEnd
// where a format spec is (FStringMiddle | nested replacement field)*.
//
// Values (all versions): literal chunks and `=` debug texts are merged with
// their neighbours across the whole concatenation; empty chunks are dropped;
// a format spec is its own JoinedStr (3.12 alone ends a spec whose last part
// is a replacement field with an empty Constant).
//
// Positions:
//  - 3.12+: every part has its real span (Constant: its literal text;
//    FormattedValue: '{'..'}'; spec JoinedStr: ':' to the spec's last token;
//    the debug text: just after '{' up to the '!', ':' or '}' that follows).
//  - 3.8-3.11: an f-string was one STRING token re-parsed by a sub-parser.
//    Constants and FormattedValues get the span of the whole concatenation;
//    3.9-3.11 give a format spec JoinedStr (and a Constant that ends a spec)
//    the span of the f-string token it is in. Expressions were parsed from
//    the text "(" + expr + ")" and shifted back (see the end of
//    fstring_field): 3.10/3.11 land on the real positions; 3.9 adds the
//    token's column + 1 on the '{' line when '{' is not on the token's first
//    line; 3.8 searches for "{expr}" in the FIRST token of the concatenation
//    and counts from there (Python/ast.c, fstring_fix_node_location). The
//    "(...)" also makes a bare tuple or generator expression span '{'..'}'.
//  - Before 3.12 the field's text is also checked the way the old scanner
//    did (no backslash, no '#', no reuse of the enclosing quote, no line
//    break in a single-quoted f-string, format specs nested at most once).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parser/parser.h"
#include "syntax/literals.h"

namespace gm::detail {

namespace {

struct Prefix {
  bool raw = false;
  bool bytes = false;
  bool format = false;
  char quote = '\'';
  bool triple = false;
  std::size_t prefix_len = 0;  // letters before the opening quote
};

Prefix parse_prefix(std::string_view text) {
  Prefix p;
  std::size_t i = 0;
  while (i < text.size() && text[i] != '\'' && text[i] != '"') {
    const char c = text[i];
    if (c == 'r' || c == 'R') p.raw = true;
    if (c == 'b' || c == 'B') p.bytes = true;
    if (c == 'f' || c == 'F') p.format = true;
    ++i;
  }
  p.prefix_len = i;
  if (i < text.size()) p.quote = text[i];
  p.triple = i + 2 < text.size() && text[i + 1] == p.quote && text[i + 2] == p.quote;
  return p;
}

// CPython's tokenizer hands the sub-parsers text with '\n' line breaks.
std::string normalise_newlines(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

// One flattened element: a literal chunk (or debug text) or a node
// (FormattedValue).
struct Parser::FStringPart {
  bool is_str = true;
  std::string text;
  NodeId node{};
  std::uint32_t begin = 0;  // source span (3.12+ positions)
  std::uint32_t end = 0;
  bool kind_u = false;      // from a u'' token (3.12+: Constant.kind)
};

struct Parser::FStringState {
  std::vector<FStringPart> parts;  // top-level parts of the concatenation
  const Token* first = nullptr;    // first token of the concatenation
  std::uint32_t first_end = 0;     // end of the first STRING (f-string: its FStringEnd)
  // pre-3.12: nodes that get the whole concatenation's span at the end
  std::vector<NodeId> whole_span;
  // pre-3.12 (3.9-3.11): nodes that get the current f-string token's span
  std::vector<NodeId> token_span;
  // the f-string token being parsed
  const Token* start = nullptr;
  Prefix prefix;
};

NodeId Parser::fstring_constant(std::string_view value, bool kind_u) {
  ast::ConstantValue cv;
  cv.kind = ast::ConstantValue::Kind::Str;
  cv.text = tree_.intern(value);
  return tree_.add(NodeKind::Constant, 0, 0, Position{},
                   {tree_.constant(cv), kind_u ? tree_.string("u") : ast::Tree::none_string()});
}

// ---------------------------------------------------------------------------

NodeId Parser::strings() {
  DepthGuard guard(*this);
  if (at(Tok::String) && kind(1) != Tok::String && kind(1) != Tok::FStringStart)
    return single_string();
  FStringState st;
  const Token& first = peek();
  st.first = &first;
  st.first_end = first.end;
  if (first.kind == Tok::FStringStart) {
    int depth = 0;
    for (std::size_t k = mark(); k < lexed_.tokens.size(); ++k) {
      const Token& t = lexed_.tokens[k];
      if (t.kind == Tok::FStringStart) ++depth;
      if (t.kind == Tok::FStringEnd && --depth == 0) {
        st.first_end = t.end;
        break;
      }
      if (t.kind == Tok::EndMarker || t.kind == Tok::Error) break;
    }
  }
  bool any_bytes = false;
  bool any_text = false;
  bool any_fstring = false;
  std::string bytes_value;
  const bool first_u = !text(first).empty() && text(first)[0] == 'u';

  while (at(Tok::String) || at(Tok::FStringStart)) {
    if (at(Tok::String)) {
      const Token& t = advance();
      const std::string_view tt = text(t);
      const Prefix p = parse_prefix(tt);
      const literals::StringParts sp = literals::split_string_token(tt);
      std::string value;
      if (auto err = literals::decode_body(sp.body, sp.flags, value)) fail(t, err->message);
      if (p.bytes) {
        any_bytes = true;
        bytes_value += value;
      } else {
        any_text = true;
        FStringPart part;
        part.text = std::move(value);
        part.begin = t.begin;
        part.end = t.end;
        part.kind_u = !tt.empty() && tt[0] == 'u';
        st.parts.push_back(std::move(part));
      }
    } else {
      any_fstring = true;
      fstring_token(st);
    }
  }
  const Token& last = previous();

  if (any_bytes && (any_text || any_fstring)) {
    if (version_at_least(9)) fail(peek(), "cannot mix bytes and nonbytes literals");
    fail(first, "cannot mix bytes and nonbytes literals");
  }
  if (any_bytes) {
    ast::ConstantValue cv;
    cv.kind = ast::ConstantValue::Kind::Bytes;
    cv.text = tree_.intern(bytes_value);
    return make(NodeKind::Constant, first, last, {tree_.constant(cv), ast::Tree::none_string()});
  }
  if (!any_fstring) {
    std::string value;
    for (const auto& p : st.parts) value += p.text;
    ast::ConstantValue cv;
    cv.kind = ast::ConstantValue::Kind::Str;
    cv.text = tree_.intern(value);
    return make(NodeKind::Constant, first, last,
                {tree_.constant(cv), first_u ? tree_.string("u") : ast::Tree::none_string()});
  }

  // Merge adjacent literal parts; drop empty ones.
  const std::size_t base = scratch_.size();
  const bool modern = version_at_least(12);
  const Position whole = position_of(first, last);
  for (std::size_t i = 0; i < st.parts.size();) {
    if (!st.parts[i].is_str) {
      scratch_.push_back(st.parts[i].node);
      ++i;
      continue;
    }
    std::size_t j = i;
    std::string value;
    while (j < st.parts.size() && st.parts[j].is_str) value += st.parts[j++].text;
    if (!value.empty()) {
      const NodeId c = fstring_constant(value, modern ? st.parts[i].kind_u : first_u);
      if (modern) {
        tree_.set_position(c, st.parts[i].begin, st.parts[j - 1].end,
                           position_of(st.parts[i].begin, st.parts[j - 1].end));
      } else {
        tree_.set_position(c, first.begin, last.end, whole);
      }
      scratch_.push_back(c);
    }
    i = j;
  }
  if (!modern) {
    for (NodeId n : st.whole_span) tree_.set_position(n, first.begin, last.end, whole);
  }
  return make(NodeKind::JoinedStr, first, last, {scratch_list(base)});
}

// The common case: one plain STRING token, no concatenation. Its value is
// the body's own source text unless the lexer saw a backslash or CR in it
// (kEscapes), and is decoded straight into the tree's arena otherwise, so no
// temporary string is built.
NodeId Parser::single_string() {
  const Token& t = advance();
  const std::string_view tt = text(t);
  std::uint32_t prefix_len = 0;
  while (tt[prefix_len] != '\'' && tt[prefix_len] != '"') ++prefix_len;
  const std::uint32_t quote = (t.flags & kTripleQuoted) ? 3 : 1;
  const std::uint32_t body_begin = t.begin + prefix_len + quote;
  const std::uint32_t body_end = t.end - quote;
  ast::ConstantValue cv;
  if (!(t.flags & (kEscapes | kPrefixBytes))) {
    cv.text = tree_.source_ref(body_begin, body_end);
  } else {
    const std::string_view body = source_.text().substr(body_begin, body_end - body_begin);
    std::optional<literals::LiteralError> err;
    cv.text = tree_.append_string(
        [&](std::string& out) { err = literals::decode_body(body, t.flags, out); });
    if (err) fail(t, std::move(err->message));
  }
  cv.kind =
      (t.flags & kPrefixBytes) ? ast::ConstantValue::Kind::Bytes : ast::ConstantValue::Kind::Str;
  // Constant.kind is 'u' for a u'' string (never for bytes: b and u do not mix).
  const ast::Field kind_field = tt[0] == 'u' ? tree_.string("u") : ast::Tree::none_string();
  return make(NodeKind::Constant, t, t, {tree_.constant(cv), kind_field});
}

void Parser::fstring(std::vector<NodeId>& values) {
  FStringState st;
  st.first = &peek();
  fstring_token(st);
  const Position pos = position_of(*st.first, previous());
  for (const auto& p : st.parts) {
    if (!p.is_str) {
      values.push_back(p.node);
    } else if (!p.text.empty()) {
      const NodeId c = fstring_constant(p.text, false);
      tree_.set_position(c, p.begin, p.end, position_of(p.begin, p.end));
      values.push_back(c);
    }
  }
  if (!version_at_least(12)) {
    for (NodeId n : st.whole_span) tree_.set_position(n, st.first->begin, previous().end, pos);
  }
}

// One f-string token run: FStringStart ... FStringEnd.
void Parser::fstring_token(FStringState& st) {
  const Token& start = advance();  // FStringStart
  const Token* saved_start = st.start;
  const Prefix saved_prefix = st.prefix;
  st.start = &start;
  st.prefix = parse_prefix(text(start));
  const std::size_t token_span_base = st.token_span.size();

  if (!version_at_least(12) && !st.prefix.triple) {
    // A single-quoted STRING token could not span lines (except through a
    // backslash-newline in the literal part).
    std::size_t k = mark();
    int depth = 0;
    while (k < lexed_.tokens.size()) {
      const Token& t = lexed_.tokens[k];
      if (t.kind == Tok::FStringStart) ++depth;
      if (t.kind == Tok::FStringEnd) {
        if (depth == 0) break;
        --depth;
      }
      if (t.kind == Tok::EndMarker || t.kind == Tok::Error) break;
      ++k;
    }
    if (k < lexed_.tokens.size() && lexed_.tokens[k].kind == Tok::FStringEnd) {
      const std::string_view src = source_.text();
      for (std::uint32_t o = start.end; o < lexed_.tokens[k].begin; ++o) {
        if ((src[o] == '\n' || src[o] == '\r') && src[o - 1] != '\\' &&
            !(src[o] == '\n' && src[o - 1] == '\r' && src[o - 2] == '\\'))
          fail(start, st.prefix.triple ? "unterminated triple-quoted string literal"
                                       : "unterminated string literal");
      }
    }
  }

  while (true) {
    if (at(Tok::FStringMiddle)) {
      const Token& m = advance();
      // The lexer ends a chunk after the first of two doubled braces and
      // skips the second; CPython's span covers both.
      FStringPart part;
      if (auto err = literals::decode_fstring_middle(text(m), st.prefix.raw, part.text))
        fail(m, err->message);
      std::uint32_t end = m.end;
      const std::string_view src = source_.text();
      if (end > m.begin && end < src.size() && (src[end - 1] == '{' || src[end - 1] == '}') &&
          src[end] == src[end - 1])
        ++end;
      part.begin = m.begin;
      part.end = end;
      st.parts.push_back(std::move(part));
    } else if (at(Tok::LBrace)) {
      fstring_field(st, st.parts, 0);
    } else if (at(Tok::FStringEnd)) {
      break;
    } else if (at(Tok::RBrace)) {
      fail(peek(), "f-string: single '}' is not allowed");
    } else {
      syntax_error_here();
    }
  }
  const Token& end = advance();  // FStringEnd
  if (!version_at_least(12) && version_at_least(9)) {
    const Position tp = position_of(start, end);
    for (std::size_t i = token_span_base; i < st.token_span.size(); ++i)
      tree_.set_position(st.token_span[i], start.begin, end.end, tp);
    st.token_span.resize(token_span_base);
  }
  st.start = saved_start;
  st.prefix = saved_prefix;
}

// Pre-3.12: what CPython's fstring_find_expr rejected while scanning the
// expression text: backslashes anywhere, '#' outside quotes.
void Parser::fstring_check_expr_text(std::uint32_t begin, const Token& at) {
  const std::string_view src = source_.text();
  char quote = 0;
  int string_type = 0;
  int depth = 0;
  for (std::uint32_t i = begin; i < src.size(); ++i) {
    const char ch = src[i];
    if (ch == '\\') fail(at, "f-string expression part cannot include a backslash");
    if (quote) {
      if (ch == quote) {
        if (string_type == 3) {
          if (i + 2 < src.size() && src[i + 1] == ch && src[i + 2] == ch) {
            i += 2;
            quote = 0;
            string_type = 0;
          }
        } else {
          quote = 0;
          string_type = 0;
        }
      }
      continue;
    }
    if (ch == '\'' || ch == '"') {
      if (i + 2 < src.size() && src[i + 1] == ch && src[i + 2] == ch) {
        string_type = 3;
        i += 2;
      } else {
        string_type = 1;
      }
      quote = ch;
    } else if (ch == '[' || ch == '{' || ch == '(') {
      ++depth;
    } else if (ch == '#') {
      fail(at, "f-string expression part cannot include '#'");
    } else if (depth == 0 && (ch == '!' || ch == ':' || ch == '}' || ch == '=')) {
      if (i + 1 < src.size() && src[i + 1] == '=' && (ch == '!' || ch == '=')) {
        ++i;
        continue;
      }
      return;
    } else if (depth == 0 && (ch == '<' || ch == '>')) {
      if (i + 1 < src.size() && src[i + 1] == '=') ++i;
    } else if (ch == ']' || ch == '}' || ch == ')') {
      if (depth == 0) return;
      --depth;
    }
  }
}

// Shift the positions of a subtree: positions on line `line0` move by
// col_delta columns; every line moves by line_delta.
void Parser::fstring_remap(NodeId node, int line0, int col_delta, int line_delta) {
  if (!node) return;
  const ast::Node& n = tree_.at(node);
  Position p = n.pos;
  if (p.lineno == line0) p.col_offset += col_delta;
  if (p.end_lineno == line0) p.end_col_offset += col_delta;
  p.lineno += line_delta;
  p.end_lineno += line_delta;
  tree_.set_position(node, n.begin, n.end, p);
  const NodeKind k = tree_.kind(node);
  const auto fields = ast::fields_of(k);
  for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
    switch (fields[i].kind) {
      case ast::FieldKind::Node:
      case ast::FieldKind::OptNode:
        fstring_remap(tree_.child(node, i), line0, col_delta, line_delta);
        break;
      case ast::FieldKind::List:
      case ast::FieldKind::OptList: {
        for (const NodeId kid : tree_.children(node, i))
          fstring_remap(kid, line0, col_delta, line_delta);
        break;
      }
      default: break;
    }
  }
}

// A replacement field, at '{'. Appends the debug text (if any) and the
// FormattedValue to `out`.
void Parser::fstring_field(FStringState& st, std::vector<FStringPart>& out, int level) {
  DepthGuard guard(*this);
  const Token& lbrace = advance();
  const bool modern = version_at_least(12);
  if (!modern && level >= 2) fail(lbrace, "f-string: expressions nested too deeply");

  // Empty expression.
  if (at(Tok::RBrace) || at(Tok::Exclamation) || at(Tok::Colon) || at(Tok::Equal)) {
    const Token& t = peek();
    const char c = t.kind == Tok::RBrace        ? '}'
                   : t.kind == Tok::Exclamation ? '!'
                   : t.kind == Tok::Colon       ? ':'
                                                : '=';
    if (modern) fail(t, std::string("f-string: valid expression required before '") + c + "'");
    if (version_at_least(11) && c != '}')
      fail(t, std::string("f-string: expression required before '") + c + "'");
    fail(t, "f-string: empty expression not allowed");
  }
  if (!modern) {
    fstring_check_expr_text(lbrace.end, lbrace);
    // The enclosing quote could not appear inside the expression.
    int depth = 0;
    for (std::size_t k = mark(); k < lexed_.tokens.size(); ++k) {
      const Token& t = lexed_.tokens[k];
      if (t.kind == Tok::LBrace || t.kind == Tok::LPar || t.kind == Tok::LSqb) ++depth;
      if (t.kind == Tok::RBrace || t.kind == Tok::RPar || t.kind == Tok::RSqb) {
        if (depth == 0) break;
        --depth;
      }
      if (depth == 0 && (t.kind == Tok::Exclamation || t.kind == Tok::Colon)) break;
      if (t.kind == Tok::EndMarker || t.kind == Tok::Error || t.kind == Tok::FStringEnd) break;
      if (t.kind == Tok::String || t.kind == Tok::FStringStart) {
        const Prefix inner = parse_prefix(text(t));
        if (inner.quote == st.prefix.quote && (!st.prefix.triple || inner.triple))
          fail(t, "f-string: expecting '}'");
      }
    }
  }

  const std::size_t expr_first = mark();
  NodeId expr = at(Tok::KwYield) ? yield_expression() : star_expressions();
  bool genexp = false;
  if (!modern) {
    // The sub-parser saw "(" expr ")": a bare generator expression was fine,
    // a bare starred expression was not (3.9+).
    if ((at(Tok::KwFor) || (at(Tok::KwAsync) && kind(1) == Tok::KwFor)) &&
        tree_.kind(expr) != NodeKind::Tuple) {
      if (tree_.kind(expr) == NodeKind::Starred)
        fail_node(expr, "iterable unpacking cannot be used in comprehension");
      const ast::Field gens = comprehension_clauses();
      expr = tree_.add(NodeKind::GeneratorExp, begin_of(expr), previous().end, Position{},
                       {ast::Tree::node(expr), gens});
      genexp = true;
    } else if (tree_.kind(expr) == NodeKind::Starred && version_at_least(9)) {
      fail_node(expr, version_at_least(10) ? "cannot use starred expression here"
                                           : "can't use starred expression here");
    }
  }
  const std::size_t expr_last = mark();  // one past the expression's tokens
  const Token& term = peek();

  // Debug text.
  bool debug = false;
  if (at(Tok::Equal)) {
    advance();
    debug = true;
    const std::uint32_t dbg_end = peek().begin;
    FStringPart part;
    // The text as written, less comments (3.12+ allows them in fields).
    std::string written;
    std::uint32_t from = lbrace.end;
    const auto& trivia = lexed_.trivia;
    auto it = std::lower_bound(trivia.begin(), trivia.end(), lbrace.end,
                               [](const Trivia& t, std::uint32_t o) { return t.begin < o; });
    for (; it != trivia.end() && it->begin < dbg_end; ++it) {
      if (it->kind != Trivia::Kind::Comment) continue;
      written += source_.text().substr(from, it->begin - from);
      from = it->end;
    }
    if (from < dbg_end) written += source_.text().substr(from, dbg_end - from);
    part.text = normalise_newlines(written);
    part.begin = lbrace.end;
    part.end = dbg_end;
    out.push_back(std::move(part));
  }

  int conversion = -1;
  if (at(Tok::Exclamation)) {
    const Token& bang = advance();
    if (!at(Tok::Name)) {
      if (modern) fail(peek(), "f-string: missing conversion character");
      fail(peek(), "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    }
    const Token& conv = advance();
    if (conv.begin != bang.end) {
      if (modern)
        fail(conv, "f-string: conversion type must come right after the exclamanation mark");
      fail(conv, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    }
    // Before 3.12 the conversion character had to be followed at once by
    // ':' or '}'.
    if (!modern && peek().begin != conv.end) fail(peek(), "f-string: expecting '}'");
    const std::string_view ct = text(conv);
    if (ct == "s" || ct == "r" || ct == "a") {
      conversion = static_cast<unsigned char>(ct[0]);
    } else if (modern) {
      fail(conv, "f-string: invalid conversion character '" + std::string(ct) +
                     "': expected 's', 'r', or 'a'");
    } else if (ct.size() > 1 && (ct[0] == 's' || ct[0] == 'r' || ct[0] == 'a')) {
      fail(conv, "f-string: expecting '}'");
    } else {
      fail(conv, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
    }
  }

  NodeId spec{};
  if (at(Tok::Colon)) {
    const Token& colon = advance();
    spec = fstring_spec(st, colon, level);
  }
  if (!at(Tok::RBrace)) {
    if (modern && conversion != -1 && !spec) fail(peek(), "f-string: expecting ':' or '}'");
    fail(peek(), "f-string: expecting '}'");
  }
  const Token& rbrace = advance();
  if (debug && conversion == -1 && !spec) conversion = 'r';

  // Positions of the expression (pre-3.12: the sub-parser's view).
  if (!modern && expr) {
    const std::uint32_t brace_line = lbrace.line;
    const auto brace_col = static_cast<std::int32_t>(col_of(lbrace.begin));
    // An unparenthesised tuple was parsed inside the "(...)" the sub-parser
    // added, so it spans '{' .. terminator.
    if (tree_.kind(expr) == NodeKind::Tuple || genexp) {
      bool parenthesised = false;
      if (!genexp && lexed_.tokens[expr_first].kind == Tok::LPar) {
        int depth = 0;
        std::size_t k = expr_first;
        for (; k < expr_last; ++k) {
          const Tok tk = lexed_.tokens[k].kind;
          if (tk == Tok::LPar || tk == Tok::LSqb || tk == Tok::LBrace) ++depth;
          if (tk == Tok::RPar || tk == Tok::RSqb || tk == Tok::RBrace) {
            if (--depth == 0) break;
          }
        }
        parenthesised = k + 1 == expr_last;
      }
      if (!parenthesised) {
        Position p;
        p.lineno = static_cast<std::int32_t>(brace_line);
        p.col_offset = brace_col;
        p.end_lineno = static_cast<std::int32_t>(term.line);
        p.end_col_offset = static_cast<std::int32_t>(col_of(term.begin)) + 1;
        tree_.set_position(expr, lbrace.begin, term.begin + 1, p);
      }
    }
    const Token& tok = *st.start;
    const auto lines = static_cast<std::int32_t>(brace_line - tok.line);
    if (minor() == 9 && lines > 0) {
      // Parser/string_parser.c (3.9): the column of '{' is counted from the
      // newline itself and the token's column is added again.
      bool newline_after_brace = true;
      const std::string_view src = source_.text();
      for (std::uint32_t o = lbrace.end;
           o < src.size() && src[o] != '}' && src[o] != '\n' && src[o] != '\r'; ++o) {
        if (src[o] != ' ' && src[o] != '\t' && src[o] != '\f') {
          newline_after_brace = false;
          break;
        }
      }
      if (!newline_after_brace)
        fstring_remap(expr, static_cast<int>(brace_line), static_cast<int>(col_of(tok.begin)) + 1,
                      0);
    } else if (minor() <= 8) {
      // Python/ast.c (3.8): strstr("{" expr "}") in the first token of the
      // concatenation; the column is relative to the last newline before
      // the match (counting the newline), plus the first token's column.
      const Token& first = *st.first;
      const std::string hay =
          normalise_newlines(source_.text().substr(first.begin, st.first_end - first.begin));
      std::string needle = "{";
      needle += normalise_newlines(source_.text().substr(lbrace.end, term.begin - lbrace.end));
      needle += "}";
      const std::size_t k = hay.find(needle);
      std::int32_t cols = static_cast<std::int32_t>(col_of(first.begin));
      std::int32_t line_base = static_cast<std::int32_t>(first.line) - 1;
      if (k != std::string::npos) {
        std::size_t nl = std::string::npos;
        std::int32_t newlines = 0;
        for (std::size_t i = 0; i < k; ++i) {
          if (hay[i] == '\n') {
            nl = i;
            ++newlines;
          }
        }
        cols += static_cast<std::int32_t>(nl == std::string::npos ? k : k - nl);
        line_base += newlines;
      }
      // sub-parser line 1 is the '{' line; its columns count from '{'
      // (the added '(' stands where '{' was).
      const int line_delta = line_base + 1 - static_cast<int>(brace_line);
      const int col_delta = cols - brace_col;
      fstring_remap(expr, static_cast<int>(brace_line), col_delta, line_delta);
    }
  }

  NodeId fv;
  if (modern) {
    fv = make(NodeKind::FormattedValue, lbrace, rbrace,
              {ast::Tree::node(expr), ast::Tree::integer(conversion), ast::Tree::node(spec)});
  } else {
    fv = tree_.add(NodeKind::FormattedValue, lbrace.begin, rbrace.end, Position{},
                   {ast::Tree::node(expr), ast::Tree::integer(conversion), ast::Tree::node(spec)});
    st.whole_span.push_back(fv);
  }
  FStringPart part;
  part.is_str = false;
  part.node = fv;
  part.begin = lbrace.begin;
  part.end = rbrace.end;
  out.push_back(std::move(part));
}

// A format spec after ':' up to (not including) the closing '}'.
NodeId Parser::fstring_spec(FStringState& st, const Token& colon, int level) {
  std::vector<FStringPart> parts;
  const bool modern = version_at_least(12);
  std::uint32_t spec_end = colon.end;
  while (true) {
    if (at(Tok::FStringMiddle)) {
      const Token& m = advance();
      FStringPart part;
      if (auto err = literals::decode_fstring_middle(text(m), st.prefix.raw, part.text))
        fail(m, err->message);
      part.begin = m.begin;
      part.end = m.end;
      parts.push_back(std::move(part));
      spec_end = m.end;
    } else if (at(Tok::LBrace)) {
      fstring_field(st, parts, level + 1);
      spec_end = previous().end;
    } else {
      break;
    }
  }

  const std::size_t base = scratch_.size();
  bool last_is_field = false;
  for (std::size_t i = 0; i < parts.size();) {
    if (!parts[i].is_str) {
      scratch_.push_back(parts[i].node);
      last_is_field = true;
      ++i;
      continue;
    }
    std::size_t j = i;
    std::string value;
    while (j < parts.size() && parts[j].is_str) value += parts[j++].text;
    if (!value.empty()) {
      const NodeId c = fstring_constant(value, false);
      if (modern) {
        tree_.set_position(c, parts[i].begin, parts[j - 1].end,
                           position_of(parts[i].begin, parts[j - 1].end));
      } else if (j < parts.size() || minor() <= 8) {
        // followed by a field: made with the concatenation's span
        st.whole_span.push_back(c);
        // kind is that of the concatenation's first token
        if (!text(*st.first).empty() && text(*st.first)[0] == 'u')
          tree_.set_field(c, 1, tree_.string("u"));
      } else {
        st.token_span.push_back(c);
      }
      scratch_.push_back(c);
      last_is_field = false;
    }
    i = j;
  }
  if (minor() == 12 && last_is_field) {
    const NodeId c = fstring_constant("", false);
    tree_.set_position(c, spec_end, spec_end, position_of(spec_end, spec_end));
    scratch_.push_back(c);
  }
  const ast::Field values = scratch_list(base);
  if (modern) {
    return tree_.add(NodeKind::JoinedStr, colon.begin, spec_end, position_of(colon.begin, spec_end),
                     {values});
  }
  const NodeId js = tree_.add(NodeKind::JoinedStr, colon.begin, spec_end, Position{}, {values});
  if (minor() <= 8)
    st.whole_span.push_back(js);
  else
    st.token_span.push_back(js);
  return js;
}

}  // namespace gm::detail

// Parser infrastructure: token cursor, errors, depth guard, positions, node
// builders, and the parse_module() entry point.
#include "parser/parser.h"

#include "syntax/literals.h"

#include <algorithm>
#include <string>
#include <utility>

namespace gm {

ParseResult parse_module(const Source& source, const ParseOptions& options) {
  ParseResult result;
  result.lexed = lex(source);
  result.tree.reserve_for_source(source.text(), result.lexed.tokens.size());
  detail::Parser parser(source, result.lexed, result.tree, options);
  try {
    const ast::NodeId root = parser.parse_file();
    result.tree.set_root(root);
  } catch (const detail::ParseAbort&) {
    // the error is recorded in the parser
  }
  if (parser.error()) {
    result.error = parser.error();
    result.tree.set_root(ast::NodeId{});
  } else if (result.lexed.error) {
    // The parser never reached the error token (it should have); report the
    // lexer's error rather than a tree built from a truncated token stream.
    result.error = parser.lexer_error();
    result.tree.set_root(ast::NodeId{});
  }
  return result;
}

namespace detail {

Parser::Parser(const Source& source, const LexResult& lexed, ast::Tree& tree,
               const ParseOptions& options)
    : source_(source),
      lexed_(lexed),
      tree_(tree),
      options_(options),
      tokens_(lexed.tokens.data()),
      ntokens_(lexed.tokens.size()) {
  scratch_.reserve(256);
  ops_scratch_.reserve(16);
}

// ---------------------------------------------------------------------------
// Token cursor

void Parser::expect_failed(Tok k) {
  const Token& t = peek();
  if (k == Tok::Colon && version_at_least(10)) fail(t, "expected ':'");
  syntax_error_here();
}

bool Parser::at_soft_keyword(std::string_view word, int ahead) const {
  const Token& t = peek(ahead);
  return t.kind == Tok::Name && text(t) == word;
}

// ---------------------------------------------------------------------------
// Errors

[[noreturn]] void Parser::abort_with(SyntaxError error) {
  if (!error_) error_ = std::move(error);
  throw ParseAbort{};
}

namespace {

bool is_unclosed_bracket(const SyntaxError& e) {
  const std::string_view msg = e.message;
  const std::string_view suffix = "was never closed";
  return msg.size() >= suffix.size() && msg.substr(msg.size() - suffix.size()) == suffix;
}

}  // namespace

// 3.10+ (_Pypegen_set_syntax_error): after the parser raised a SyntaxError,
// CPython tokenizes the rest of the file; an error the tokenizer raises there
// replaces the parser's, except that an unclosed bracket only does when it
// was opened on a line before the parser's error, and indentation errors
// (reported by the tokenizer without raising) never do.
bool Parser::lexer_error_overrides(std::uint32_t error_line) const {
  if (!lexed_.error || !version_at_least(10)) return false;
  const SyntaxError& le = *lexed_.error;
  if (le.kind != "SyntaxError") return false;
  // CPython's line is that of the furthest token it had read.
  const std::uint32_t line = std::max(error_line, peek().line);
  if (is_unclosed_bracket(le)) return le.line < line;
  return true;
}

// The lexer's error as this version reports it: before 3.10 an unclosed
// bracket at the end of the file is "unexpected EOF while parsing".
SyntaxError Parser::lexer_error() const {
  SyntaxError e = *lexed_.error;
  if (!version_at_least(10) && is_unclosed_bracket(e)) {
    const Token& t = lexed_.tokens.back();
    e.message = "unexpected EOF while parsing";
    e.line = e.end_line = t.line;
    e.col = e.end_col = t.begin - lexed_.lines.line_start(t.line);
  }
  return e;
}

[[noreturn]] void Parser::fail(const Token& at, std::string message, std::string kind) {
  if (at.kind == Tok::Error && lexed_.error) abort_with(lexer_error());
  if (kind != "MemoryError" && lexer_error_overrides(at.line)) abort_with(lexer_error());
  SyntaxError e;
  e.kind = std::move(kind);
  e.message = std::move(message);
  e.line = at.line;
  e.col = col_of(at.begin);
  e.end_line = at.end_line;
  e.end_col = at.end - lexed_.lines.line_start(at.end_line);
  abort_with(std::move(e));
}

[[noreturn]] void Parser::fail_range(std::uint32_t begin, std::uint32_t end, std::string message) {
  SyntaxError e;
  e.message = std::move(message);
  const Position p = position_of(begin, end);
  e.line = static_cast<std::uint32_t>(p.lineno);
  e.col = static_cast<std::uint32_t>(p.col_offset);
  e.end_line = static_cast<std::uint32_t>(p.end_lineno);
  e.end_col = static_cast<std::uint32_t>(p.end_col_offset);
  if (lexer_error_overrides(e.line)) abort_with(lexer_error());
  abort_with(std::move(e));
}

[[noreturn]] void Parser::fail_node(NodeId node, std::string message) {
  const ast::Node& n = tree_.at(node);
  SyntaxError e;
  e.message = std::move(message);
  e.line = static_cast<std::uint32_t>(n.pos.lineno);
  e.col = static_cast<std::uint32_t>(n.pos.col_offset);
  e.end_line = static_cast<std::uint32_t>(n.pos.end_lineno);
  e.end_col = static_cast<std::uint32_t>(n.pos.end_col_offset);
  if (lexer_error_overrides(e.line)) abort_with(lexer_error());
  abort_with(std::move(e));
}

[[noreturn]] void Parser::syntax_error_here() {
  const Token& t = peek();
  if (t.kind == Tok::Error && lexed_.error) abort_with(lexer_error());
  if (t.kind == Tok::Indent) fail(t, "unexpected indent", "IndentationError");
  if (t.kind == Tok::Dedent) fail(t, "unexpected unindent", "IndentationError");
  if (t.kind == Tok::EndMarker && !version_at_least(10) && version_at_least(9))
    fail(t, "unexpected EOF while parsing");
  fail(t, "invalid syntax");
}

void Parser::require_version(int minor_needed, const Token& at, std::string_view what) {
  if (version_at_least(minor_needed)) return;
  // The real interpreters of older versions do not know the construct at
  // all: they report a generic syntax error.
  (void)what;
  fail(at, "invalid syntax");
}

// ---------------------------------------------------------------------------
// Depth guard

void Parser::too_deep() {
  SyntaxError e;
  e.kind = "MemoryError";
  e.message = "Parser stack overflowed - Python source too complex to parse";
  const Token& t = peek();
  e.line = t.line;
  e.col = col_of(t.begin);
  e.end_line = t.end_line;
  e.end_col = t.end - lexed_.lines.line_start(t.end_line);
  abort_with(std::move(e));
}

// ---------------------------------------------------------------------------
// Positions

std::uint32_t Parser::line_of(std::uint32_t offset) const {
  const auto& starts = lexed_.lines.starts;
  const std::uint32_t h = line_hint_;
  if (h >= 1 && h <= starts.size() && starts[h - 1] <= offset &&
      (h == starts.size() || offset < starts[h]))
    return h;
  line_hint_ = lexed_.lines.line_of(offset);
  return line_hint_;
}

std::uint32_t Parser::col_of(std::uint32_t offset) const {
  return offset - lexed_.lines.line_start(line_of(offset));
}

Position Parser::position_of(std::uint32_t begin, std::uint32_t end) const {
  Position p;
  const std::uint32_t l1 = line_of(begin);
  const std::uint32_t l2 = line_of(end);
  p.lineno = static_cast<std::int32_t>(l1);
  p.col_offset = static_cast<std::int32_t>(begin - lexed_.lines.line_start(l1));
  p.end_lineno = static_cast<std::int32_t>(l2);
  p.end_col_offset = static_cast<std::int32_t>(end - lexed_.lines.line_start(l2));
  return p;
}

Position Parser::position_between(NodeId first, NodeId last) const {
  const Position& a = tree_.at(first).pos;
  const Position& b = tree_.at(last).pos;
  return Position{a.lineno, a.col_offset, b.end_lineno, b.end_col_offset};
}

Position Parser::position_from(const Token& first, NodeId last) const {
  const Position& b = tree_.at(last).pos;
  Position p;
  p.lineno = static_cast<std::int32_t>(first.line);
  p.col_offset = static_cast<std::int32_t>(first.begin - lexed_.lines.line_start(first.line));
  p.end_lineno = b.end_lineno;
  p.end_col_offset = b.end_col_offset;
  return p;
}

Position Parser::position_to(NodeId first, const Token& last) const {
  const Position& a = tree_.at(first).pos;
  Position p;
  p.lineno = a.lineno;
  p.col_offset = a.col_offset;
  p.end_lineno = static_cast<std::int32_t>(last.end_line);
  p.end_col_offset = static_cast<std::int32_t>(last.end - lexed_.lines.line_start(last.end_line));
  return p;
}

// ---------------------------------------------------------------------------
// Node builders

NodeId Parser::make(NodeKind kind, std::uint32_t begin, std::uint32_t end,
                    std::initializer_list<ast::Field> fields) {
  return tree_.add(kind, begin, end, position_of(begin, end), fields);
}

NodeId Parser::make_between(NodeKind kind, NodeId first, NodeId last,
                            std::initializer_list<ast::Field> fields) {
  return tree_.add(kind, begin_of(first), end_of(last), position_between(first, last), fields);
}

NodeId Parser::make_from(NodeKind kind, const Token& first, NodeId last,
                         std::initializer_list<ast::Field> fields) {
  return tree_.add(kind, first.begin, end_of(last), position_from(first, last), fields);
}

NodeId Parser::make_to(NodeKind kind, NodeId first, const Token& last,
                       std::initializer_list<ast::Field> fields) {
  return tree_.add(kind, begin_of(first), last.end, position_to(first, last), fields);
}

ast::Field Parser::normalized_identifier(const Token& name) {
  return tree_.string(literals::normalize_identifier(text(name)));
}

ast::Field Parser::scratch_list(std::size_t base) {
  const ast::Field f =
      tree_.list(std::span<const NodeId>(scratch_.data() + base, scratch_.size() - base));
  scratch_.resize(base);
  return f;
}

}  // namespace detail
}  // namespace gm

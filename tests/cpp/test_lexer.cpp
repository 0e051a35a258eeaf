// The lexer: tokens, layout, f-strings, numbers, errors, robustness.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

#include "syntax/lexer.h"
#include "syntax/source.h"

namespace gm {
namespace {

struct Lexed {
  Source source;
  LexResult result;
  std::string_view text(const Token& t) const {
    return source.text().substr(t.begin, t.end - t.begin);
  }
  std::vector<Tok> kinds() const {
    std::vector<Tok> k;
    for (const Token& t : result.tokens) k.push_back(t.kind);
    return k;
  }
  // "kind:text" for each token except layout tokens, for compact checks.
  std::string dump() const {
    std::string s;
    for (const Token& t : result.tokens) {
      if (!s.empty()) s += ' ';
      switch (t.kind) {
        case Tok::Newline: s += "NL"; break;
        case Tok::Indent: s += "IN"; break;
        case Tok::Dedent: s += "DE"; break;
        case Tok::EndMarker: s += "END"; break;
        case Tok::Error: s += "ERR"; break;
        case Tok::FStringStart: s += "FS(" + std::string(text(t)) + ")"; break;
        case Tok::FStringMiddle: s += "FM(" + std::string(text(t)) + ")"; break;
        case Tok::FStringEnd: s += "FE(" + std::string(text(t)) + ")"; break;
        case Tok::String: s += "S(" + std::string(text(t)) + ")"; break;
        case Tok::Number: s += "N(" + std::string(text(t)) + ")"; break;
        default: s += std::string(text(t)); break;
      }
    }
    return s;
  }
};

Lexed lex_text(std::string text) {
  auto r = Source::from_utf8(std::move(text));
  EXPECT_TRUE(std::holds_alternative<Source>(r));
  Lexed l{std::get<Source>(std::move(r)), {}};
  l.result = lex(l.source);
  // Invariant: error set iff the stream ends with Error.
  EXPECT_FALSE(l.result.tokens.empty());
  EXPECT_EQ(l.result.error.has_value(), l.result.tokens.back().kind == Tok::Error);
  return l;
}

const SyntaxError& error_of(const Lexed& l) {
  static const SyntaxError none{};
  EXPECT_TRUE(l.result.error) << l.dump();
  return l.result.error ? *l.result.error : none;
}

void expect_error(const std::string& src, const std::string& message, std::uint32_t line,
                  std::uint32_t col, const char* kind = "SyntaxError") {
  Lexed l = lex_text(src);
  ASSERT_TRUE(l.result.error) << "no error for: " << src << "\n" << l.dump();
  EXPECT_EQ(l.result.error->message, message) << src;
  EXPECT_EQ(l.result.error->line, line) << src;
  EXPECT_EQ(l.result.error->col, col) << src;
  EXPECT_EQ(l.result.error->kind, kind) << src;
}

TEST(Lexer, EmptyFile) {
  Lexed l = lex_text("");
  EXPECT_EQ(l.dump(), "END");
  EXPECT_EQ(l.result.lines.starts.size(), 1u);
}

TEST(Lexer, OnlyComments) {
  Lexed l = lex_text("# a\n\n   # b\n# c");
  EXPECT_EQ(l.dump(), "END");
  ASSERT_EQ(l.result.trivia.size(), 6u);
  EXPECT_EQ(l.result.trivia[0].kind, Trivia::Kind::Comment);
  EXPECT_EQ(l.result.trivia[1].kind, Trivia::Kind::NonLogicalNewline);
}

TEST(Lexer, SimpleStatementAndPositions) {
  Lexed l = lex_text("x = 1\nif x:\n    y = x + 2\n");
  EXPECT_EQ(l.dump(), "x = N(1) NL if x : NL IN y = x + N(2) NL DE END");
  const Token& y = l.result.tokens[9];
  EXPECT_EQ(l.text(y), "y");
  EXPECT_EQ(y.line, 3u);
  EXPECT_EQ(y.end_line, 3u);
  EXPECT_EQ(y.begin - l.result.lines.line_start(3), 4u);
  EXPECT_EQ(l.result.lines.line_of(y.begin), 3u);
  EXPECT_EQ(l.result.tokens[0].line, 1u);
}

TEST(Lexer, Keywords) {
  Lexed l = lex_text(
      "False None True and as assert async await break class continue def del elif else except "
      "finally for from global if import in is lambda nonlocal not or pass raise return try while "
      "with yield match case type _ print");
  std::vector<Tok> expected = {
      Tok::KwFalse,  Tok::KwNone,     Tok::KwTrue,  Tok::KwAnd,    Tok::KwAs,       Tok::KwAssert,
      Tok::KwAsync,  Tok::KwAwait,    Tok::KwBreak, Tok::KwClass,  Tok::KwContinue, Tok::KwDef,
      Tok::KwDel,    Tok::KwElif,     Tok::KwElse,  Tok::KwExcept, Tok::KwFinally,  Tok::KwFor,
      Tok::KwFrom,   Tok::KwGlobal,   Tok::KwIf,    Tok::KwImport, Tok::KwIn,       Tok::KwIs,
      Tok::KwLambda, Tok::KwNonlocal, Tok::KwNot,   Tok::KwOr,     Tok::KwPass,     Tok::KwRaise,
      Tok::KwReturn, Tok::KwTry,      Tok::KwWhile, Tok::KwWith,   Tok::KwYield,    Tok::Name,
      Tok::Name,     Tok::Name,       Tok::Name,    Tok::Name,     Tok::Newline,    Tok::EndMarker};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(Lexer, AllOperators) {
  const std::vector<Tok> ops = {Tok::LPar,
                                Tok::RPar,
                                Tok::LSqb,
                                Tok::RSqb,
                                Tok::LBrace,
                                Tok::RBrace,
                                Tok::Colon,
                                Tok::Comma,
                                Tok::Semi,
                                Tok::Plus,
                                Tok::Minus,
                                Tok::Star,
                                Tok::Slash,
                                Tok::VBar,
                                Tok::Amper,
                                Tok::Less,
                                Tok::Greater,
                                Tok::Equal,
                                Tok::Dot,
                                Tok::Percent,
                                Tok::EqEqual,
                                Tok::NotEqual,
                                Tok::LessEqual,
                                Tok::GreaterEqual,
                                Tok::Tilde,
                                Tok::Circumflex,
                                Tok::LeftShift,
                                Tok::RightShift,
                                Tok::DoubleStar,
                                Tok::PlusEqual,
                                Tok::MinEqual,
                                Tok::StarEqual,
                                Tok::SlashEqual,
                                Tok::PercentEqual,
                                Tok::AmperEqual,
                                Tok::VBarEqual,
                                Tok::CircumflexEqual,
                                Tok::LeftShiftEqual,
                                Tok::RightShiftEqual,
                                Tok::DoubleStarEqual,
                                Tok::DoubleSlash,
                                Tok::DoubleSlashEqual,
                                Tok::At,
                                Tok::AtEqual,
                                Tok::RArrow,
                                Tok::Ellipsis,
                                Tok::ColonEqual,
                                Tok::Exclamation};
  std::string src;
  for (Tok k : ops) {
    src += std::string(token_spelling(k));
    src += ' ';
  }
  Lexed l = lex_text(src);
  ASSERT_FALSE(l.result.error) << l.result.error->message;
  ASSERT_EQ(l.result.tokens.size(), ops.size() + 2);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(l.result.tokens[i].kind, ops[i]) << token_spelling(ops[i]);
    EXPECT_EQ(l.text(l.result.tokens[i]), token_spelling(ops[i]));
  }
  // Longest match without spaces.
  EXPECT_EQ(lex_text("a**=b//=c>>=d<<=e->f...g:=h").dump(),
            "a **= b //= c >>= d <<= e -> f ... g := h NL END");
  EXPECT_EQ(lex_text("a..b").dump(), "a . . b NL END");
  EXPECT_EQ(lex_text("1 <> 2").dump(), "N(1) <> N(2) NL END");
  EXPECT_EQ(lex_text("a $ b ? `").kinds()[1], Tok::Unknown);
}

TEST(Lexer, Numbers) {
  for (const char* n : {"0",    "00",    "0_0",    "123",         "1_000", "0x_fF", "0XAB_CD",
                        "0o17", "0O1_7", "0b1010", "0B1_0",       "1.5",   "1.",    ".5",
                        "1e10", "1E+10", "1e-1_0", "1_0.0_1e1_0", "1j",    "1.5J",  ".5j",
                        "1e5j", "0j",    "09.5",   "09j",         "0e5",   "00.5",  "0_0.5"}) {
    Lexed l = lex_text(n);
    ASSERT_FALSE(l.result.error) << n << ": " << l.result.error->message;
    EXPECT_EQ(l.result.tokens[0].kind, Tok::Number) << n;
    EXPECT_EQ(l.text(l.result.tokens[0]), n);
    EXPECT_EQ(l.result.tokens.size(), 3u) << n;
  }
  // Numbers followed by keywords are accepted (SyntaxWarning in CPython).
  EXPECT_EQ(lex_text("1if x else 2").dump(), "N(1) if x else N(2) NL END");
  EXPECT_EQ(lex_text("0x1for x in y").dump(), "N(0x1f) or x in y NL END");  // f is a digit
  EXPECT_EQ(lex_text("0o7for x in y").dump(), "N(0o7) for x in y NL END");
  EXPECT_EQ(lex_text("1or 2").dump(), "N(1) or N(2) NL END");
  EXPECT_EQ(error_of(lex_text("1.real")).message, "invalid decimal literal");
  EXPECT_EQ(lex_text("1..real").dump(), "N(1.) . real NL END");
}

TEST(Lexer, NumberErrors) {
  expect_error("x = 1__0\n", "invalid decimal literal", 1, 5);
  expect_error("0x\n", "invalid hexadecimal literal", 1, 1);
  expect_error("0xg\n", "invalid hexadecimal literal", 1, 1);
  expect_error("0xf_\n", "invalid hexadecimal literal", 1, 3);
  expect_error("0o8\n", "invalid digit '8' in octal literal", 1, 2);
  expect_error("0o\n", "invalid octal literal", 1, 1);
  expect_error("0b2\n", "invalid digit '2' in binary literal", 1, 2);
  expect_error("0b\n", "invalid binary literal", 1, 1);
  expect_error("012\n",
               "leading zeros in decimal integer literals are not permitted; use an 0o prefix "
               "for octal integers",
               1, 0);
  expect_error("1e\n", "invalid decimal literal", 1, 0);
  expect_error("1e+\n", "invalid decimal literal", 1, 2);
  expect_error("1abc\n", "invalid decimal literal", 1, 0);
  expect_error("1_\n", "invalid decimal literal", 1, 1);
  expect_error("1.e\n", "invalid decimal literal", 1, 1);
  expect_error("0_\n", "invalid decimal literal", 1, 1);
  expect_error("1jx\n", "invalid imaginary literal", 1, 1);
  expect_error("0x1g\n", "invalid hexadecimal literal", 1, 2);
}

TEST(Lexer, Strings) {
  for (const char* s : {"'a'", "\"a\"", "''", "\"\"", "'''a'b''c'''", "\"\"\"a\n\"b\"\"\"",
                        "r'\\''", "R'x'", "u'x'", "U'x'", "b'x'", "B'x'", "br'x'", "Rb'x'", "bR'x'",
                        "rB'x'", "'a\\\nb'", "'\\\\'", "'''\\''''"}) {
    Lexed l = lex_text(s);
    ASSERT_FALSE(l.result.error) << s << ": " << l.result.error->message;
    EXPECT_EQ(l.result.tokens[0].kind, Tok::String) << s;
    EXPECT_EQ(l.text(l.result.tokens[0]), s);
  }
  Lexed l = lex_text("rb'''x''' u'y'");
  EXPECT_EQ(l.result.tokens[0].flags, kPrefixRaw | kPrefixBytes | kTripleQuoted);
  EXPECT_EQ(l.result.tokens[1].flags, kPrefixUnicode);
  // Not string prefixes: ur, bu, ub, fb, t.
  EXPECT_EQ(lex_text("ur'x'").dump(), "ur S('x') NL END");
  EXPECT_EQ(lex_text("bu'x'").dump(), "bu S('x') NL END");
  EXPECT_EQ(lex_text("fb'x'").dump(), "fb S('x') NL END");
  EXPECT_EQ(lex_text("t'x'").dump(), "t S('x') NL END");
  // Multi-line triple-quoted string lines.
  Lexed m = lex_text("x = '''a\nb\nc'''\ny");
  EXPECT_EQ(m.result.tokens[2].line, 1u);
  EXPECT_EQ(m.result.tokens[2].end_line, 3u);
  EXPECT_EQ(m.result.tokens[4].line, 4u);
}

TEST(Lexer, StringErrors) {
  expect_error("x = 'abc\n", "unterminated string literal (detected at line 1)", 1, 4);
  expect_error("x = 'abc", "unterminated string literal (detected at line 1)", 1, 4);
  expect_error("x = '''abc\n\n", "unterminated triple-quoted string literal (detected at line 2)",
               1, 4);
  expect_error("x = \"\"\"\n", "unterminated triple-quoted string literal (detected at line 1)", 1,
               4);
  expect_error("x = 'abc\\'\n",
               "unterminated string literal (detected at line 1); perhaps you escaped the end "
               "quote?",
               1, 4);
  expect_error("x = b'\n", "unterminated string literal (detected at line 1)", 1, 4);
}

TEST(Lexer, FStringTokens) {
  Lexed l = lex_text("f\"a{{b}}c{x!r:>{w}} {y=}\"");
  EXPECT_EQ(l.dump(),
            "FS(f\") FM(a{) FM(b}) FM(c) { x ! r : FM(>) { w } } FM( ) { y = } FE(\") NL END");
  EXPECT_EQ(l.result.tokens[0].flags, kPrefixFormat);
  EXPECT_EQ(l.result.tokens[1].flags, kPrefixFormat);
  // Raw and triple-quoted.
  Lexed r = lex_text("rf'''a\\{x}\n'''");
  EXPECT_EQ(r.dump(), "FS(rf''') FM(a\\) { x } FM(\n) FE(''') NL END");
  EXPECT_EQ(r.result.tokens[0].flags, kPrefixFormat | kPrefixRaw | kTripleQuoted);
  EXPECT_EQ(r.result.tokens[1].flags, kPrefixFormat | kPrefixRaw | kTripleQuoted);
  // Empty and expression-only.
  EXPECT_EQ(lex_text("f''").dump(), "FS(f') FE(') NL END");
  EXPECT_EQ(lex_text("f'{x}'").dump(), "FS(f') { x } FE(') NL END");
  EXPECT_EQ(lex_text("f'{x:}'").dump(), "FS(f') { x : } FE(') NL END");
  // Nested format specs, nested f-strings and PEP 701 quote reuse.
  EXPECT_EQ(lex_text("f'{x:{y:{z}}}'").dump(), "FS(f') { x : { y : { z } } } FE(') NL END");
  EXPECT_EQ(lex_text("f\"{d[\"k\"]}\"").dump(), "FS(f\") { d [ S(\"k\") ] } FE(\") NL END");
  EXPECT_EQ(lex_text("f'{f'{x}'}'").dump(), "FS(f') { FS(f') { x } FE(') } FE(') NL END");
  // Colons inside brackets / lambda parentheses are not format specs.
  EXPECT_EQ(lex_text("f'{a[1:2]}'").dump(), "FS(f') { a [ N(1) : N(2) ] } FE(') NL END");
  EXPECT_EQ(lex_text("f'{(lambda x:1)}'").dump(), "FS(f') { ( lambda x : N(1) ) } FE(') NL END");
  EXPECT_EQ(lex_text("f'{x!=y}'").dump(), "FS(f') { x != y } FE(') NL END");
  EXPECT_EQ(lex_text("f'{x:=5}'").dump(), "FS(f') { x : FM(=5) } FE(') NL END");
  // \N{...} ends a middle; braces inside it are not fields.
  EXPECT_EQ(lex_text("f'a\\N{DASH}b'").dump(), "FS(f') FM(a\\N{DASH}) FM(b) FE(') NL END");
  // Escaped quote in the text.
  EXPECT_EQ(lex_text("f'it\\'s'").dump(), "FS(f') FM(it\\'s) FE(') NL END");
  // Multi-line expression in a triple-quoted f-string, with a comment.
  Lexed m = lex_text("f'''{x # c\n}'''");
  EXPECT_EQ(m.dump(), "FS(f''') { x } FE(''') NL END");
  // Adjacent f-string and string.
  EXPECT_EQ(lex_text("f'a' 'b'").dump(), "FS(f') FM(a) FE(') S('b') NL END");
}

TEST(Lexer, FStringErrors) {
  expect_error("x = f'abc", "unterminated f-string literal (detected at line 1)", 1, 4);
  expect_error("x = f'abc\n", "unterminated f-string literal (detected at line 1)", 1, 4);
  expect_error("x = f'''abc\n\n",
               "unterminated triple-quoted f-string literal (detected at line 2)", 1, 4);
  expect_error("x = f'{x}\n", "unterminated f-string literal (detected at line 1)", 1, 4);
  expect_error("x = f'{x", "'{' was never closed", 1, 6);
  expect_error("f'}'\n", "f-string: single '}' is not allowed", 1, 2);
  expect_error("f'{x}}'\n", "f-string: single '}' is not allowed", 1, 5);
  expect_error("f'{)}'\n", "f-string: unmatched ')'", 1, 3);
  expect_error("f'{'\n", "f-string: expecting '}'", 1, 3);
  expect_error("f'{x:{y:{z:{w}}}}'\n", "f-string: expressions nested too deeply", 1, 10);
  // 150 nested f-strings: too many.
  std::string deep;
  for (int i = 0; i < 160; ++i) deep += "f'{";
  expect_error(deep, "too many nested f-strings", 1, 448);
}

TEST(Lexer, Indentation) {
  Lexed l = lex_text("if a:\n  if b:\n    c\n  d\ne\n");
  EXPECT_EQ(l.dump(), "if a : NL IN if b : NL IN c NL DE d NL DE e NL END");
  Lexed m = lex_text("if a:\n  if b:\n    c\n");
  EXPECT_EQ(m.dump(), "if a : NL IN if b : NL IN c NL DE DE END");
  // Tabs count to multiples of 8, consistently.
  EXPECT_EQ(lex_text("if a:\n\tb\n\tc\n").dump(), "if a : NL IN b NL c NL DE END");
  EXPECT_EQ(error_of(lex_text("if a:\n        b\n\tc\n")).kind, "TabError");
}

TEST(Lexer, IndentationErrors) {
  expect_error("if 1:\n\tx\n        y\n", "inconsistent use of tabs and spaces in indentation", 3,
               0, "TabError");
  expect_error("if 1:\n        x\n\ty\n", "inconsistent use of tabs and spaces in indentation", 3,
               0, "TabError");
  expect_error("if 1:\n  x\n y\n", "unindent does not match any outer indentation level", 3, 2,
               "IndentationError");
  std::string deep;
  for (int i = 0; i < 101; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "if x:\n";
  Lexed l = lex_text(deep);
  EXPECT_EQ(error_of(l).message, "too many levels of indentation");
  EXPECT_EQ(error_of(l).kind, "IndentationError");
}

TEST(Lexer, BlankAndCommentLinesAreTrivia) {
  Lexed l = lex_text("if a:\n\n    # c\n  \n    b  # d\n\n# e\nc\n");
  EXPECT_EQ(l.dump(), "if a : NL IN b NL DE c NL END");
  int comments = 0;
  for (const Trivia& t : l.result.trivia)
    if (t.kind == Trivia::Kind::Comment) ++comments;
  EXPECT_EQ(comments, 3);
}

TEST(Lexer, Brackets) {
  Lexed l = lex_text("x = (1,\n  2,\n\n# c\n      3)\ny\n");
  EXPECT_EQ(l.dump(), "x = ( N(1) , N(2) , N(3) ) NL y NL END");
  expect_error("x = [1, 2)\n", "closing parenthesis ')' does not match opening parenthesis '['", 1,
               9);
  expect_error("x = [1,\n 2)\n",
               "closing parenthesis ')' does not match opening parenthesis '[' on line 1", 2, 2);
  expect_error(")\n", "unmatched ')'", 1, 0);
  expect_error("(", "'(' was never closed", 1, 0);
  expect_error("x = (1,\n2", "'(' was never closed", 1, 4);
  expect_error(std::string(201, '('), "too many nested parentheses", 1, 200);
  EXPECT_FALSE(lex_text(std::string(200, '(') + std::string(200, ')')).result.error);
}

TEST(Lexer, HundredThousandNestedBrackets) {
  Lexed l = lex_text(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(error_of(l).message, "too many nested parentheses");
  Lexed m = lex_text(std::string(100000, '('));
  EXPECT_EQ(error_of(m).message, "too many nested parentheses");
}

TEST(Lexer, Continuation) {
  Lexed l = lex_text("x = 1 + \\\n    2\ny\n");
  EXPECT_EQ(l.dump(), "x = N(1) + N(2) NL y NL END");
  bool has_cont = false;
  for (const Trivia& t : l.result.trivia)
    if (t.kind == Trivia::Kind::Continuation) has_cont = true;
  EXPECT_TRUE(has_cont);
  expect_error("x = 1 + \\ 2\n", "unexpected character after line continuation character", 1, 9);
  expect_error("x = 1 +\\", "unexpected EOF while parsing", 1, 8);
  expect_error("a = 1\n  \\\n", "unexpected EOF while parsing", 2, 3);
  // The first backslash's column decides the indentation.
  EXPECT_EQ(lex_text("if 1:\n\\\n  x\n").dump(), "if N(1) : NL IN x NL DE END");
  EXPECT_EQ(lex_text("  \\\nx = 1\n").dump(), "IN x = N(1) NL DE END");
}

TEST(Lexer, LineEndings) {
  Lexed crlf = lex_text("if a:\r\n    b\r\n\r\nc\r\n");
  EXPECT_EQ(crlf.dump(), "if a : NL IN b NL DE c NL END");
  EXPECT_EQ(crlf.text(crlf.result.tokens[3]), "\r\n");
  EXPECT_EQ(crlf.result.tokens[5].line, 2u);
  Lexed cr = lex_text("if a:\r    b\r\rc\r");
  EXPECT_EQ(cr.dump(), "if a : NL IN b NL DE c NL END");
  EXPECT_EQ(cr.result.tokens[5].line, 2u);
  EXPECT_EQ(cr.result.tokens[8].line, 4u);
  EXPECT_EQ(cr.result.lines.starts.size(), 5u);
  // A CR ends a single-quoted string like LF.
  expect_error("x = 'a\rb'\n", "unterminated string literal (detected at line 1)", 1, 4);
  // Mixed.
  EXPECT_EQ(lex_text("a\rb\nc\r\nd").dump(), "a NL b NL c NL d NL END");
}

TEST(Lexer, EofWithoutNewline) {
  Lexed l = lex_text("if a:\n    b");
  EXPECT_EQ(l.dump(), "if a : NL IN b NL DE END");
  const Token& nl = l.result.tokens[6];
  EXPECT_EQ(nl.kind, Tok::Newline);
  EXPECT_EQ(nl.begin, nl.end);
  EXPECT_EQ(lex_text("x  # c").dump(), "x NL END");
  EXPECT_EQ(lex_text("x\n   ").dump(), "x NL END");
}

TEST(Lexer, FormFeed) {
  // A form feed resets the column count.
  EXPECT_EQ(lex_text("if a:\n    b\n\f\nc\n").dump(), "if a : NL IN b NL DE c NL END");
  EXPECT_EQ(lex_text("x = 1\n\f  y = 2\n").dump(), "x = N(1) NL IN y = N(2) NL DE END");
  EXPECT_EQ(lex_text("if a:\n    b\n    \fc\n").dump(), "if a : NL IN b NL DE c NL END");
}

TEST(Lexer, UnicodeIdentifiers) {
  Lexed l = lex_text("é = ﬁ + 名前 + a·b\n");
  EXPECT_EQ(l.dump(), "é = ﬁ + 名前 + a·b NL END");
  EXPECT_EQ(l.result.tokens[0].flags, kNonAscii);
  EXPECT_EQ(l.result.tokens[2].flags, kNonAscii);
  EXPECT_EQ(lex_text("abc").result.tokens[0].flags, 0);
  expect_error("a € b\n", "invalid character '€' (U+20AC)", 1, 2);
  expect_error("abc€\n", "invalid character '€' (U+20AC)", 1, 3);
  expect_error("€abc\n", "invalid character '€' (U+20AC)", 1, 0);
  expect_error("a\u00a0b\n", "invalid non-printable character U+00A0", 1, 1);
  expect_error(
      "a\x01"
      "b\n",
      "invalid non-printable character U+0001", 1, 1);
  expect_error("x = \x7f\n", "invalid non-printable character U+007F", 1, 4);
  // Column is in UTF-8 bytes.
  expect_error("é = €\n", "invalid character '€' (U+20AC)", 1, 5);
  // Combining marks cannot start an identifier.
  expect_error("\u0301x\n", "invalid character '\u0301' (U+0301)", 1, 0);
}

TEST(Lexer, ErrorTokenIsLast) {
  Lexed l = lex_text("x = 1\ny = 'abc\nz = 2\n");
  ASSERT_TRUE(l.result.error);
  EXPECT_EQ(l.result.tokens.back().kind, Tok::Error);
  EXPECT_EQ(l.result.error->line, 2u);
  EXPECT_EQ(l.result.error->col, 4u);
}

TEST(Lexer, UnterminatedAtEof) {
  for (const char* s : {"'", "\"\"\"", "f'", "f'''{", "f'{x", "rb'''a", "f'{'", "(", "f'{x:"}) {
    Lexed l = lex_text(s);
    EXPECT_TRUE(l.result.error) << s;
  }
}

TEST(Lexer, LineIndex) {
  Lexed l = lex_text("a\nbb\n\nccc");
  const LineIndex& li = l.result.lines;
  ASSERT_EQ(li.starts.size(), 4u);
  EXPECT_EQ(li.line_of(0), 1u);
  EXPECT_EQ(li.line_of(1), 1u);
  EXPECT_EQ(li.line_of(2), 2u);
  EXPECT_EQ(li.line_of(5), 3u);
  EXPECT_EQ(li.line_of(6), 4u);
  EXPECT_EQ(li.line_of(100), 4u);
  EXPECT_EQ(li.line_start(4), 6u);
}

TEST(Lexer, HundredMegabytesIsLinear) {
  // ~100 MB of realistic lines; must finish in linear time.
  const std::string line =
      "value = compute_something(alpha, 'a moderately long string literal ....', 12345)  # c\n";
  std::string text;
  const std::size_t target = 100u * 1000u * 1000u;
  text.reserve(target + line.size());
  while (text.size() < target) text += line;
  const std::size_t lines = text.size() / line.size();
  auto t0 = std::chrono::steady_clock::now();
  auto r = Source::from_utf8(std::move(text));
  ASSERT_TRUE(std::holds_alternative<Source>(r));
  LexResult l = lex(std::get<Source>(r));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(l.error);
  EXPECT_EQ(l.tokens.size(), lines * 11 + 1);
  EXPECT_EQ(l.lines.starts.size(), lines + 1);
  // Generous bound (debug builds on a loaded machine); quadratic would be hours.
  EXPECT_LT(secs, 120.0);
}

}  // namespace
}  // namespace gm

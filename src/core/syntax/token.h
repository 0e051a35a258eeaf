// Token kinds and the token record shared by the lexer and the parser.
//
// The lexer always tokenizes f-strings the PEP 701 way (FStringStart /
// FStringMiddle / FStringEnd with the replacement fields as ordinary tokens);
// the parser applies the pre-3.12 restrictions when asked for an older
// version. Comments and non-logical newlines are not tokens: they are kept
// as trivia beside the token stream so edits can preserve them.
#pragma once

#include <cstdint>
#include <string_view>

namespace gm {

// X(Kind, spelling) — spelling is the exact source text for operators and
// keywords, a description for the rest.
#define GM_TOKEN_KINDS(X)                                                 \
  X(EndMarker, "end of file")                                             \
  X(Name, "name")                                                         \
  X(Number, "number")                                                     \
  X(String, "string")                                                     \
  X(FStringStart, "f-string start")                                       \
  X(FStringMiddle, "f-string text")                                       \
  X(FStringEnd, "f-string end")                                           \
  X(Newline, "newline")                                                   \
  X(Indent, "indent")                                                     \
  X(Dedent, "dedent")                                                     \
  X(LPar, "(")                                                            \
  X(RPar, ")")                                                            \
  X(LSqb, "[")                                                            \
  X(RSqb, "]")                                                            \
  X(LBrace, "{")                                                          \
  X(RBrace, "}")                                                          \
  X(Colon, ":")                                                           \
  X(Comma, ",")                                                           \
  X(Semi, ";")                                                            \
  X(Plus, "+")                                                            \
  X(Minus, "-")                                                           \
  X(Star, "*")                                                            \
  X(Slash, "/")                                                           \
  X(VBar, "|")                                                            \
  X(Amper, "&")                                                           \
  X(Less, "<")                                                            \
  X(Greater, ">")                                                         \
  X(Equal, "=")                                                           \
  X(Dot, ".")                                                             \
  X(Percent, "%")                                                         \
  X(EqEqual, "==")                                                        \
  X(NotEqual, "!=")                                                       \
  X(LessEqual, "<=")                                                      \
  X(GreaterEqual, ">=")                                                   \
  X(Tilde, "~")                                                           \
  X(Circumflex, "^")                                                      \
  X(LeftShift, "<<")                                                      \
  X(RightShift, ">>")                                                     \
  X(DoubleStar, "**")                                                     \
  X(PlusEqual, "+=")                                                      \
  X(MinEqual, "-=")                                                       \
  X(StarEqual, "*=")                                                      \
  X(SlashEqual, "/=")                                                     \
  X(PercentEqual, "%=")                                                   \
  X(AmperEqual, "&=")                                                     \
  X(VBarEqual, "|=")                                                      \
  X(CircumflexEqual, "^=")                                                \
  X(LeftShiftEqual, "<<=")                                                \
  X(RightShiftEqual, ">>=")                                               \
  X(DoubleStarEqual, "**=")                                               \
  X(DoubleSlash, "//")                                                    \
  X(DoubleSlashEqual, "//=")                                              \
  X(At, "@")                                                              \
  X(AtEqual, "@=")                                                        \
  X(RArrow, "->")                                                         \
  X(Ellipsis, "...")                                                      \
  X(ColonEqual, ":=")                                                     \
  X(Exclamation, "!")                                                     \
  /* hard keywords (3.8-3.13) */                                          \
  X(KwFalse, "False")                                                     \
  X(KwNone, "None")                                                       \
  X(KwTrue, "True")                                                       \
  X(KwAnd, "and")                                                         \
  X(KwAs, "as")                                                           \
  X(KwAssert, "assert")                                                   \
  X(KwAsync, "async")                                                     \
  X(KwAwait, "await")                                                     \
  X(KwBreak, "break")                                                     \
  X(KwClass, "class")                                                     \
  X(KwContinue, "continue")                                               \
  X(KwDef, "def")                                                         \
  X(KwDel, "del")                                                         \
  X(KwElif, "elif")                                                       \
  X(KwElse, "else")                                                       \
  X(KwExcept, "except")                                                   \
  X(KwFinally, "finally")                                                 \
  X(KwFor, "for")                                                         \
  X(KwFrom, "from")                                                       \
  X(KwGlobal, "global")                                                   \
  X(KwIf, "if")                                                           \
  X(KwImport, "import")                                                   \
  X(KwIn, "in")                                                           \
  X(KwIs, "is")                                                           \
  X(KwLambda, "lambda")                                                   \
  X(KwNonlocal, "nonlocal")                                               \
  X(KwNot, "not")                                                         \
  X(KwOr, "or")                                                           \
  X(KwPass, "pass")                                                       \
  X(KwRaise, "raise")                                                     \
  X(KwReturn, "return")                                                   \
  X(KwTry, "try")                                                         \
  X(KwWhile, "while")                                                     \
  X(KwWith, "with")                                                       \
  X(KwYield, "yield")                                                     \
  /* a character CPython lexes as an OP no rule accepts ($, ?, `): the */ \
  /* parser reports "invalid syntax" there */                             \
  X(Unknown, "unknown character")                                         \
  /* the lexer stopped here; the error is in Lexer::error() */            \
  X(Error, "error")

enum class Tok : std::uint8_t {
#define GM_X(kind, spelling) kind,
  GM_TOKEN_KINDS(GM_X)
#undef GM_X
};

std::string_view token_spelling(Tok kind);

// One token. Offsets are byte offsets into Source::text() (UTF-8). Lines are
// 1-based; a column is `begin - line_start(line)`, a UTF-8 byte offset, the
// same unit as CPython's col_offset.
struct Token {
  Tok kind = Tok::EndMarker;
  std::uint8_t flags = 0;  // TokenFlags below
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint32_t line = 0;
  std::uint32_t end_line = 0;
};

enum TokenFlags : std::uint8_t {
  // String / FStringStart: the prefix letters (any case).
  kPrefixRaw = 1u << 0,
  kPrefixBytes = 1u << 1,
  kPrefixUnicode = 1u << 2,  // u'' — Constant(kind='u')
  kPrefixFormat = 1u << 3,
  kTripleQuoted = 1u << 4,
  // Name: the identifier has non-ASCII characters (needs NFKC).
  kNonAscii = 1u << 5,
  // String: the body has a backslash or a carriage return, so its value is
  // not simply its source text (without it the parser skips decoding).
  kEscapes = 1u << 6,
};

// A comment or a non-logical line break, kept beside the token stream.
struct Trivia {
  enum class Kind : std::uint8_t { Comment, NonLogicalNewline, Continuation };
  Kind kind;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

}  // namespace gm

// The lexer: Python 3.8–3.13 tokens from a Source.
//
// Modelled on CPython 3.12+'s tokenizer (Parser/lexer/lexer.c); token kinds
// and error messages follow 3.12/3.13. Version differences are the
// parser's job.
//
// Layout tokens
//   Newline   the line break ending a logical line ("\n", "\r\n" or "\r");
//             zero-width at EOF when the last line has no line break.
//             Blank / comment-only lines and breaks inside brackets are not
//             tokens (Trivia::NonLogicalNewline).
//   Indent    spans the line's leading whitespace [line start, first char).
//   Dedent    zero-width at the first character of the dedented line (at
//             EOF: zero-width at the end). One per level closed.
//   EndMarker zero-width at the end of the text.
//   Unknown   '$', '?', '`' (CPython makes an OP no rule accepts: "invalid
//             syntax" at that token).
//   "<>" is lexed as NotEqual, as CPython does; the parser must reject it
//   (check the text) with "invalid syntax".
// Hard keywords are their own kinds (KwIf, ...); soft keywords (match,
// case, type, _) are Name. Name tokens with non-ASCII characters carry
// kNonAscii (normalise with literals::normalize_identifier). String tokens
// span prefix + quotes + body and carry prefix flags + kTripleQuoted, and
// kEscapes when the body has a backslash or CR (else its value is its text);
// decode with literals::decode_string.
//
// f-strings (PEP 701 tokens, for every target version)
//   FStringStart   prefix + opening quote(s), e.g. rf'''. flags: prefix
//                  flags | kPrefixFormat (| kTripleQuoted).
//   FStringMiddle  literal text, as source bytes [begin, end). Never empty.
//                  flags: the same as its FStringStart (kPrefixRaw tells how
//                  to decode it: literals::decode_fstring_middle).
//                  Split like CPython 3.12: for a doubled brace "{{" / "}}"
//                  the middle ENDS AFTER THE FIRST BRACE and the second
//                  brace belongs to no token (the next middle starts after
//                  it). So f"a{{b}}c" gives middles "a{", "b}", "c", and
//                  each middle's own text decodes with no brace collapsing.
//                  A middle also ends after a \N{...} escape (as in
//                  CPython). Consecutive middles make one Constant.
//   replacement field: LBrace, the expression's ordinary tokens, then
//                  optionally Equal (the `=` of f"{x=}": the expression text
//                  is the source between the `{` and the `=`, whitespace
//                  included), Exclamation + Name (conversion), Colon + format
//                  spec, then RBrace.
//   format spec:   after that Colon: FStringMiddle tokens and nested
//                  replacement fields ({ expr ... }), up to the RBrace. An
//                  empty spec (f"{x:}") has no middle at all.
//   FStringEnd     the closing quote(s).
// Nested f-strings and quote reuse (f"{d["k"]}") tokenize as in 3.12. For
// the pre-3.12 restrictions the parser can inspect the source between the
// FStringStart and FStringEnd offsets: a backslash or '#' inside a
// replacement field, a reused quote character, or a newline in a
// single-quoted f-string's expression.
//
// Errors
//   Lexing stops at the first error: LexResult::error is set and the token
//   stream ends with a zero-width Error token at the error position.
//   SyntaxError::col is CPython's SyntaxError.offset - 1 as a UTF-8 byte
//   column (end_col likewise from end_offset). Unclosed brackets at EOF give
//   "'(' was never closed" positioned at the opening bracket, the Error
//   token at EOF — CPython reports that only if parsing did not fail
//   earlier (or failed with a generic "invalid syntax" on a later line).
//   Tokenizer errors found after a generic parser "invalid syntax" replace
//   it in CPython (_PyPegen_tokenize_full_source_to_check_for_errors): the
//   whole file is lexed up front here, so the parser can do the same.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "syntax/source.h"
#include "syntax/syntax_error.h"
#include "syntax/token.h"

namespace gm {

// Line starts: line_starts[i] is the byte offset where line i+1 begins
// (line 1 begins at Source::body_offset()). A column is offset - line start.
struct LineIndex {
  std::vector<std::uint32_t> starts;
  std::uint32_t line_start(std::uint32_t line) const { return starts[line - 1]; }
  // 1-based line containing the byte offset (binary search).
  std::uint32_t line_of(std::uint32_t offset) const;
};

struct LexResult {
  // Significant tokens, ending with EndMarker (or Error when lexing stopped).
  std::vector<Token> tokens;
  std::vector<Trivia> trivia;  // comments, blank-line and continuation breaks
  LineIndex lines;
  std::optional<SyntaxError> error;  // set iff tokens.back().kind == Tok::Error
};

LexResult lex(const Source& source);

}  // namespace gm

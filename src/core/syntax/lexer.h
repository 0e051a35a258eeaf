// The lexer: Python 3.8–3.13 tokens from a Source.
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

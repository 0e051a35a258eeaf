// Line and style queries over source text, for building edits that keep the
// file's formatting: newline style, indent unit, quote style, line bounds,
// a statement's indentation.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "syntax/lexer.h"

namespace gm::edits {

enum class NewlineStyle : std::uint8_t { LF, CRLF, CR };

// The file's style, as Ruff's Stylist: detected once per file.
struct Stylist {
  NewlineStyle newline = NewlineStyle::LF;  // of the first line break; LF if none
  std::string indent_unit = "    ";         // of the first indented block
  char quote = '"';                         // of the first single-quoted-style string

  std::string_view newline_str() const;
  static Stylist detect(std::string_view text, const LexResult& lexed);
};

NewlineStyle detect_newline(std::string_view text);
std::string_view newline_str(NewlineStyle style);

// Length of the line break starting at `offset` (0, 1 or 2).
std::size_t line_break_len(std::string_view text, std::size_t offset);
// Start of the line containing `offset` (a \n or a lone \r ends a line);
// line 1 starts after a UTF-8 BOM.
std::uint32_t line_start(std::string_view text, std::uint32_t offset);
// End of the line containing `offset`, before its line break.
std::uint32_t line_end(std::string_view text, std::uint32_t offset);
// End of the line containing `offset`, after its line break (if any).
std::uint32_t full_line_end(std::string_view text, std::uint32_t offset);

// Leading whitespace of the line containing `offset`.
std::string_view line_indentation(std::string_view text, std::uint32_t offset);
// The indentation of a statement starting at `begin` when it is the first
// thing on its line; nullopt when something precedes it (`a; b`, `if x: b`).
std::optional<std::string_view> statement_indentation(std::string_view text, std::uint32_t begin);
// True when only whitespace and an optional comment follow `end` on its line.
bool only_trivia_after(std::string_view text, std::uint32_t end);

// An expression's text that spans lines (inside brackets), on one line: each
// line break and the indentation after it become one space, none after an
// opening or before a closing bracket. The caller makes sure no comment,
// triple-quoted string or backslash continuation is inside.
std::string join_lines(std::string_view expr);

// Re-indents `lines`, written with four spaces (or a tab) per level, into the
// file's indent unit with `indent` prefixed to every line but the first.
// Lines are joined with the file's newline; no trailing newline. Lines must
// not be inside multi-line strings (their text would be re-indented).
std::string render_lines(std::span<const std::string> lines, std::string_view indent,
                         const Stylist& style);

// Quotes `value` as a Python string literal in the file's quote style
// (switching quotes when the preferred one occurs in the value), escaping
// backslashes, the quote and control characters.
std::string quote_string(std::string_view value, const Stylist& style);

}  // namespace gm::edits

// Source text as the lexer sees it: bytes decoded per PEP 263 / PEP 3120.
//
// text() is always UTF-8. A UTF-8 BOM is kept at the front (body_offset()
// skips it, so line 1 starts after it); a latin-1 (or other single-byte
// cookie) file is transcoded to UTF-8 so offsets are UTF-8 byte offsets, as
// CPython's col_offset are. Line endings are left as they are (LF, CRLF, CR);
// the lexer treats all three as a line break.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "syntax/syntax_error.h"

namespace gm {

class Source {
 public:
  // Decode raw file bytes. Errors (invalid UTF-8, unknown cookie, encoding
  // mismatch with the BOM, NUL bytes) come back as a SyntaxError.
  static std::variant<Source, SyntaxError> decode(std::string bytes);
  // Source that is already known to be UTF-8 text (from a Python str).
  static std::variant<Source, SyntaxError> from_utf8(std::string text);

  std::string_view text() const { return text_; }
  std::uint32_t body_offset() const { return body_offset_; }
  // The declared encoding, normalised ("utf-8", "latin-1", ...).
  const std::string& encoding() const { return encoding_; }
  bool had_bom() const { return body_offset_ != 0; }

 private:
  std::string text_;
  std::string encoding_ = "utf-8";
  std::uint32_t body_offset_ = 0;
};

}  // namespace gm

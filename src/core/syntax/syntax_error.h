// A syntax error as data: never thrown across the library boundary.
#pragma once

#include <cstdint>
#include <string>

namespace gm {

struct SyntaxError {
  // "SyntaxError", "IndentationError" or "TabError", as CPython names them.
  std::string kind = "SyntaxError";
  std::string message;
  // 1-based line; 0-based UTF-8 byte column (CPython's col_offset unit).
  std::uint32_t line = 0;
  std::uint32_t col = 0;
  std::uint32_t end_line = 0;
  std::uint32_t end_col = 0;
};

}  // namespace gm

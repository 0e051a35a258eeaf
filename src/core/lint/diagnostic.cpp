#include "lint/diagnostic.h"

#include <algorithm>

namespace gm::lint {

namespace {

std::uint32_t count_chars(std::string_view s) {
  std::uint32_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

void place(std::string_view text, const LineIndex& lines, std::uint32_t offset, std::uint32_t& line,
           std::uint32_t& col, std::uint32_t& char_col) {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text.size()));
  if (lines.starts.empty()) {
    line = 1;
    col = offset;
  } else {
    line = lines.line_of(offset);
    const std::uint32_t start = lines.line_start(line);
    col = offset >= start ? offset - start : 0;
  }
  char_col = count_chars(text.substr(offset - col, col)) + 1;
}

}  // namespace

Location locate(std::string_view text, const LineIndex& lines, std::uint32_t begin,
                std::uint32_t end) {
  Location loc;
  place(text, lines, begin, loc.line, loc.col, loc.char_col);
  place(text, lines, end, loc.end_line, loc.end_col, loc.end_char_col);
  return loc;
}

}  // namespace gm::lint

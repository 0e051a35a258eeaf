// `# graphmend: ignore[GM101, GM2]` and bare `# graphmend: ignore`.
//
// Found in comments (LexResult::trivia), so a `#` inside a string never
// counts. The directive may follow other text in the comment
// (`# noqa: E501  # graphmend: ignore[GM1]`). Codes are selectors, as on the
// command line: GM2 suppresses GM2xx. A directive on line L suppresses
// diagnostics that start on L, and diagnostics inside a statement whose
// first line is L (so one comment on an `if` line covers its test).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/lexer.h"

namespace gm::lint {

struct Suppression {
  std::uint32_t line = 0;  // 1-based line of the comment
  std::uint32_t begin = 0;  // the directive's byte range
  std::uint32_t end = 0;
  std::vector<std::string> codes;  // empty: every code (bare form)
  std::vector<bool> used;          // per code (bare form: one entry)
};

struct UnusedSuppression {
  std::uint32_t line = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::vector<std::string> codes;  // the unused codes; empty: the bare form
};

class Suppressions {
 public:
  static Suppressions parse(std::string_view text, const LexResult& lexed);

  // Is `code` suppressed on this line? Marks the directive used.
  bool suppresses(std::uint32_t line, std::string_view code);
  const std::vector<Suppression>& items() const { return items_; }
  // Directives (or codes in them) that suppressed nothing.
  std::vector<UnusedSuppression> unused() const;

 private:
  std::vector<Suppression> items_;  // sorted by line
};

// Parses one comment's text ("# ..."); false when it has no directive.
bool parse_suppression_comment(std::string_view comment, std::vector<std::string>& codes,
                               std::size_t& directive_begin, std::size_t& directive_end);

}  // namespace gm::lint

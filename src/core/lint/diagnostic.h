// A finding of one rule, with its optional fix.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edits/edit.h"
#include "syntax/lexer.h"

namespace gm::lint {

// Where a diagnostic is, in both conventions:
//  - line/end_line: 1-based.
//  - col/end_col: 0-based UTF-8 byte offset in the line, CPython's
//    col_offset unit (what `ast` and tracebacks use).
//  - char_col/end_char_col: 1-based count of Unicode code points, what
//    editors and Ruff's text output show ("file.py:3:5").
struct Location {
  std::uint32_t line = 0;
  std::uint32_t col = 0;
  std::uint32_t char_col = 0;
  std::uint32_t end_line = 0;
  std::uint32_t end_col = 0;
  std::uint32_t end_char_col = 0;
};

struct Diagnostic {
  std::string code;  // "GM101"; filled in by the engine from the rule
  std::uint32_t begin = 0;  // byte range in Source::text()
  std::uint32_t end = 0;
  Location loc;             // filled in by the engine
  std::string message;      // what is wrong, one line
  std::string why;          // why Dynamo breaks (or falls back) there
  std::optional<edits::Fix> fix;
  // When the rule found the problem but declined to fix it: which legality
  // precondition failed ("branch values are not proven tensors"). Empty
  // otherwise.
  std::string declined_reason;

  bool fixable() const { return fix.has_value(); }
  // The fix's applicability; DisplayOnly when there is no fix.
  edits::Applicability applicability() const {
    return fix ? fix->applicability : edits::Applicability::DisplayOnly;
  }
};

// Computes `loc` from byte offsets.
Location locate(std::string_view text, const LineIndex& lines, std::uint32_t begin,
                std::uint32_t end);

// Where rules put their findings. The engine stamps code and location.
class DiagnosticSink {
 public:
  Diagnostic& report(std::uint32_t begin, std::uint32_t end, std::string message) {
    Diagnostic d;
    d.begin = begin;
    d.end = end;
    d.message = std::move(message);
    items_.push_back(std::move(d));
    return items_.back();
  }
  std::vector<Diagnostic>& items() { return items_; }
  std::vector<Diagnostic> take() { return std::move(items_); }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace gm::lint

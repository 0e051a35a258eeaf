#include "edits/text.h"

#include <cstdio>
#include <span>

namespace gm::edits {

std::string_view newline_str(NewlineStyle style) {
  switch (style) {
    case NewlineStyle::LF: return "\n";
    case NewlineStyle::CRLF: return "\r\n";
    case NewlineStyle::CR: return "\r";
  }
  return "\n";
}

std::string_view Stylist::newline_str() const { return edits::newline_str(newline); }

NewlineStyle detect_newline(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') return NewlineStyle::LF;
    if (text[i] == '\r')
      return i + 1 < text.size() && text[i + 1] == '\n' ? NewlineStyle::CRLF : NewlineStyle::CR;
  }
  return NewlineStyle::LF;
}

Stylist Stylist::detect(std::string_view text, const LexResult& lexed) {
  Stylist s;
  s.newline = detect_newline(text);
  for (const Token& t : lexed.tokens) {
    if (t.kind == Tok::Indent && t.end > t.begin) {
      s.indent_unit = std::string(text.substr(t.begin, t.end - t.begin));
      break;
    }
  }
  for (const Token& t : lexed.tokens) {
    if ((t.kind != Tok::String && t.kind != Tok::FStringStart) || (t.flags & kTripleQuoted))
      continue;
    // Skip the prefix letters: the first quote character is the style.
    for (std::uint32_t i = t.begin; i < t.end; ++i) {
      if (text[i] == '\'' || text[i] == '"') {
        s.quote = text[i];
        return s;
      }
    }
  }
  return s;
}

std::size_t line_break_len(std::string_view text, std::size_t offset) {
  if (offset >= text.size()) return 0;
  if (text[offset] == '\n') return 1;
  if (text[offset] == '\r') return offset + 1 < text.size() && text[offset + 1] == '\n' ? 2 : 1;
  return 0;
}

std::uint32_t line_start(std::string_view text, std::uint32_t offset) {
  std::uint32_t i = offset;
  while (i > 0 && text[i - 1] != '\n' && text[i - 1] != '\r') --i;
  // Line 1 begins after a BOM (as LineIndex has it): never edit the BOM away.
  if (i == 0 && offset >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") return 3;
  return i;
}

std::uint32_t line_end(std::string_view text, std::uint32_t offset) {
  std::uint32_t i = offset;
  while (i < text.size() && text[i] != '\n' && text[i] != '\r') ++i;
  return i;
}

std::uint32_t full_line_end(std::string_view text, std::uint32_t offset) {
  const std::uint32_t e = line_end(text, offset);
  return e + static_cast<std::uint32_t>(line_break_len(text, e));
}

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }
}  // namespace

std::string_view line_indentation(std::string_view text, std::uint32_t offset) {
  const std::uint32_t b = line_start(text, offset);
  std::uint32_t i = b;
  while (i < text.size() && is_space(text[i])) ++i;
  return text.substr(b, i - b);
}

std::optional<std::string_view> statement_indentation(std::string_view text, std::uint32_t begin) {
  const std::uint32_t b = line_start(text, begin);
  for (std::uint32_t i = b; i < begin; ++i)
    if (!is_space(text[i])) return std::nullopt;
  std::string_view indent = text.substr(b, begin - b);
  return indent;
}

bool only_trivia_after(std::string_view text, std::uint32_t end) {
  std::uint32_t i = end;
  while (i < text.size() && is_space(text[i])) ++i;
  return i >= text.size() || text[i] == '#' || text[i] == '\n' || text[i] == '\r';
}

std::string join_lines(std::string_view expr) {
  std::string out;
  out.reserve(expr.size());
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '\n' && expr[i] != '\r') {
      out += expr[i];
      continue;
    }
    while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
    while (i + 1 < expr.size() && is_space(expr[i + 1])) ++i;
    const char next = i + 1 < expr.size() ? expr[i + 1] : ')';
    const char prev = out.empty() ? '(' : out.back();
    if (prev != '(' && prev != '[' && prev != '{' && next != ')' && next != ']' && next != '}')
      out += ' ';
  }
  return out;
}

std::string render_lines(std::span<const std::string> lines, std::string_view indent,
                         const Stylist& style) {
  std::string out;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (n > 0) out += style.newline_str();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;  // blank
    // Count levels: a tab or four spaces each; leftover spaces kept as is.
    std::size_t i = 0, levels = 0, spaces = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
      if (line[i] == '\t') {
        ++levels;
        spaces = 0;
      } else if (++spaces == 4) {
        ++levels;
        spaces = 0;
      }
      ++i;
    }
    if (n > 0) out += indent;
    for (std::size_t l = 0; l < levels; ++l) out += style.indent_unit;
    out.append(spaces, ' ');
    out += line.substr(i);
  }
  return out;
}

std::string quote_string(std::string_view value, const Stylist& style) {
  char q = style.quote;
  const char other = q == '"' ? '\'' : '"';
  if (value.find(q) != std::string_view::npos && value.find(other) == std::string_view::npos)
    q = other;
  std::string out(1, q);
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\')
      out += "\\\\";
    else if (c == q) {
      out += '\\';
      out += c;
    } else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else
      out += c;
  }
  out += q;
  return out;
}

}  // namespace gm::edits

#include "lint/suppression.h"

#include <algorithm>

#include "lint/selection.h"

namespace gm::lint {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\f'; }

}  // namespace

bool parse_suppression_comment(std::string_view c, std::vector<std::string>& codes,
                               std::size_t& directive_begin, std::size_t& directive_end) {
  codes.clear();
  static constexpr std::string_view kKey = "graphmend:";
  for (std::size_t hash = c.find('#'); hash != std::string_view::npos;
       hash = c.find('#', hash + 1)) {
    std::size_t i = hash + 1;
    while (i < c.size() && is_ws(c[i])) ++i;
    if (c.substr(i, kKey.size()) != kKey) continue;
    i += kKey.size();
    while (i < c.size() && is_ws(c[i])) ++i;
    if (c.substr(i, 6) != "ignore") continue;
    i += 6;
    if (i >= c.size() || is_ws(c[i]) || c[i] == '#') {  // bare form
      directive_begin = hash;
      directive_end = i;
      return true;
    }
    if (c[i] != '[') continue;
    const std::size_t close = c.find(']', i);
    if (close == std::string_view::npos) continue;
    for (auto& s : split_selectors(c.substr(i + 1, close - i - 1)))
      if (is_valid_selector(s)) codes.push_back(std::move(s));
    if (codes.empty()) continue;  // `ignore[]` / nothing valid: not a directive
    directive_begin = hash;
    directive_end = close + 1;
    return true;
  }
  return false;
}

Suppressions Suppressions::parse(std::string_view text, const LexResult& lexed) {
  Suppressions out;
  for (const Trivia& t : lexed.trivia) {
    if (t.kind != Trivia::Kind::Comment) continue;
    Suppression s;
    std::size_t b = 0, e = 0;
    if (!parse_suppression_comment(text.substr(t.begin, t.end - t.begin), s.codes, b, e)) continue;
    s.line = lexed.lines.starts.empty() ? 1 : lexed.lines.line_of(t.begin);
    s.begin = t.begin + static_cast<std::uint32_t>(b);
    s.end = t.begin + static_cast<std::uint32_t>(e);
    s.used.assign(std::max<std::size_t>(s.codes.size(), 1), false);
    out.items_.push_back(std::move(s));
  }
  return out;
}

bool Suppressions::suppresses(std::uint32_t line, std::string_view code) {
  auto it = std::lower_bound(items_.begin(), items_.end(), line,
                             [](const Suppression& s, std::uint32_t l) { return s.line < l; });
  bool hit = false;
  for (; it != items_.end() && it->line == line; ++it) {
    if (it->codes.empty()) {
      it->used[0] = true;
      hit = true;
      continue;
    }
    for (std::size_t i = 0; i < it->codes.size(); ++i) {
      if (code.substr(0, it->codes[i].size()) == it->codes[i] || it->codes[i] == "ALL") {
        it->used[i] = true;
        hit = true;
      }
    }
  }
  return hit;
}

std::vector<UnusedSuppression> Suppressions::unused() const {
  std::vector<UnusedSuppression> out;
  for (const auto& s : items_) {
    UnusedSuppression u{s.line, s.begin, s.end, {}};
    bool any = false;
    if (s.codes.empty()) {
      any = !s.used[0];
    } else {
      for (std::size_t i = 0; i < s.codes.size(); ++i)
        if (!s.used[i]) {
          u.codes.push_back(s.codes[i]);
          any = true;
        }
    }
    if (any) out.push_back(std::move(u));
  }
  return out;
}

}  // namespace gm::lint

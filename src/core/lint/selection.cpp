#include "lint/selection.h"

namespace gm::lint {

bool is_valid_selector(std::string_view s) {
  if (s == "ALL") return true;
  if (s.size() < 2 || s.size() > 5 || s.substr(0, 2) != "GM") return false;
  for (char c : s.substr(2))
    if (c < '0' || c > '9') return false;
  return true;
}

std::vector<std::string> split_selectors(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : list) {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::optional<RuleSelection> RuleSelection::parse(std::string_view select, std::string_view ignore,
                                                  std::string* bad) {
  RuleSelection sel;
  sel.select = split_selectors(select);
  sel.ignore = split_selectors(ignore);
  for (const auto* list : {&sel.select, &sel.ignore})
    for (const auto& s : *list)
      if (!is_valid_selector(s)) {
        if (bad) *bad = s;
        return std::nullopt;
      }
  return sel;
}

namespace {

// Specificity of the best selector in `list` matching `code`; -1: none.
// "ALL" has specificity 0, a prefix its length.
int best_match(const std::vector<std::string>& list, std::string_view code) {
  int best = -1;
  for (const auto& s : list) {
    int spec = -1;
    if (s == "ALL")
      spec = 0;
    else if (code.substr(0, s.size()) == s)
      spec = static_cast<int>(s.size());
    if (spec > best) best = spec;
  }
  return best;
}

}  // namespace

bool RuleSelection::enabled(std::string_view code) const {
  const int sel = select.empty() ? 0 : best_match(select, code);
  if (sel < 0) return false;
  return best_match(ignore, code) < sel;
}

}  // namespace gm::lint

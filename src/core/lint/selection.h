// --select / --ignore, as Ruff resolves them.
//
// A selector is "ALL" or a code prefix: "GM" (every rule), "GM1" (GM1xx),
// "GM10" (GM10x), "GM101" (one rule). A code is enabled when some select
// selector matches it and no ignore selector matches it at least as
// specifically: `--select GM1 --ignore GM101` enables GM1xx but GM101;
// `--select GM101 --ignore GM1` enables GM101 only (the more specific select
// wins); with equal specificity ignore wins. No select selectors means ALL.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gm::lint {

// Is `s` a well-formed selector ("ALL", or "GM" followed by up to 3 digits)?
bool is_valid_selector(std::string_view s);

// Splits "GM1, GM201" (commas and/or whitespace) into selectors.
std::vector<std::string> split_selectors(std::string_view list);

struct RuleSelection {
  std::vector<std::string> select;  // empty: ALL
  std::vector<std::string> ignore;

  // From comma-separated lists; nullopt (and the bad selector in *bad) when
  // one is malformed.
  static std::optional<RuleSelection> parse(std::string_view select, std::string_view ignore,
                                            std::string* bad = nullptr);
  bool enabled(std::string_view code) const;
};

}  // namespace gm::lint

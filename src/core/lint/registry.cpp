#include "lint/registry.h"

#include <vector>

#include "rules/rules.h"

namespace gm::lint {

// The shipped rules come from rules/rules.def (one line per rule, sorted by
// code); built on first use, so there is no static-initialisation order.
std::span<const Rule* const> rules() {
  static const std::vector<const Rule*> all = [] {
    std::vector<const Rule*> v;
#define GM_RULE(name) v.push_back(&::gm::rules::name());
#include "rules/rules.def"
    return v;
  }();
  return {all.data(), all.size()};
}

const Rule* find_rule(std::span<const Rule* const> in, std::string_view code) {
  for (const Rule* r : in)
    if (r->code() == code) return r;
  return nullptr;
}

const Rule* find_rule(std::string_view code) { return find_rule(rules(), code); }

}  // namespace gm::lint

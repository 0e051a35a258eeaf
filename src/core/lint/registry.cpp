#include "lint/registry.h"

#include <array>

namespace gm::lint {

namespace {

// One line per rule, sorted by code, e.g.
//   const Rule& gm101_tensor_truthiness();
// declared in the rule's header and listed below. Empty until the first
// rules land.
const std::array<const Rule*, 0> kRules{};

}  // namespace

std::span<const Rule* const> rules() { return {kRules.data(), kRules.size()}; }

const Rule* find_rule(std::span<const Rule* const> in, std::string_view code) {
  for (const Rule* r : in)
    if (r->code() == code) return r;
  return nullptr;
}

const Rule* find_rule(std::string_view code) { return find_rule(rules(), code); }

}  // namespace gm::lint

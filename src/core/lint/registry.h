// The shipped rules: one explicit list in registry.cpp (no static
// registration, so no static-initialisation-order questions). Adding a rule =
// adding its file and one line there.
#pragma once

#include <span>
#include <string_view>

#include "lint/rule.h"

namespace gm::lint {

// Every shipped rule, sorted by code. Rule objects live for the program.
std::span<const Rule* const> rules();

// The rule with exactly this code, or null.
const Rule* find_rule(std::string_view code);
const Rule* find_rule(std::span<const Rule* const> in, std::string_view code);

}  // namespace gm::lint

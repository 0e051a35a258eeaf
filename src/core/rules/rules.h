// Declarations of the shipped rules (listed in rules.def).
#pragma once

#include "lint/rule.h"

namespace gm::rules {

#define GM_RULE(name) const lint::Rule& name();
#include "rules/rules.def"

}  // namespace gm::rules

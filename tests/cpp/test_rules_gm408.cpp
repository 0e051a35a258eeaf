// GM408 (a loop over a tensor of sizes, handed the Python list the tensor was
// built from). Its fixture snapshots under tests/fixtures/rules/GM408 run in
// test_rule_fixtures.cpp (harness: rule_fixture_harness.h; the fix is unsafe,
// so each case's snapshot of the fixed text is <case>.unsafe.fixed.py). The
// torch side (no break, same outputs on fresh shapes) is
// tests/python/test_rules_gm4_torch.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

TEST(GM408Rule, RegisteredWithDocumentation) {
  const lint::Rule* r = rule_fixtures::rule_for("GM408");
  ASSERT_NE(r, nullptr);
  for (const char* section : {"## Why Dynamo breaks there", "GB0033", "unsafe"})
    EXPECT_NE(r->documentation().find(section), std::string_view::npos) << section;
}

}  // namespace
}  // namespace gm::rules

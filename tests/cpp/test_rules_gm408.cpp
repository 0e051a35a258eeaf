// GM408 (a loop over a tensor of sizes, handed the Python list the tensor was
// built from): fixture snapshots under tests/fixtures/rules/GM408 (harness:
// rule_fixture_harness.h; the fix is unsafe, so each case's snapshot of the
// fixed text is <case>.unsafe.fixed.py). The torch side (no break, same
// outputs on fresh shapes) is tests/python/test_rules_gm4_torch.py.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

class Gm408Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Gm408Fixture, Snapshot) { rule_fixtures::check_snapshot(GetParam()); }

INSTANTIATE_TEST_SUITE_P(GM408, Gm408Fixture,
                         ::testing::ValuesIn(rule_fixtures::fixture_inputs({"GM408"})),
                         rule_fixtures::case_name);

TEST(GM408Rule, RegisteredWithDocumentation) {
  const lint::Rule* r = rule_fixtures::rule_for("GM408");
  ASSERT_NE(r, nullptr);
  for (const char* section : {"## What it detects", "## Why Dynamo breaks there", "## The rewrite",
                              "## When it declines", "## Example", "GB0033", "unsafe"})
    EXPECT_NE(r->documentation().find(section), std::string_view::npos) << section;
}

}  // namespace
}  // namespace gm::rules

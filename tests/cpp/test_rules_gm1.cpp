// GM101/GM102 (data-dependent `if` and conditional expressions, predicated
// with graphmend.runtime.where): fixture snapshots under
// tests/fixtures/rules/GM101 and GM102 (harness: rule_fixture_harness.h).
// The torch side (one graph, same outputs, gradients, Inductor) is
// tests/python/test_rules_gm1_torch.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

std::vector<std::string> fixture_inputs() {
  return rule_fixtures::fixture_inputs({"GM101", "GM102", "GM103", "GM104", "GM105"});
}

class Gm1Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Gm1Fixture, Snapshot) { rule_fixtures::check_snapshot(GetParam()); }

INSTANTIATE_TEST_SUITE_P(GM1, Gm1Fixture, ::testing::ValuesIn(fixture_inputs()),
                         rule_fixtures::case_name);

TEST(GM1Rules, RegisteredWithDocumentation) {
  for (const char* code : {"GM101", "GM102", "GM103", "GM104", "GM105"}) {
    const lint::Rule* r = rule_fixtures::rule_for(code);
    ASSERT_NE(r, nullptr) << code;
    for (const char* section : {"## What it detects", "## Why Dynamo breaks there",
                                "## The rewrite", "## When it declines", "## Example", "GB0170"})
      EXPECT_NE(r->documentation().find(section), std::string_view::npos) << code << section;
  }
}

}  // namespace
}  // namespace gm::rules

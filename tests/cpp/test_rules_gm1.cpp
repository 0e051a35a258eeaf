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
  return rule_fixtures::fixture_inputs({"GM101", "GM102", "GM103", "GM104"});
}

class Gm1Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Gm1Fixture, Snapshot) { rule_fixtures::check_snapshot(GetParam()); }

INSTANTIATE_TEST_SUITE_P(GM1, Gm1Fixture, ::testing::ValuesIn(fixture_inputs()),
                         rule_fixtures::case_name);

TEST(GM1Rules, RegisteredWithDocumentation) {
  for (const char* code : {"GM101", "GM102", "GM103", "GM104"}) {
    const lint::Rule* r = rule_fixtures::rule_for(code);
    ASSERT_NE(r, nullptr) << code;
    for (const char* section : {"## What it detects", "## Why Dynamo breaks there",
                                "## The rewrite", "## When it declines", "## Example", "GB0170"})
      EXPECT_NE(r->documentation().find(section), std::string_view::npos) << code << section;
  }
}

TEST(GM1Rules, WrappedWhereUsesTheFilesIndentUnit) {
  // The where does not fit the file's longest line (79 at least): split as
  // black splits calls, continuation lines indented with the file's tabs.
  const std::string head = "import torch\nfrom torch import nn\n";
  const std::string cls = "\n\nclass M(nn.Module):\n\tdef forward(self, hidden_states):\n";
  const std::string in = head + cls +
                         "\t\tif torch.isinf(hidden_states).any():\n"
                         "\t\t\thidden_states = torch.clamp(hidden_states, min=-65504.0, max=65504.0)\n"
                         "\t\treturn hidden_states\n";
  EXPECT_EQ(rule_fixtures::fix_text("GM101", in),
            head + "import graphmend.runtime as _graphmend_rt\n" + cls +
                "\t\thidden_states = _graphmend_rt.where(\n"
                "\t\t\ttorch.isinf(hidden_states).any(),\n"
                "\t\t\ttorch.clamp(hidden_states, min=-65504.0, max=65504.0),\n"
                "\t\t\thidden_states,\n"
                "\t\t)\n"
                "\t\treturn hidden_states\n");
}

TEST(GM1Rules, EffectIfWrapsInTheFilesIndentUnit) {
  const std::string head = "import torch\nfrom torch import nn\n";
  const std::string cls = "\n\nclass M(nn.Module):\n\tdef forward(self, h):\n";
  const std::string in = head + cls +
                         "\t\tif h.mean() > 0:\n"
                         "\t\t\tself.register_buffer(\"last_value\", h.amax(0), persistent=False)\n"
                         "\t\telse:\n"
                         "\t\t\tself.register_buffer(\"last_value\", h.amin(0), persistent=False)\n"
                         "\t\treturn h\n";
  EXPECT_EQ(rule_fixtures::fix_text("GM104", in),
            head + "import graphmend.runtime as _graphmend_rt\n" + cls +
                "\t\tself.register_buffer(\n"
                "\t\t\t\"last_value\",\n"
                "\t\t\t_graphmend_rt.where(h.mean() > 0, h.amax(0), h.amin(0)),\n"
                "\t\t\tpersistent=False,\n"
                "\t\t)\n"
                "\t\treturn h\n");
}

}  // namespace
}  // namespace gm::rules

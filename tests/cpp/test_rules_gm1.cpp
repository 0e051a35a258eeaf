// GM101/GM102 (data-dependent `if` and conditional expressions, predicated
// with graphmend.runtime.where): focused checks. The fixture snapshots under
// tests/fixtures/rules/GM101..GM104 run in test_rule_fixtures.cpp (harness:
// rule_fixture_harness.h).
// The torch side (one graph, same outputs, gradients, Inductor) is
// tests/python/test_rules_gm1_torch.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

// The sections every rule's documentation has are checked for all rules in
// test_rule_fixtures.cpp; these name the break they remove.
TEST(GM1Rules, DocumentationNamesTheBreak) {
  for (const char* code : {"GM101", "GM102", "GM103", "GM104", "GM105"}) {
    const lint::Rule* r = rule_fixtures::rule_for(code);
    ASSERT_NE(r, nullptr) << code;
    for (const char* section : {"## Why Dynamo breaks there", "GB0170"})
      EXPECT_NE(r->documentation().find(section), std::string_view::npos) << code << section;
  }
}

TEST(GM1Rules, WrappedWhereUsesTheFilesIndentUnit) {
  // The where does not fit the file's longest line (79 at least): split as
  // black splits calls, continuation lines indented with the file's tabs.
  const std::string head = "import torch\nfrom torch import nn\n";
  const std::string cls = "\n\nclass M(nn.Module):\n\tdef forward(self, hidden_states):\n";
  const std::string in =
      head + cls +
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

// A file's diagnostics never depend on what was checked before it on the
// same thread (issue 11: "which attributes does this file assign" was cached
// by the tree's address and leaked from x/m.py into y/m.py, which then got a
// safe fix that reads an attribute y/m.py never assigns).
TEST(GM1Rules, AssignedAttributesDoNotLeakBetweenFiles) {
  const std::string x =
      "import torch\n"
      "from torch import nn\n"
      "\n"
      "\n"
      "class Block(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.scale = 2.0\n"
      "\n"
      "    def forward(self, h):\n"
      "        if h.sum() > 0:\n"
      "            h = h / self.scale\n"
      "        return h\n";
  std::string y = x;
  y.replace(y.find("self.scale = "), 10, "self.scalf");
  const std::vector<const lint::Rule*> rules{rule_fixtures::rule_for("GM101")};
  auto check = [&](const std::string& text) {
    return rule_fixtures::format(
        lint::check_source(rule_fixtures::decode(text), rule_fixtures::options(), rules)
            .diagnostics);
  };
  const std::string y_alone = check(y);
  EXPECT_NE(y_alone.find("| declined: "), std::string::npos) << y_alone;
  EXPECT_NE(y_alone.find("`self.scale`, which this file never assigns"), std::string::npos)
      << y_alone;
  const std::string x_alone = check(x);
  EXPECT_NE(x_alone.find("| fix: "), std::string::npos) << x_alone;
  for (int round = 0; round < 3; ++round) {  // x then y, y then x, back to back
    EXPECT_EQ(check(x), x_alone);
    EXPECT_EQ(check(y), y_alone);
  }
}

}  // namespace
}  // namespace gm::rules

// GM201/GM202/GM203 (print, logging and warnings.warn in compiled regions):
// focused checks. The fixture snapshots under tests/fixtures/rules/GM20x run
// in test_rule_fixtures.cpp (harness: `<case>.py`, `.expected`, `.fixed.py`,
// idempotence, GM_UPDATE_FIXTURES=1: tests/cpp/rule_fixture_harness.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

namespace fs = std::filesystem;
using rule_fixtures::decode;
using rule_fixtures::fix_text;
using rule_fixtures::options;
using rule_fixtures::rule_for;

// ------------------------------------------------------------------ fixtures

std::vector<std::string> fixture_inputs() {
  return rule_fixtures::fixture_inputs({"GM201", "GM202", "GM203"});
}

TEST(GM2Fixtures, EveryRuleHasFixtures) {
  int per[3] = {0, 0, 0};
  for (const auto& p : fixture_inputs()) {
    const auto code = fs::path(p).parent_path().filename().string();
    per[code == "GM201" ? 0 : code == "GM202" ? 1 : 2]++;
  }
  EXPECT_GE(per[0], 5);
  EXPECT_GE(per[1], 4);
  EXPECT_GE(per[2], 3);
}

// ------------------------------------------------------------------ focused

constexpr const char* kModuleHead =
    "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n";

TEST(GM2Rules, Registered) {
  for (const char* code : {"GM201", "GM202", "GM203"}) ASSERT_NE(rule_for(code), nullptr) << code;
}

TEST(GM2Rules, NoModelNoReport) {
  std::vector<const lint::Rule*> rules{rule_for("GM201"), rule_for("GM202"), rule_for("GM203")};
  auto r = lint::check_source(decode(std::string(kModuleHead) + "        print(x)\n"),
                              lint::LintOptions{}, rules);
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(GM2Rules, PrintMinimalEdit) {
  const std::string in = std::string(kModuleHead) + "        print( x ,  # keep\n  sep='')\n";
  EXPECT_EQ(fix_text("GM201", in),
            "import torch\nimport torch.nn as nn\nimport graphmend.runtime as _graphmend_rt\n\n\n"
            "class M(nn.Module):\n    def forward(self, x):\n"
            "        _graphmend_rt.print( x ,  # keep\n  sep='')\n");
}

TEST(GM2Rules, AllThreeShareOneImport) {
  // (`import warnings` goes: the fix removed its only use.)
  const std::string in = std::string("import logging\nimport warnings\n") + kModuleHead +
                         "        print(x)\n        logging.info('a')\n"
                         "        warnings.warn('w')\n        return x\n";
  std::vector<const lint::Rule*> rules{rule_for("GM201"), rule_for("GM202"), rule_for("GM203")};
  auto r = lint::fix_to_fixpoint(decode(in), options(), rules);
  ASSERT_EQ(r.status, lint::FixResult::Status::Fixed);
  EXPECT_EQ(r.text,
            "import logging\nimport torch\nimport torch.nn as nn\n"
            "import graphmend.runtime as _graphmend_rt\n\n\n"
            "class M(nn.Module):\n    def forward(self, x):\n"
            "        _graphmend_rt.print(x)\n        _graphmend_rt.log(logging, 'info', 'a')\n"
            "        _graphmend_rt.warn('w')\n        return x\n");
  EXPECT_EQ(r.rounds, 1);
}

TEST(GM2Rules, LoggerNoArgsAndTrailingComma) {
  const std::string in = std::string("import logging\n") + kModuleHead +
                         "        log = logging.getLogger('m')\n"
                         "        log.info()\n"
                         "        log.warning(\n            'a %s',\n            x,\n        )\n";
  EXPECT_EQ(fix_text("GM202", in),
            "import logging\nimport torch\nimport torch.nn as nn\n"
            "import graphmend.runtime as _graphmend_rt\n\n\n"
            "class M(nn.Module):\n    def forward(self, x):\n"
            "        log = logging.getLogger('m')\n"
            "        _graphmend_rt.log(log, 'info')\n"
            "        _graphmend_rt.log(log, 'warning',\n            'a %s',\n            x,\n"
            "        )\n");
}

TEST(GM2Rules, SuppressedByFamilySelector) {
  const std::string in = std::string(kModuleHead) +
                         "        print(x)  # graphmend: ignore[GM2]\n"
                         "        print(x)\n        return x\n";
  std::vector<const lint::Rule*> rules{rule_for("GM201")};
  auto r = lint::check_source(decode(in), options(), rules);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].loc.line, 8u);
  EXPECT_EQ(r.suppressed, 1u);
}

TEST(GM2Rules, LambdaAndNestedDefInForward) {
  const std::string in = std::string(kModuleHead) +
                         "        f = lambda t: print(t)\n"
                         "        def g(t):\n            print(t)\n"
                         "        return f(x), g(x)\n";
  std::vector<const lint::Rule*> rules{rule_for("GM201")};
  auto r = lint::check_source(decode(in), options(), rules);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_TRUE(r.diagnostics[0].fixable());
  EXPECT_TRUE(r.diagnostics[1].fixable());
}

TEST(GM2Rules, FromImportOfRuntimeIsAClash) {
  const std::string in = std::string("from graphmend import runtime as _graphmend_rt\n") +
                         kModuleHead + "        print(x)\n";
  std::vector<const lint::Rule*> rules{rule_for("GM201")};
  auto r = lint::check_source(decode(in), options(), rules);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_FALSE(r.diagnostics[0].fixable());
  EXPECT_NE(r.diagnostics[0].declined_reason.find("_graphmend_rt"), std::string::npos);
}

}  // namespace
}  // namespace gm::rules

// GM301/GM302 (validation guards and asserts on tensor data, lowered to
// graphmend.runtime traps): focused checks. The fixture snapshots under
// tests/fixtures/rules/GM301 and GM302 run in test_rule_fixtures.cpp
// (harness: rule_fixture_harness.h).
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

std::vector<std::string> fixture_inputs() {
  return rule_fixtures::fixture_inputs({"GM301", "GM302"});
}

TEST(GM3Fixtures, EveryRuleHasFixtures) {
  int per[2] = {0, 0};
  for (const auto& p : fixture_inputs())
    per[fs::path(p).parent_path().filename() == "GM301" ? 0 : 1]++;
  EXPECT_GE(per[0], 10);
  EXPECT_GE(per[1], 4);
}

// ------------------------------------------------------------------ focused

constexpr const char* kHead =
    "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n";
constexpr const char* kMendedHead =
    "import torch\nimport torch.nn as nn\nimport graphmend.runtime as _graphmend_rt\n\n\n"
    "class M(nn.Module):\n    def forward(self, x):\n";

TEST(GM3Rules, RegisteredWithDocumentation) {
  for (const char* code : {"GM301", "GM302"}) {
    const lint::Rule* r = rule_for(code);
    ASSERT_NE(r, nullptr) << code;
    EXPECT_NE(r->documentation().find("GB0170"), std::string_view::npos) << code;
  }
  EXPECT_EQ(rule_for("GM301")->name(), "tensor-guard-raise");
  EXPECT_EQ(rule_for("GM302")->name(), "tensor-assert");
}

TEST(GM3Rules, NoModelNoReport) {
  std::vector<const lint::Rule*> rules{rule_for("GM301"), rule_for("GM302")};
  auto r = lint::check_source(
      decode(std::string(kHead) + "        if (x < 0).any():\n            raise ValueError('n')\n"
                                  "        assert (x < 9).all()\n        return x\n"),
      lint::LintOptions{}, rules);
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(GM3Rules, GuardKeepsEveryComment) {
  // Comments outside the copied arguments go above the call; one inside an
  // argument stays in it, and the call is split the way black splits it.
  const std::string body =
      "        if (x < 0).any():  # c1\n"
      "            # c2\n"
      "\n"
      "            raise ValueError(\n"
      "                'neg'  # c3\n"
      "                'ative',\n"
      "            )\n"
      "        return x\n";
  const std::string out = fix_text("GM301", std::string(kHead) + body);
  EXPECT_EQ(out, std::string(kMendedHead) +
                     "        # c1\n"
                     "        # c2\n"
                     "        _graphmend_rt.trap_if(\n"
                     "            (x < 0).any(),\n"
                     "            ValueError,\n"
                     "            'neg'  # c3\n"
                     "            'ative',\n"
                     "        )\n"
                     "        return x\n");
}

TEST(GM3Rules, LongAssertGoesInTheDebugBlock) {
  const std::string in = std::string(kHead) +
                         "        assert (x.abs() < 100).all(), 'x out of range: rescale it'\n"
                         "        return x\n";
  EXPECT_EQ(fix_text("GM302", in), std::string(kMendedHead) +
                                       "        if __debug__:\n"
                                       "            _graphmend_rt.trap_unless(\n"
                                       "                (x.abs() < 100).all(),\n"
                                       "                AssertionError,\n"
                                       "                'x out of range: rescale it',\n"
                                       "            )\n"
                                       "        return x\n");
}

TEST(GM3Rules, AssertOneLine) {
  EXPECT_EQ(fix_text("GM302", std::string(kHead) + "        assert not (x < 0).any()\n"
                                                   "        return x\n"),
            std::string(kMendedHead) +
                "        if __debug__: _graphmend_rt.trap_if((x < 0).any(), AssertionError)\n"
                "        return x\n");
}

TEST(GM3Rules, GuardAndAssertShareOneImport) {
  const std::string in = std::string(kHead) +
                         "        if (x < 0).any():\n            raise ValueError('n')\n"
                         "        assert (x < 9).all(), 'big'\n        return x\n";
  std::vector<const lint::Rule*> rules{rule_for("GM301"), rule_for("GM302")};
  auto r = lint::fix_to_fixpoint(decode(in), options(), rules);
  ASSERT_EQ(r.status, lint::FixResult::Status::Fixed);
  EXPECT_EQ(r.text,
            std::string(kMendedHead) +
                "        _graphmend_rt.trap_if((x < 0).any(), ValueError, 'n')\n"
                "        if __debug__:\n"
                "            _graphmend_rt.trap_unless((x < 9).all(), AssertionError, 'big')\n"
                "        return x\n");
  EXPECT_EQ(r.rounds, 1);
}

TEST(GM3Rules, SuppressedOnTheIfLine) {
  const std::string in = std::string(kHead) +
                         "        if (x < 0).any():  # graphmend: ignore[GM301]\n"
                         "            raise ValueError('n')\n        return x\n";
  std::vector<const lint::Rule*> rules{rule_for("GM301")};
  auto r = lint::check_source(decode(in), options(), rules);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_EQ(r.suppressed, 1u);
}

TEST(GM3Rules, GuardInLambdaFreeNestedFunction) {
  // A nested def in forward is part of the region; its own locals count.
  const std::string in = std::string(kHead) +
                         "        def check(t):\n"
                         "            if (t < 0).any():\n"
                         "                raise ValueError('n')\n"
                         "            u = t * 2\n"
                         "            u[0] = 1\n"
                         "            return u\n"
                         "        return check(x)\n";
  std::vector<const lint::Rule*> rules{rule_for("GM301")};
  auto r = lint::check_source(decode(in), options(), rules);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_TRUE(r.diagnostics[0].fixable()) << r.diagnostics[0].declined_reason;
}

TEST(GM3Rules, NonlocalStoreAfterGuardDeclines) {
  const std::string in = std::string(kHead) +
                         "        seen = []\n"
                         "        def check(t):\n"
                         "            nonlocal seen\n"
                         "            if (t < 0).any():\n"
                         "                raise ValueError('n')\n"
                         "            seen = [t]\n"
                         "            return t\n"
                         "        return check(x)\n";
  std::vector<const lint::Rule*> rules{rule_for("GM301")};
  auto r = lint::check_source(decode(in), options(), rules);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_FALSE(r.diagnostics[0].fixable());
  EXPECT_NE(r.diagnostics[0].declined_reason.find("nonlocal"), std::string::npos);
}

}  // namespace
}  // namespace gm::rules

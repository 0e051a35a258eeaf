// GM4xx (scalars, data-dependent shapes) and GM5xx (Python Dynamo cannot
// trace in a region): report-only rules, focused checks. Their fixture
// snapshots (tests/fixtures/rules/GM4xx and GM5xx: every registered rule of
// the family runs on them) and their documentation are checked with every
// other rule's in test_rule_fixtures.cpp (harness: rule_fixture_harness.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

// Every registered GM4xx and GM5xx rule.
std::vector<const lint::Rule*> family_rules() {
  std::vector<const lint::Rule*> v = rule_fixtures::rules_for_dir("GM4xx");
  for (const lint::Rule* r : rule_fixtures::rules_for_dir("GM5xx")) v.push_back(r);
  return v;
}

lint::CheckResult check(std::string text, bool with_model = true) {
  const auto rules = family_rules();
  lint::LintOptions o = rule_fixtures::options();
  if (!with_model) o.build_model = nullptr;
  return lint::check_source(rule_fixtures::decode(std::move(text)), o, rules);
}

std::string format(const std::vector<lint::Diagnostic>& ds) { return rule_fixtures::format(ds); }

TEST(RulesGM4GM5, ReportOnly) {
  ASSERT_GE(family_rules().size(), 12u);
  auto r =
      check(rule_fixtures::read_file(rule_fixtures::fixture_root() / "GM4xx" / "gm401_item.py"));
  ASSERT_FALSE(r.diagnostics.empty());
  for (const auto& d : r.diagnostics) {
    EXPECT_FALSE(d.fixable()) << d.code << " is report-only";
    EXPECT_NE(d.why.find("Dynamo"), std::string::npos) << d.code;
  }
}

// Focused checks: exact diagnostics for small sources.

TEST(RulesGM4GM5, ItemExactDiagnostic) {
  auto r = check(
      "import torch\n"
      "class M(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return x * x.sum().item()\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const auto& d = r.diagnostics[0];
  EXPECT_EQ(d.code, "GM401");
  EXPECT_EQ(d.loc.line, 4u);
  EXPECT_EQ(d.loc.col, 19u);
  EXPECT_EQ(d.loc.end_col, 33u);
  EXPECT_EQ(d.message, "`.item()` reads tensor data into a Python scalar");
  EXPECT_NE(d.why.find("capture_scalar_outputs=False"), std::string::npos);
  // `x.sum()` of a tensor of unknown dtype may be int64 (an integer input).
  EXPECT_NE(d.declined_reason.find("not proven a tensor of the reduction's dtype"),
            std::string::npos);
}

TEST(RulesGM4GM5, NothingWithoutModel) {
  auto r = check(
      "import torch\n"
      "class M(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return torch.nonzero(x.sum().item())\n",
      /*with_model=*/false);
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(RulesGM4GM5, NothingOutsideRegions) {
  auto r = check(
      "import copy, importlib, torch\n"
      "def f(x: torch.Tensor):\n"
      "    while x.sum() > 0:\n"
      "        x = x[x > 0].unique().repeat_interleave(x)\n"
      "    x.requires_grad_()\n"
      "    with open('f'):\n"
      "        pass\n"
      "    return (copy.deepcopy(x).tolist(), x.item(), torch.nonzero(x),\n"
      "            importlib.import_module('m'))\n");
  EXPECT_TRUE(r.diagnostics.empty()) << format(r.diagnostics);
}

TEST(RulesGM4GM5, SuppressionComment) {
  auto r = check(
      "import torch\n"
      "@torch.compile\n"
      "def f(x):\n"
      "    a = x.item()  # graphmend: ignore[GM401]\n"
      "    return x.tolist()  # graphmend: ignore[GM4]\n");
  EXPECT_TRUE(r.diagnostics.empty()) << format(r.diagnostics);
  EXPECT_EQ(r.suppressed, 2u);
}

TEST(RulesGM4GM5, CompileCallEntry) {
  auto r = check(
      "import torch\n"
      "def f(x):\n"
      "    return x.unique()\n"
      "g = torch.compile(f)\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "GM406");
  EXPECT_EQ(r.diagnostics[0].loc.line, 3u);
  EXPECT_EQ(r.diagnostics[0].loc.col, 11u);
}

}  // namespace
}  // namespace gm::rules

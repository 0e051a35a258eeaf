// GM4xx (scalars, data-dependent shapes) and GM5xx (Python Dynamo cannot
// trace in a region): report-only rules.
//
// Fixture snapshots: tests/fixtures/rules/GM4xx/*.py and GM5xx/*.py, each with
// `<case>.expected`: one diagnostic per line,
//   CODE LINE:COL-END_LINE:END_COL MESSAGE
// (lines 1-based, columns 0-based UTF-8 bytes, as CPython's ast). Only the
// GM4xx/GM5xx rules run on them. GM_UPDATE_FIXTURES=1 rewrites the snapshots
// (review the diff!).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "lint/engine.h"
#include "lint/registry.h"
#include "rules/rules.h"
#include "semantic/model.h"

namespace gm::rules {
namespace {

namespace fs = std::filesystem;

fs::path fixture_root() {
  return fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "rules";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr std::string_view kCodes[] = {"GM401", "GM402", "GM403", "GM404", "GM405", "GM406",
                                       "GM407", "GM501", "GM502", "GM503", "GM504", "GM505"};

std::vector<const lint::Rule*> family_rules() {
  std::vector<const lint::Rule*> v;
  for (auto c : kCodes) v.push_back(lint::find_rule(c));
  return v;
}

lint::LintOptions options(bool with_model = true) {
  lint::LintOptions o;
  if (with_model)
    o.build_model = [](const Source& s, const ParseResult& p) {
      return std::make_shared<const sema::Model>(sema::analyze(p.tree, s));
    };
  return o;
}

lint::CheckResult check(std::string text, bool with_model = true) {
  auto src = std::get<Source>(Source::decode(std::move(text)));
  const auto rules = family_rules();
  return lint::check_source(src, options(with_model), rules);
}

std::string format(const std::vector<lint::Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    out += d.code + " " + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + "-" +
           std::to_string(d.loc.end_line) + ":" + std::to_string(d.loc.end_col) + " " +
           d.message + "\n";
  }
  return out;
}

TEST(RulesGM4GM5, AllRegisteredWithDocumentation) {
  for (auto c : kCodes) {
    const lint::Rule* r = lint::find_rule(c);
    ASSERT_NE(r, nullptr) << c;
    EXPECT_FALSE(r->name().empty());
    EXPECT_FALSE(r->summary().empty());
    const auto doc = r->documentation();
    EXPECT_NE(doc.find(std::string("# ") + std::string(c)), std::string_view::npos) << c;
    EXPECT_NE(doc.find("## What it detects"), std::string_view::npos) << c;
    EXPECT_NE(doc.find("Dynamo"), std::string_view::npos) << c;
    EXPECT_NE(doc.find("## Example"), std::string_view::npos) << c;
    EXPECT_NE(doc.find("## When it declines"), std::string_view::npos) << c;
    EXPECT_NE(doc.find("fix"), std::string_view::npos) << c;
  }
}

class GM45Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GM45Fixture, MatchesSnapshot) {
  const fs::path py = fixture_root() / GetParam();
  const fs::path expected = fs::path(py).replace_extension(".expected");
  auto r = check(slurp(py));
  ASSERT_FALSE(r.syntax_error.has_value());
  EXPECT_TRUE(r.rule_errors.empty());
  for (const auto& d : r.diagnostics) {
    EXPECT_FALSE(d.fixable()) << d.code << " is report-only";
    EXPECT_FALSE(d.why.empty()) << d.code;
    EXPECT_NE(d.why.find("Dynamo"), std::string::npos) << d.code;
    EXPECT_FALSE(d.declined_reason.empty()) << d.code;
  }
  const std::string got = format(r.diagnostics);
  if (std::getenv("GM_UPDATE_FIXTURES")) {
    std::ofstream(expected, std::ios::binary) << got;
    GTEST_SKIP() << "updated " << expected;
  }
  ASSERT_TRUE(fs::exists(expected)) << expected;
  EXPECT_EQ(got, slurp(expected)) << py;
}

INSTANTIATE_TEST_SUITE_P(
    RulesGM4GM5, GM45Fixture,
    ::testing::Values("GM4xx/gm401_item.py", "GM4xx/gm402_tolist.py", "GM4xx/gm403_nonzero.py",
                      "GM4xx/gm404_bool_mask.py", "GM4xx/gm405_repeat_interleave.py",
                      "GM4xx/gm406_unique.py", "GM4xx/gm407_loop_exit.py",
                      "GM5xx/gm501_import_probe.py", "GM5xx/gm502_deepcopy.py",
                      "GM5xx/gm503_try_import.py", "GM5xx/gm504_context_manager.py",
                      "GM5xx/gm505_requires_grad.py"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string n = fs::path(info.param).stem().string();
      std::replace_if(
          n.begin(), n.end(),
          [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return n;
    });

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
  EXPECT_NE(d.declined_reason.find("report-only"), std::string::npos);
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

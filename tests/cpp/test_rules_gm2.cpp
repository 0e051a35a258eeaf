// GM201/GM202/GM203 (print, logging and warnings.warn in compiled regions):
// fixture snapshots under tests/fixtures/rules/GM2xx plus focused checks.
//
// Each fixture `<case>.py` has `<case>.expected` (the diagnostics, one per
// line) and, when the rule fixes something, `<case>.fixed.py` (the exact
// mended text). Without `.fixed.py` the file must come back unchanged.
// GM_UPDATE_FIXTURES=1 rewrites the snapshots (review the diff!).
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

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, std::string_view s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

lint::LintOptions options() {
  lint::LintOptions o;
  o.build_model = [](const Source& s, const ParseResult& p) {
    return std::make_shared<const sema::Model>(sema::analyze(p.tree, s));
  };
  return o;
}

Source decode(std::string bytes) { return std::get<Source>(Source::decode(std::move(bytes))); }

const lint::Rule* rule_for(std::string_view code) { return lint::find_rule(code); }

std::string format(const std::vector<lint::Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + "-" +
           std::to_string(d.loc.end_line) + ":" + std::to_string(d.loc.end_col) + " " + d.code +
           " " + d.message;
    if (d.fix) out += " | fix: " + d.fix->description;
    if (!d.declined_reason.empty()) out += " | declined: " + d.declined_reason;
    out += "\n";
  }
  return out;
}

struct Outcome {
  std::string diagnostics;
  lint::FixResult fixed;
};

Outcome run(std::string_view code, const std::string& bytes) {
  const lint::Rule* rule = rule_for(code);
  EXPECT_NE(rule, nullptr) << code;
  std::vector<const lint::Rule*> rules{rule};
  const Source src = decode(bytes);
  auto checked = lint::check_source(src, options(), rules);
  EXPECT_TRUE(checked.rule_errors.empty());
  EXPECT_FALSE(checked.syntax_error.has_value());
  return {format(checked.diagnostics), lint::fix_to_fixpoint(src, options(), rules)};
}

std::string fix_text(std::string_view code, const std::string& bytes) {
  std::vector<const lint::Rule*> rules{rule_for(code)};
  return lint::fix_to_fixpoint(decode(bytes), options(), rules).text;
}

// ------------------------------------------------------------------ fixtures

class Gm2Fixture : public ::testing::TestWithParam<std::string> {};

TEST_P(Gm2Fixture, Snapshot) {
  const fs::path input(GetParam());
  const std::string code = input.parent_path().filename().string();
  const fs::path stem = input.parent_path() / input.stem();
  const fs::path expected_diags = stem.string() + ".expected";
  const fs::path expected_fixed = stem.string() + ".fixed.py";
  const std::string bytes = read_file(input);
  const Outcome o = run(code, bytes);
  const bool changed = o.fixed.status == lint::FixResult::Status::Fixed;
  ASSERT_TRUE(o.fixed.status == lint::FixResult::Status::Fixed ||
              o.fixed.status == lint::FixResult::Status::Unchanged)
      << lint::status_name(o.fixed.status);

  if (std::getenv("GM_UPDATE_FIXTURES") != nullptr) {
    write_file(expected_diags, o.diagnostics);
    if (changed) write_file(expected_fixed, o.fixed.text);
    else fs::remove(expected_fixed);
    GTEST_SKIP() << "snapshots rewritten";
  }

  ASSERT_TRUE(fs::exists(expected_diags)) << expected_diags;
  EXPECT_EQ(o.diagnostics, read_file(expected_diags)) << input;
  if (fs::exists(expected_fixed)) {
    EXPECT_TRUE(changed);
    EXPECT_EQ(o.fixed.text, read_file(expected_fixed)) << input;
  } else {
    EXPECT_FALSE(changed) << input;
    EXPECT_EQ(o.fixed.text, bytes);
  }
  // Idempotent: fixing the mended text changes nothing, and every remaining
  // diagnostic of this rule is a declined one (no fix left to apply).
  const Outcome again = run(code, o.fixed.text);
  EXPECT_EQ(again.fixed.status, lint::FixResult::Status::Unchanged) << input;
  EXPECT_EQ(again.fixed.text, o.fixed.text);
  EXPECT_EQ(again.diagnostics.find("| fix:"), std::string::npos) << again.diagnostics;
}

std::vector<std::string> fixture_inputs() {
  std::vector<std::string> out;
  for (const char* code : {"GM201", "GM202", "GM203"}) {
    const fs::path dir = fixture_root() / code;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() != ".py" || name.ends_with(".fixed.py")) continue;
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  const fs::path p(info.param);
  std::string s = p.parent_path().filename().string() + "_" + p.stem().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(GM2, Gm2Fixture, ::testing::ValuesIn(fixture_inputs()), case_name);

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
  for (const char* code : {"GM201", "GM202", "GM203"}) {
    const lint::Rule* r = rule_for(code);
    ASSERT_NE(r, nullptr) << code;
    EXPECT_FALSE(r->name().empty());
    EXPECT_NE(r->documentation().find("## When it declines"), std::string_view::npos);
    EXPECT_NE(r->documentation().find("## Example"), std::string_view::npos);
  }
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
  const std::string in = std::string("import logging\nimport warnings\n") + kModuleHead +
                         "        print(x)\n        logging.info('a')\n"
                         "        warnings.warn('w')\n        return x\n";
  std::vector<const lint::Rule*> rules{rule_for("GM201"), rule_for("GM202"), rule_for("GM203")};
  auto r = lint::fix_to_fixpoint(decode(in), options(), rules);
  ASSERT_EQ(r.status, lint::FixResult::Status::Fixed);
  EXPECT_EQ(r.text,
            "import logging\nimport warnings\nimport torch\nimport torch.nn as nn\n"
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

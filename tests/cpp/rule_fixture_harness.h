// The fixture harness shared by the rule tests: snapshot tests over
// tests/fixtures/rules/<DIR>/, every directory there (test_rule_fixtures.cpp
// instantiates them all and checks that every registered rule has fixtures).
//
// A directory named after one rule code (GM101) runs that rule; a family
// directory (GM4xx) runs every registered rule whose code starts with its
// prefix (GM4), so a new rule of the family is run on its fixtures.
// Each fixture `<case>.py` has `<case>.expected` (the diagnostics of those
// rules, one per line:
//   LINE:COL-END_LINE:END_COL CODE MESSAGE[ | fix: ...][ | declined: ...]
// lines 1-based, columns 0-based UTF-8 bytes) and, when the rule fixes
// something, `<case>.fixed.py` (the exact mended text). Without `.fixed.py`
// the file must come back unchanged. Every snapshot is also checked to be
// idempotent: fixing the mended text changes nothing and leaves no fixable
// diagnostic. Unsafe fixes show in `.expected` as `| unsafe fix: ...` and
// are not applied there; when a case has one, it is fixed a second time with
// unsafe fixes on (`--unsafe-fixes`) against `<case>.unsafe.fixed.py`,
// idempotent too. GM_UPDATE_FIXTURES=1 rewrites the snapshots (review the
// diff!).
//
// Use:
//   class GmNFixture : public ::testing::TestWithParam<std::string> {};
//   TEST_P(GmNFixture, Snapshot) { rule_fixtures::check_snapshot(GetParam()); }
//   INSTANTIATE_TEST_SUITE_P(GMN, GmNFixture,
//       ::testing::ValuesIn(rule_fixtures::fixture_inputs({"GM301"})),
//       rule_fixtures::case_name);
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lint/engine.h"
#include "lint/registry.h"
#include "rules/rules.h"
#include "semantic/model.h"

namespace gm::rule_fixtures {

namespace fs = std::filesystem;

// From the source tree CMake names (GM_SOURCE_DIR): __FILE__ is relative to
// the build directory, which made the fixtures vanish when the tests ran from
// elsewhere (scripts/sanitize.sh runs them from the repository root).
inline fs::path fixture_root() {
#ifdef GM_SOURCE_DIR
  return fs::path(GM_SOURCE_DIR) / "tests" / "fixtures" / "rules";
#else
  return fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "rules";
#endif
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, std::string_view s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

// Options that build the semantic model as the bindings do (rules see
// regions and facts; no facts in a module without regions).
inline lint::LintOptions options() {
  lint::LintOptions o;
  o.build_model = [](const Source& s, const ParseResult& p) {
    sema::AnalyzeOptions ao;
    ao.facts_need_regions = true;
    return std::make_shared<const sema::Model>(sema::analyze(p.tree, s, ao));
  };
  return o;
}

inline Source decode(std::string bytes) {
  return std::get<Source>(Source::decode(std::move(bytes)));
}

inline const lint::Rule* rule_for(std::string_view code) { return lint::find_rule(code); }

// "GM4xx" -> "GM4"; a rule code -> itself.
inline std::string_view dir_prefix(std::string_view dir) {
  return dir.size() == 5 && dir.substr(3) == "xx" ? dir.substr(0, 3) : dir;
}

// The rules a fixture directory runs (see the header comment), from the
// registry; empty when the name is neither a registered code nor a family
// with registered rules.
inline std::vector<const lint::Rule*> rules_for_dir(std::string_view dir) {
  if (dir_prefix(dir) != dir) {
    std::vector<const lint::Rule*> out;
    for (const lint::Rule* r : lint::rules())
      if (r->code().substr(0, 3) == dir_prefix(dir)) out.push_back(r);
    return out;
  }
  if (const lint::Rule* r = rule_for(dir)) return {r};
  return {};
}

inline std::string format(const std::vector<lint::Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) {
    out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + "-" +
           std::to_string(d.loc.end_line) + ":" + std::to_string(d.loc.end_col) + " " + d.code +
           " " + d.message;
    if (d.fix)
      out +=
          (d.fix->applicability == edits::Applicability::Unsafe ? " | unsafe fix: " : " | fix: ") +
          d.fix->description;
    if (!d.declined_reason.empty()) out += " | declined: " + d.declined_reason;
    out += "\n";
  }
  return out;
}

struct Outcome {
  std::string diagnostics;
  lint::FixResult fixed;
};

// Checks and fixes `bytes` with the rules of fixture directory `dir` (a
// rule code runs that one rule).
inline Outcome run(std::string_view dir, const std::string& bytes, bool unsafe = false) {
  const std::vector<const lint::Rule*> rules = rules_for_dir(dir);
  EXPECT_FALSE(rules.empty()) << dir << ": no registered rule";
  const Source src = decode(bytes);
  auto checked = lint::check_source(src, options(), rules);
  EXPECT_TRUE(checked.rule_errors.empty());
  EXPECT_FALSE(checked.syntax_error.has_value());
  for (const auto& d : checked.diagnostics) {
    EXPECT_FALSE(d.why.empty()) << d.code << " at line " << d.loc.line << ": no `why`";
    // A finding either carries a fix or says why it has none.
    EXPECT_TRUE(d.fix.has_value() || !d.declined_reason.empty())
        << d.code << " at line " << d.loc.line << ": neither a fix nor a declined reason";
  }
  lint::LintOptions fix_options = options();
  fix_options.unsafe_fixes = unsafe;
  return {format(checked.diagnostics), lint::fix_to_fixpoint(src, fix_options, rules)};
}

// The mended text of `bytes` under the one rule `code`.
inline std::string fix_text(std::string_view code, const std::string& bytes) {
  std::vector<const lint::Rule*> rules{rule_for(code)};
  return lint::fix_to_fixpoint(decode(bytes), options(), rules).text;
}

// One fix pass of a snapshot: the mended text against `expected_fixed` (or
// unchanged when that file does not exist), then idempotence.
inline void check_fixed(const std::string& code, const fs::path& input, const std::string& bytes,
                        bool unsafe, const fs::path& expected_fixed) {
  const Outcome o = run(code, bytes, unsafe);
  const bool changed = o.fixed.status == lint::FixResult::Status::Fixed;
  ASSERT_TRUE(o.fixed.status == lint::FixResult::Status::Fixed ||
              o.fixed.status == lint::FixResult::Status::Unchanged)
      << lint::status_name(o.fixed.status);
  if (std::getenv("GM_UPDATE_FIXTURES") != nullptr) {
    if (changed)
      write_file(expected_fixed, o.fixed.text);
    else
      fs::remove(expected_fixed);
    return;
  }
  if (fs::exists(expected_fixed)) {
    EXPECT_TRUE(changed) << expected_fixed;
    EXPECT_EQ(o.fixed.text, read_file(expected_fixed)) << input;
  } else {
    EXPECT_FALSE(changed) << input;
    EXPECT_EQ(o.fixed.text, bytes);
  }
  // Idempotent: fixing the mended text changes nothing, and every remaining
  // diagnostic of this rule is a declined one (no fix left to apply).
  const Outcome again = run(code, o.fixed.text, unsafe);
  EXPECT_EQ(again.fixed.status, lint::FixResult::Status::Unchanged) << input;
  EXPECT_EQ(again.fixed.text, o.fixed.text);
  EXPECT_EQ(again.diagnostics.find("| fix:"), std::string::npos) << again.diagnostics;
  if (unsafe) {
    EXPECT_EQ(again.diagnostics.find("| unsafe fix:"), std::string::npos) << again.diagnostics;
  }
}

// The snapshot test of one fixture input (the rule is its directory's name).
inline void check_snapshot(const std::string& input_path) {
  const fs::path input(input_path);
  const std::string code = input.parent_path().filename().string();
  const fs::path stem = input.parent_path() / input.stem();
  const fs::path expected_diags = stem.string() + ".expected";
  const fs::path unsafe_fixed = stem.string() + ".unsafe.fixed.py";
  const std::string bytes = read_file(input);
  const std::string diagnostics = run(code, bytes).diagnostics;
  const bool has_unsafe = diagnostics.find("| unsafe fix:") != std::string::npos;

  if (std::getenv("GM_UPDATE_FIXTURES") != nullptr) {
    write_file(expected_diags, diagnostics);
    check_fixed(code, input, bytes, false, stem.string() + ".fixed.py");
    if (has_unsafe)
      check_fixed(code, input, bytes, true, unsafe_fixed);
    else
      fs::remove(unsafe_fixed);
    GTEST_SKIP() << "snapshots rewritten";
  }

  ASSERT_TRUE(fs::exists(expected_diags)) << expected_diags;
  EXPECT_EQ(diagnostics, read_file(expected_diags)) << input;
  check_fixed(code, input, bytes, false, stem.string() + ".fixed.py");
  if (has_unsafe) {
    ASSERT_TRUE(fs::exists(unsafe_fixed)) << unsafe_fixed;
    check_fixed(code, input, bytes, true, unsafe_fixed);
  } else {
    EXPECT_FALSE(fs::exists(unsafe_fixed)) << unsafe_fixed;
  }
}

// Every fixture directory name under fixture_root(), sorted.
inline std::vector<std::string> fixture_dirs() {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(fixture_root(), ec)) return out;  // tests that need them fail
  for (const auto& e : fs::directory_iterator(fixture_root()))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every fixture input (`*.py` but not `*.fixed.py`) under the code
// directories, sorted.
inline std::vector<std::string> fixture_inputs(std::initializer_list<const char*> codes) {
  std::vector<std::string> out;
  for (const char* code : codes) {
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

// Every fixture input of every directory, sorted.
inline std::vector<std::string> all_fixture_inputs() {
  std::vector<std::string> out;
  for (const std::string& dir : fixture_dirs()) {
    const fs::path d = fixture_root() / dir;
    for (const auto& e : fs::directory_iterator(d)) {
      const std::string name = e.path().filename().string();
      if (e.path().extension() != ".py" || name.ends_with(".fixed.py")) continue;
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Test names: "<CODE>_<case>" with non-alphanumerics as `_`.
inline std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  const fs::path p(info.param);
  std::string s = p.parent_path().filename().string() + "_" + p.stem().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace gm::rule_fixtures

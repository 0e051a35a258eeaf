// Every rule, from the registry: the fixture snapshots of every directory
// under tests/fixtures/rules (harness: rule_fixture_harness.h), every
// registered rule covered by fixtures, and every registered rule documented
// with the sections `graphmend rule CODE` promises. A new rule is covered by
// these tests as soon as it is registered.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

namespace fs = std::filesystem;

class RuleFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleFixture, Snapshot) { rule_fixtures::check_snapshot(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Rules, RuleFixture,
                         ::testing::ValuesIn(rule_fixtures::all_fixture_inputs()),
                         rule_fixtures::case_name);

// The snapshot lines of every fixture a rule runs on that report it.
int reported_lines(const lint::Rule& r, bool* fixes) {
  int n = 0;
  const std::string needle = " " + std::string(r.code()) + " ";
  for (const std::string& input : rule_fixtures::all_fixture_inputs()) {
    const fs::path p(input);
    const std::string dir = p.parent_path().filename().string();
    if (dir != r.code() && rule_fixtures::dir_prefix(dir) != r.code().substr(0, 3)) continue;
    const std::string expected =
        rule_fixtures::read_file(p.parent_path() / (p.stem().string() + ".expected"));
    for (std::size_t at = 0, end; at < expected.size(); at = end + 1) {
      end = expected.find('\n', at);
      if (end == std::string::npos) end = expected.size();
      const std::string_view line(expected.data() + at, end - at);
      if (line.find(needle) == std::string_view::npos) continue;
      ++n;
      if (line.find("| fix: ") != std::string_view::npos ||
          line.find("| unsafe fix: ") != std::string_view::npos)
        *fixes = true;
    }
  }
  return n;
}

TEST(Rules, EveryFixtureDirectoryRunsRegisteredRules) {
  const auto dirs = rule_fixtures::fixture_dirs();
  EXPECT_FALSE(dirs.empty());
  for (const std::string& dir : dirs)
    EXPECT_FALSE(rule_fixtures::rules_for_dir(dir).empty())
        << "tests/fixtures/rules/" << dir << " names no registered rule or family";
}

TEST(Rules, EveryRegisteredRuleHasFixturesThatReportIt) {
  ASSERT_FALSE(lint::rules().empty());
  for (const lint::Rule* r : lint::rules()) {
    bool fixes = false;
    EXPECT_GE(reported_lines(*r, &fixes), 2)
        << r->code() << ": add fixtures under tests/fixtures/rules/" << r->code();
  }
}

// The documentation of every registered rule: a "# CODE name" title, what it
// detects, why Dynamo breaks (or the principle), the rewrite (a rule whose
// fixtures show fixes) or what to do instead (report-only), when it
// declines, and an example last; in that order.
TEST(Rules, EveryRegisteredRuleIsDocumented) {
  for (const lint::Rule* r : lint::rules()) {
    const std::string code(r->code());
    EXPECT_FALSE(r->name().empty()) << code;
    EXPECT_FALSE(r->summary().empty()) << code;
    const std::string_view doc = r->documentation();
    const std::string title = "# " + code + " " + std::string(r->name()) + "\n";
    EXPECT_EQ(doc.substr(0, title.size()), title) << code;
    bool fixes = false;
    reported_lines(*r, &fixes);
    const char* remedy = fixes ? "\n## The rewrite\n" : "\n## What to do instead\n";
    std::size_t at = 0;
    for (const char* section :
         {"\n## What it detects\n", remedy, "\n## When it declines\n", "\n## Example\n"}) {
      const std::size_t found = doc.find(section, at);
      EXPECT_NE(found, std::string_view::npos) << code << ": no (or misplaced) " << section;
      if (found != std::string_view::npos) at = found + 1;
    }
    EXPECT_EQ(doc.find("\n## ", at), std::string_view::npos) << code << ": Example is not last";
    EXPECT_TRUE(doc.find("Dynamo") != std::string_view::npos) << code << ": no word on Dynamo";
  }
}

}  // namespace
}  // namespace gm::rules

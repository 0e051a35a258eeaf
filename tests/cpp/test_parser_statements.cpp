// Statements, parameters, patterns and type parameters: trees and errors
// compared with what CPython 3.8–3.13 produce. The expected strings were
// printed by the real interpreters: ast.dump(ast.parse(src),
// include_attributes=True), or "Kind: msg (line:col)" with a 0-based col.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "ast/dump.h"
#include "parser/parse.h"

namespace {

struct Case {
  const char* name;
  int minor;
  const char* source;
  const char* expected;
};

#include "test_parser_statements_cases.inc"

std::string parse_and_dump(const std::string& text, int minor) {
  auto decoded = gm::Source::from_utf8(text);
  if (auto* err = std::get_if<gm::SyntaxError>(&decoded)) return "decode error: " + err->message;
  const gm::Source& src = std::get<gm::Source>(decoded);
  gm::ParseOptions options;
  options.version = {3, minor};
  gm::ParseResult r = gm::parse_module(src, options);
  if (r.error)
    return r.error->kind + ": " + r.error->message + " (" + std::to_string(r.error->line) + ":" +
           std::to_string(r.error->col) + ")";
  gm::ast::DumpOptions d;
  d.minor = minor;
  return gm::ast::dump(r.tree, r.tree.root(), d);
}

class StatementCases : public ::testing::TestWithParam<Case> {};

TEST_P(StatementCases, MatchesCPython) {
  const Case& c = GetParam();
  EXPECT_EQ(parse_and_dump(c.source, c.minor), c.expected)
      << c.name << " under 3." << c.minor << "\n--- source ---\n"
      << c.source;
}

INSTANTIATE_TEST_SUITE_P(CPython, StatementCases, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name) + "_3" +
                                  std::to_string(info.param.minor);
                         });

TEST(ParserStatements, DeepNestingIsAnErrorNotACrash) {
  // 99 nested blocks are fine for the tokenizer; a tighter depth bound must
  // still give an error, not a crash.
  std::string src;
  for (int i = 0; i < 99; ++i) src += std::string(i, ' ') + "if x:\n";
  src += std::string(99, ' ') + "pass\n";
  gm::ParseOptions options;
  options.version = {3, 12};
  options.max_depth = 50;
  auto decoded = gm::Source::from_utf8(src);
  ASSERT_TRUE(std::holds_alternative<gm::Source>(decoded));
  gm::ParseResult r = gm::parse_module(std::get<gm::Source>(decoded), options);
  EXPECT_TRUE(r.error.has_value());
  options.max_depth = 1000;
  gm::ParseResult ok = gm::parse_module(std::get<gm::Source>(decoded), options);
  EXPECT_FALSE(ok.error.has_value()) << ok.error->message;
}

TEST(ParserStatements, LongElifChainDoesNotRecurse) {
  std::string src = "if a:\n  pass\n";
  for (int i = 0; i < 5000; ++i) src += "elif b:\n  pass\n";
  gm::ParseOptions options;
  options.version = {3, 11};
  auto decoded = gm::Source::from_utf8(src);
  ASSERT_TRUE(std::holds_alternative<gm::Source>(decoded));
  gm::ParseResult r = gm::parse_module(std::get<gm::Source>(decoded), options);
  EXPECT_FALSE(r.error.has_value());
}

}  // namespace

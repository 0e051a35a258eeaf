// Issue 14 items 6 and 7 with the shipped rules: nested fixes converge
// (11+ nested tensor `if`s, 16+ chained conditional expressions), and fixes
// copy the user's identifier bytes (never the NFKC form the tree compares).
#include <gtest/gtest.h>

#include <string>

#include "rule_fixture_harness.h"

namespace {

using namespace gm;

std::string nested_ifs(int n) {
  std::string s =
      "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
      "        h = torch.relu(x)\n";
  for (int i = 0; i < n; ++i)
    s += std::string(8 + 4 * i, ' ') + "if h.sum() > " + std::to_string(i) + ":\n";
  s += std::string(8 + 4 * n, ' ') + "h = h * 2\n        return h\n";
  return s;
}

std::string chained_ifexps(int n) {
  std::string e;
  for (int i = 0; i < n; ++i)
    e += "h * " + std::to_string(i + 1) + " if h.sum() > " + std::to_string(i) + " else ";
  return "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
         "        h = torch.relu(x)\n        y = " +
         e + "h\n        return y\n";
}

lint::FixResult fix(const std::string& bytes, bool unsafe = true) {
  lint::LintOptions o = rule_fixtures::options();
  o.unsafe_fixes = unsafe;
  return lint::fix_to_fixpoint(rule_fixtures::decode(bytes), o);
}

TEST(FixConvergence, ElevenNestedTensorIfs) {
  for (int n : {11, 20}) {
    const auto r = fix(nested_ifs(n));
    EXPECT_EQ(r.status, lint::FixResult::Status::Fixed) << n;
    EXPECT_EQ(r.applied_per_code().at("GM101"), n);
    EXPECT_TRUE(r.remaining.empty());
  }
}

TEST(FixConvergence, SixteenChainedConditionalExpressions) {
  for (int n : {16, 30}) {
    const auto r = fix(chained_ifexps(n));
    EXPECT_EQ(r.status, lint::FixResult::Status::Fixed) << n;
    EXPECT_EQ(r.applied_per_code().at("GM102"), n);
    EXPECT_TRUE(r.remaining.empty());
  }
}

std::string predicated(const std::string& name) {
  return "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, " + name +
         "):\n"
         "        h = torch.relu(" +
         name +
         ")\n"
         "        if h.sum() > 0:\n            " +
         name +
         " = h * 2\n"
         "        else:\n            " +
         name +
         " = h + 1\n"
         "        return " +
         name + "\n";
}

TEST(FixSpelling, KeepsTheUsersBytesUtf8) {
  const std::string name = "\xef\xac\x81le";  // U+FB01 LATIN SMALL LIGATURE FI + "le"
  const auto r = fix(predicated(name));
  ASSERT_EQ(r.status, lint::FixResult::Status::Fixed);
  EXPECT_EQ(r.text.find("file"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find(name + " = _graphmend_rt.where("), std::string::npos) << r.text;
}

TEST(FixSpelling, KeepsTheUsersBytesLatin1) {
  // U+00B5 MICRO SIGN (NFKC: U+03BC, which latin-1 cannot encode).
  const std::string micro = "\xc2\xb5";
  const auto r = fix("# -*- coding: latin-1 -*-\n" + predicated("\xb5"));
  ASSERT_EQ(r.status, lint::FixResult::Status::Fixed);
  EXPECT_EQ(r.text.find("\xce\xbc"), std::string::npos) << "no Greek mu";
  EXPECT_NE(r.text.find(micro + " = _graphmend_rt.where("), std::string::npos) << r.text;
}

}  // namespace

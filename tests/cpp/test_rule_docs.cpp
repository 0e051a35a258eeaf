// The documented example of every fixing rule is its real output: the
// "Before:" block of the rule's documentation, put into a small module that
// makes it a compiled region, is fixed by the rule and compared with the
// "After" block put into the same module (the runtime import is the only
// line the module itself gains).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "lint/registry.h"
#include "rule_fixture_harness.h"

namespace gm::rules {
namespace {

constexpr std::string_view kImport = "import graphmend.runtime as _graphmend_rt";

// The first indented block (4 spaces) after the line starting with `label`,
// dedented; empty when there is none.
std::string block_after(std::string_view doc, std::string_view label) {
  std::size_t at = 0;
  while (at < doc.size()) {
    const std::size_t eol = doc.find('\n', at);
    const std::string_view line =
        doc.substr(at, eol == std::string_view::npos ? doc.npos : eol - at);
    at = eol == std::string_view::npos ? doc.size() : eol + 1;
    if (line.starts_with(label)) break;
  }
  std::vector<std::string> lines;
  bool started = false;
  while (at < doc.size()) {
    const std::size_t eol = doc.find('\n', at);
    const std::string_view line =
        doc.substr(at, eol == std::string_view::npos ? doc.npos : eol - at);
    at = eol == std::string_view::npos ? doc.size() : eol + 1;
    if (line.starts_with("    ")) {
      started = true;
      lines.emplace_back(line.substr(4));
    } else if (line.empty()) {
      if (started) lines.emplace_back();
    } else if (started) {
      break;
    }
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string indent(const std::string& text, std::string_view by) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t eol = text.find('\n', at);
    const std::string line = text.substr(at, eol - at);
    if (!line.empty()) out += std::string(by) + line;
    out += "\n";
    at = eol + 1;
  }
  return out;
}

// Drops the runtime import line (and a blank line right after it when it
// opens the text).
std::string without_import(std::string text) {
  const std::string line = std::string(kImport) + "\n";
  if (text.starts_with(line + "\n")) return text.substr(line.size() + 1);
  if (auto at = text.find(line); at != std::string::npos) text.erase(at, line.size());
  return text;
}

struct Context {
  std::string head, snippet_indent, tail;
  std::string mended_head;  // when the fix changes the head too
};

// How each rule's example becomes a module: what goes around it.
const std::map<std::string, Context>& contexts() {
  static const std::map<std::string, Context> m = {
      {"GM101",
       {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n\n",
        "    ", ""}},
      {"GM102",
       {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.big = torch.ones(1)\n        self.small = torch.zeros(1)\n\n"
        "    def forward(self, x):\n",
        "        ", "        return scale\n"}},
      {"GM103", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
      {"GM104", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
      {"GM105", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
      {"GM201", {"import torch\nfrom torch import nn\n\n", "", ""}},
      {"GM202", {"import logging\n\nimport torch\nfrom torch import nn\n\n", "", ""}},
      // The rewrite removed the only use of `warnings`: its import goes.
      {"GM203",
       {"import warnings\n\nimport torch\nfrom torch import nn\n\n", "", "",
        "import torch\nfrom torch import nn\n\n"}},
      {"GM301",
       {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def forward(self, spatial_shapes, sequence_length):\n",
        "        ", "        return spatial_shapes\n"}},
      {"GM302", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
      // The example's only use of `torch` was the call: its import goes.
      {"GM303",
       {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", "",
        "from torch import nn\n\n\nclass M(nn.Module):\n"}},
      {"GM506",
       {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.pos = nn.Buffer(torch.zeros(4), persistent=False)\n\n",
        "    ", ""}},
      {"GM404", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
      {"GM409", {"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n", "    ", ""}},
  };
  return m;
}

TEST(RuleDocs, EveryBeforeAfterExampleIsChecked) {
  // A rule documenting a Before/After example must be listed above.
  for (const lint::Rule* r : lint::rules()) {
    const std::string_view doc = r->documentation();
    if (doc.find("\nBefore") == std::string_view::npos ||
        doc.find("\nAfter") == std::string_view::npos)
      continue;
    EXPECT_TRUE(contexts().count(std::string(r->code()))) << r->code();
  }
}

class RuleDoc : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleDoc, AfterIsTheRealOutput) {
  const std::string code = GetParam();
  const lint::Rule* rule = rule_fixtures::rule_for(code);
  ASSERT_NE(rule, nullptr);
  const std::string_view doc = rule->documentation();
  const std::string before = block_after(doc, "Before");
  const std::string after = block_after(doc, "After");
  ASSERT_FALSE(before.empty()) << code;
  ASSERT_FALSE(after.empty()) << code;
  const Context& c = contexts().at(code);
  const std::string in = c.head + indent(before, c.snippet_indent) + c.tail;
  const std::string want = (c.mended_head.empty() ? c.head : c.mended_head) +
                           indent(without_import(after), c.snippet_indent) + c.tail;
  const std::string got = rule_fixtures::fix_text(code, in);
  EXPECT_NE(got, in) << code << ": the example is not fixed";
  EXPECT_EQ(without_import(got), want) << code;
}

std::vector<std::string> codes() {
  std::vector<std::string> out;
  for (const auto& [k, v] : contexts()) out.push_back(k);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Docs, RuleDoc, ::testing::ValuesIn(codes()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gm::rules

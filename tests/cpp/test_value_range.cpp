// The semantic layer's value ranges (semantic/value_range.h): op results and
// the local names that hold them, on small snippets parsed as Python 3.11.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "analyzed_snippet.h"
#include "parser/parse.h"
#include "semantic/model.h"
#include "semantic/value_range.h"

namespace {

using gm::ast::NodeId;
using gm::ast::NodeKind;

struct Analyzed : gm::testing::Snippet {
  // "[0, 1]" / "[0, 1)" / "none" for the n-th node with that text.
  std::string range(NodeKind kind, std::string_view snippet, int nth = 0) const {
    const NodeId n = find(kind, snippet, nth);
    EXPECT_TRUE(n) << "no node " << snippet;
    const auto r = gm::sema::value_range(model, n);
    if (!r) return "none";
    return std::string(r->lo.closed ? "[" : "(") + r->lo.text + ", " + r->hi.text +
           (r->hi.closed ? "]" : ")");
  }
};

std::unique_ptr<Analyzed> analyze(std::string text) {
  return gm::testing::analyze_snippet<Analyzed>(std::move(text));
}

TEST(ValueRange, OpsFromTheTable) {
  auto a = analyze(
      "import random\n"
      "import torch\n"
      "from random import uniform\n"
      "def f(x: torch.Tensor, n):\n"
      "    a = torch.rand([])\n"
      "    b = torch.rand(2, 3, dtype=torch.float16)\n"
      "    c = torch.rand(2, dtype=torch.int64)\n"
      "    d = torch.rand_like(x)\n"
      "    e = torch.rand_like(x, dtype=torch.float64)\n"
      "    g = random.random()\n"
      "    h = uniform(2, -1.5)\n"
      "    i = random.uniform(0, n)\n"
      "    j = torch.randn([])\n"
      "    k = torch.rand(*n)\n");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand([])"), "[0, 1]");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand(2, 3, dtype=torch.float16)"), "[0, 1]");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand(2, dtype=torch.int64)"), "none");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand_like(x)"), "none");  // x's dtype unknown
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand_like(x, dtype=torch.float64)"), "[0, 1]");
  EXPECT_EQ(a->range(NodeKind::Call, "random.random()"), "[0, 1)");
  EXPECT_EQ(a->range(NodeKind::Call, "uniform(2, -1.5)"), "[-1.5, 2]");
  EXPECT_EQ(a->range(NodeKind::Call, "random.uniform(0, n)"), "none");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.randn([])"), "none");
  EXPECT_EQ(a->range(NodeKind::Call, "torch.rand(*n)"), "none");
  const auto r = gm::sema::value_range(a->model, a->find(NodeKind::Call, "torch.rand([])"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->tensor);
  EXPECT_EQ(r->op, "torch.rand");
  EXPECT_EQ(gm::sema::number_text(0.25), "0.25");
  EXPECT_EQ(gm::sema::number_text(-3.0), "-3");
}

TEST(ValueRange, NamesOnlyWhileNothingCanChangeThem) {
  auto a = analyze(
      "import torch\n"
      "def f(q):\n"
      "    p = torch.rand([])\n"
      "    if p < q:\n"
      "        pass\n"
      "    p = torch.rand([])\n"
      "    return p > q\n"
      "def g(q):\n"
      "    r = torch.rand([])\n"
      "    r.mul_(2)\n"
      "    return r < q\n"
      "def h(q):\n"
      "    s = torch.rand([])\n"
      "    s = s - 1\n"
      "    return s < q\n"
      "def k(q):\n"
      "    t = torch.rand([])\n"
      "    def inner():\n"
      "        return t < q\n"
      "    u = torch.rand([])\n"
      "    print(u)\n"
      "    return u < q\n"
      "def m(q):\n"
      "    global w\n"
      "    w = torch.rand([])\n"
      "    return w < q\n");
  EXPECT_EQ(a->range(NodeKind::Compare, "p < q") == "none", true);  // the Compare itself
  EXPECT_EQ(a->range(NodeKind::Name, "p", 1), "[0, 1]");  // two draws, both in range
  EXPECT_EQ(a->range(NodeKind::Name, "p", 3), "[0, 1]");
  EXPECT_EQ(a->range(NodeKind::Name, "r", 2), "none");    // updated in place
  EXPECT_EQ(a->range(NodeKind::Name, "s", 3), "none");    // rebound to something else
  EXPECT_EQ(a->range(NodeKind::Name, "t", 1), "[0, 1]");  // closure read by a comparison
  EXPECT_EQ(a->range(NodeKind::Name, "u", 2), "none");    // passed to a call
  EXPECT_EQ(a->range(NodeKind::Name, "w", 1), "none");    // a global
}

}  // namespace

// Long expression chains and long `elif` chains: check and fix must not be
// bounded by the C stack (issue 14 item 1). 20,000 terms in the main thread,
// 1,000 in a thread with a 256 KB stack (where CPython compiles them too).
#include <gtest/gtest.h>

#include <pthread.h>

#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "ast/visit.h"
#include "lint/engine.h"
#include "parser/parse.h"
#include "semantic/model.h"

namespace {

using namespace gm;

std::string repeat_join(std::string_view first, std::string_view sep_term, int n) {
  std::string s(first);
  for (int i = 1; i < n; ++i) s += sep_term;
  return s;
}

// The chains the QA report crashed on, each inside a compiled `forward`
// (where every rule looks) and at module level.
std::string chain(const std::string& kind, int n) {
  if (kind == "sum") return repeat_join("x", "+x", n);
  if (kind == "attr") return repeat_join("a", ".b", n);
  if (kind == "call") return repeat_join("f()", "()", n);
  return repeat_join("a[0]", "[0]", n);  // subscript
}

std::string module_with_chain(const std::string& kind, int n) {
  const std::string c = chain(kind, n);
  return "import torch\n"
         "y = " +
         c +
         "\n"
         "class M(torch.nn.Module):\n"
         "    def forward(self, x):\n"
         "        x = torch.relu(x)\n"
         "        y = " +
         c +
         "\n"
         "        if " +
         c +
         ":\n"
         "            print(y)\n"
         "        return y\n";
}

std::string module_with_elifs(int n) {
  std::string s =
      "import torch\n"
      "class M(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        h = torch.relu(x).sum()\n"
      "        if h > 0:\n"
      "            x = x + 1\n";
  for (int i = 1; i < n; ++i)
    s += "        elif h > " + std::to_string(i) + ":\n            x = x + " + std::to_string(i) +
         "\n";
  s += "        return x\n";
  return s;
}

lint::LintOptions options(bool all_functions) {
  lint::LintOptions o;
  sema::AnalyzeOptions ao;
  ao.all_functions = all_functions;
  o.build_model = [ao](const Source& s, const ParseResult& p) {
    return std::make_shared<const sema::Model>(sema::analyze(p.tree, s, ao));
  };
  return o;
}

struct Outcome {
  bool parsed = false;
  std::size_t diagnostics = 0;
  lint::FixResult::Status status{};
  std::size_t rule_errors = 0;
};

Outcome run_everything(const std::string& text) {
  Outcome out;
  const Source src = std::get<Source>(Source::decode(text));
  for (bool all : {false, true}) {
    auto checked = lint::check_source(src, options(all));
    out.parsed = !checked.syntax_error;
    if (!out.parsed) return out;
    out.diagnostics = checked.diagnostics.size();
    out.rule_errors += checked.rule_errors.size();
    auto fixed = lint::fix_to_fixpoint(src, options(all));
    out.status = fixed.status;
    out.rule_errors += fixed.rule_errors.size();
  }
  return out;
}

// Runs f in a thread with a `stack_bytes` stack and waits for it.
void in_small_thread(std::size_t stack_bytes, const std::function<void()>& f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack_bytes), 0);
  pthread_t th;
  auto* arg = const_cast<std::function<void()>*>(&f);
  ASSERT_EQ(pthread_create(
                &th, &attr,
                [](void* p) -> void* {
                  (*static_cast<std::function<void()>*>(p))();
                  return nullptr;
                },
                arg),
            0);
  pthread_join(th, nullptr);
  pthread_attr_destroy(&attr);
}

void expect_completes(const Outcome& o) {
  EXPECT_TRUE(o.parsed);
  EXPECT_EQ(o.rule_errors, 0u);
  EXPECT_NE(o.status, lint::FixResult::Status::NotConverged);
  EXPECT_NE(o.status, lint::FixResult::Status::FixBrokeSyntax);
}

class DeepChain : public ::testing::TestWithParam<std::string> {};

TEST_P(DeepChain, TwentyThousandTermsInTheMainThread) {
  expect_completes(run_everything(module_with_chain(GetParam(), 20000)));
}

TEST_P(DeepChain, OneThousandTermsInA256KThread) {
  Outcome o;
  in_small_thread(256 * 1024, [&] { o = run_everything(module_with_chain(GetParam(), 1000)); });
  expect_completes(o);
}

INSTANTIATE_TEST_SUITE_P(Kinds, DeepChain, ::testing::Values("sum", "attr", "call", "subscript"));

TEST(DeepElif, TwentyThousandBranchesInTheMainThread) {
  const Outcome o = run_everything(module_with_elifs(20000));
  expect_completes(o);
  EXPECT_GT(o.diagnostics, 0u);  // the data-dependent `if` is still reported
}

TEST(DeepElif, OneThousandBranchesInA256KThread) {
  Outcome o;
  in_small_thread(256 * 1024, [&] { o = run_everything(module_with_elifs(1000)); });
  expect_completes(o);
  EXPECT_GT(o.diagnostics, 0u);
}

// The traversal itself: pre-order in field order, subtrees skipped on
// request, Stop ends the walk, enter/leave pair up.
TEST(Visit, OrderSkipAndStop) {
  auto parsed = parse_module(
      std::get<Source>(Source::decode(std::string("a = f(b, c.d)\ng = 1\n"))), ParseOptions{});
  ASSERT_FALSE(parsed.error);
  const ast::Tree& t = parsed.tree;
  std::string order;
  ast::preorder(t, t.root(),
                [&](ast::NodeId n) { order += std::string(ast::node_info(t.kind(n)).name) + " "; });
  EXPECT_EQ(order, "Module Assign Name Call Name Name Attribute Name Assign Name Constant ");
  std::string skipped;
  ast::preorder(t, t.root(), [&](ast::NodeId n) {
    skipped += std::string(ast::node_info(t.kind(n)).name) + " ";
    return t.kind(n) != ast::NodeKind::Call;
  });
  EXPECT_EQ(skipped, "Module Assign Name Call Assign Name Constant ");
  int seen = 0;
  EXPECT_FALSE(ast::preorder(t, t.root(), [&](ast::NodeId n) {
    ++seen;
    return t.kind(n) == ast::NodeKind::Call ? ast::Visit::Stop : ast::Visit::Continue;
  }));
  EXPECT_EQ(seen, 4);
  std::string edges;
  ast::walk(
      t, t.root(),
      [&](ast::NodeId n) {
        edges += "(";
        return t.kind(n) != ast::NodeKind::Call;  // a skipped node is not left
      },
      [&](ast::NodeId) { edges += ")"; });
  EXPECT_EQ(edges, "((()()(()()))");
  std::string post;
  ast::postorder(t, t.root(), [&](ast::NodeId n) {
    if (t.kind(n) == ast::NodeKind::Assign || t.kind(n) == ast::NodeKind::Module)
      post += std::string(ast::node_info(t.kind(n)).name) + " ";
  });
  EXPECT_EQ(post, "Assign Assign Module ");
}

}  // namespace

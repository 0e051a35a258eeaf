// The lint engine: rules, selection, suppression, the fix loop. The rules
// here are TEST-ONLY (codes GM9xx) and are not in the shipped registry.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "edits/tree_query.h"
#include "lint/engine.h"
#include "lint/registry.h"
#include "lint/selection.h"
#include "lint/suppression.h"

namespace gm::lint {
namespace {

using ast::NodeId;
using ast::NodeKind;
using edits::Edit;
using edits::Fix;

Source src(std::string text) { return std::get<Source>(Source::from_utf8(std::move(text))); }

void visit(const ast::Tree& tree, NodeId n, const std::function<void(NodeId)>& f) {
  f(n);
  edits::for_each_child(tree, n, [&](NodeId c) { visit(tree, c, f); });
}

// Base for the test rules: fixed code/name, a trivial doc.
class TestRule : public Rule {
 public:
  TestRule(std::string code, std::string name) : code_(std::move(code)), name_(std::move(name)) {}
  std::string_view code() const override { return code_; }
  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return "test rule"; }
  std::string_view documentation() const override { return "Test only.\n\nNot shipped."; }

 private:
  std::string code_, name_;
};

// GM901: `x == None` -> `x is None` (and != -> is not). Safe fix.
class EqNone : public TestRule {
 public:
  EqNone() : TestRule("GM901", "eq-none") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Compare) return;
      auto ops = tree.raw_list(n, GM_F(Compare, ops));
      auto rhs = tree.children(n, GM_F(Compare, comparators));
      if (ops.size() != 1 || tree.kind(rhs[0]) != NodeKind::Constant) return;
      const auto op = static_cast<NodeKind>(ops[0].index);
      if (op != NodeKind::Eq && op != NodeKind::NotEq) return;
      if (ctx.text_of(rhs[0]) != "None") return;
      const NodeId lhs = tree.child(n, GM_F(Compare, left));
      auto& d = sink.report(tree.at(n).begin, tree.at(n).end, "comparison to None");
      d.why = "test";
      d.fix = Fix::safe("Use `is`", {Edit::replace(tree.at(lhs).end, tree.at(rhs[0]).begin,
                                                   op == NodeKind::Eq ? " is " : " is not ")});
    });
  }
};

// GM902: every `pass` -> `pass(` : a fix that breaks the syntax.
class BreaksSyntax : public TestRule {
 public:
  BreaksSyntax() : TestRule("GM902", "breaks-syntax") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Pass) return;
      sink.report(tree.at(n).begin, tree.at(n).end, "pass").fix =
          Fix::safe("break it", {Edit::replace(tree.at(n).begin, tree.at(n).end, "pass(")});
    });
  }
};

// GM903: `flip = 1` <-> `flip = 2`: cycles forever.
class Flips : public TestRule {
 public:
  Flips() : TestRule("GM903", "flips") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Assign) return;
      const NodeId v = tree.child(n, GM_F(Assign, value));
      if (ctx.text_of(tree.children(n, GM_F(Assign, targets))[0]) != "flip") return;
      const bool one = ctx.text_of(v) == "1";
      sink.report(tree.at(v).begin, tree.at(v).end, "flip").fix =
          Fix::safe("flip", {Edit::replace(tree.at(v).begin, tree.at(v).end, one ? "2" : "1")});
    });
  }
};

// GM904: grows the file forever (appends a statement each round).
class Grows : public TestRule {
 public:
  Grows() : TestRule("GM904", "grows") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto size = static_cast<std::uint32_t>(ctx.text().size());
    sink.report(0, 0, "grow").fix = Fix::safe("grow", {Edit::insert(size, "g = 0\n")});
  }
};

// GM908: `w(<constant>)` -> the constant; an outer `w(w(...))` is reported
// without a fix, so nested calls unwrap one level per round.
class Unwrap : public TestRule {
 public:
  Unwrap() : TestRule("GM908", "unwrap") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call || ctx.text_of(tree.child(n, GM_F(Call, func))) != "w")
        return;
      auto& d = sink.report(tree.at(n).begin, tree.at(n).end, "w");
      const auto args = tree.children(n, GM_F(Call, args));
      if (args.size() == 1 && tree.kind(args[0]) == NodeKind::Constant)
        d.fix = Fix::safe("unwrap", {Edit::replace(tree.at(n).begin, tree.at(n).end,
                                                   std::string(ctx.text_of(args[0])))});
    });
  }
};

// GM905: Name `old` -> `new`. GM906: a call `f()` with no arguments ->
// `f(0)`. On `old()` the two overlap: two rounds.
class Rename : public TestRule {
 public:
  Rename() : TestRule("GM905", "rename") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Name || ctx.text_of(n) != "old") return;
      sink.report(tree.at(n).begin, tree.at(n).end, "old").fix =
          Fix::safe("rename", {Edit::replace(tree.at(n).begin, tree.at(n).end, "new")});
    });
  }
};
class AddArg : public TestRule {
 public:
  AddArg() : TestRule("GM906", "add-arg") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call || !tree.children(n, GM_F(Call, args)).empty()) return;
      const NodeId f = tree.child(n, GM_F(Call, func));
      sink.report(tree.at(n).begin, tree.at(n).end, "no args").fix = Fix::safe(
          "add 0",
          {Edit::replace(tree.at(n).begin, tree.at(n).end, std::string(ctx.text_of(f)) + "(0)")});
    });
  }
};

// GM907: bare `where(` -> `torch.where(` plus `import torch` (shared edit).
class QualifyWhere : public TestRule {
 public:
  QualifyWhere() : TestRule("GM907", "qualify-where") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    visit(tree, tree.root(), [&](NodeId n) {
      if (tree.kind(n) != NodeKind::Call) return;
      const NodeId f = tree.child(n, GM_F(Call, func));
      if (tree.kind(f) != NodeKind::Name || ctx.text_of(f) != "where") return;
      Fix fix =
          Fix::safe("qualify", {Edit::replace(tree.at(f).begin, tree.at(f).end, "torch.where")});
      if (auto imp = ctx.insert_import(edits::ImportSpec::import_module("torch")))
        fix.edits.push_back(*imp);
      sink.report(tree.at(n).begin, tree.at(n).end, "bare where").fix = std::move(fix);
    });
  }
};

// GM908: `x == None` again, with an unsafe fix; GM909: a display-only fix
// and a declined one.
class UnsafeEqNone : public TestRule {
 public:
  UnsafeEqNone() : TestRule("GM908", "unsafe-eq-none") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    EqNone inner;
    DiagnosticSink tmp;
    inner.check(ctx, tmp);
    for (auto& d : tmp.take()) {
      auto& out = sink.report(d.begin, d.end, d.message);
      out.fix = std::move(d.fix);
      out.fix->applicability = edits::Applicability::Unsafe;
    }
  }
};
class DisplayOnly : public TestRule {
 public:
  DisplayOnly() : TestRule("GM909", "display-only") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    for (NodeId s : tree.children(tree.root(), GM_F(Module, body))) {
      if (tree.kind(s) != NodeKind::Expr) continue;
      auto& d = sink.report(tree.at(s).begin, tree.at(s).end, "expression statement");
      if (ctx.text_of(s) == "shown")
        d.fix = Fix::display_only("delete", {ctx.delete_statement(s)});
      else
        d.declined_reason = "value is not proven a tensor";
    }
  }
};

// GM910: a malformed fix (splits the UTF-8 sequence of `é`).
class Malformed : public TestRule {
 public:
  Malformed() : TestRule("GM910", "malformed") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    const auto at = ctx.text().find("\xC3\xA9");
    if (at == std::string_view::npos) return;
    const auto b = static_cast<std::uint32_t>(at);
    sink.report(b, b + 2, "e-acute").fix = Fix::safe("split", {Edit::replace(b + 1, b + 2, "x")});
  }
};

// GM911: throws.
class Throws : public TestRule {
 public:
  Throws() : TestRule("GM911", "throws") {}
  void check(const RuleContext& ctx, DiagnosticSink& sink) const override {
    sink.report(0, 0, "half-done");
    (void)std::string(ctx.text()).at(1u << 30);  // std::out_of_range
  }
};

const EqNone kEqNone;
const Throws kThrows;
const Malformed kMalformed;
const BreaksSyntax kBreaks;
const Flips kFlips;
const Grows kGrows;
const Unwrap kUnwrap;
const Rename kRename;
const AddArg kAddArg;
const QualifyWhere kWhere;
const UnsafeEqNone kUnsafe;
const DisplayOnly kDisplay;

FixResult fix(const std::string& text, std::vector<const Rule*> rules, LintOptions opts = {}) {
  return fix_to_fixpoint(src(text), opts, rules);
}
CheckResult check(const std::string& text, std::vector<const Rule*> rules, LintOptions opts = {}) {
  return check_source(src(text), opts, rules);
}

// -------------------------------------------------------------- registry

TEST(LintRegistry, ShippedRulesAreWellFormed) {
  std::string prev;
  for (const Rule* r : rules()) {
    EXPECT_TRUE(is_valid_selector(r->code()) && r->code().size() == 5) << r->code();
    EXPECT_LT(prev, r->code()) << "sorted and unique";
    prev = std::string(r->code());
    EXPECT_FALSE(r->name().empty());
    EXPECT_FALSE(r->summary().empty());
    EXPECT_NE(r->documentation().find("\n\n"), std::string_view::npos) << "multi-paragraph doc";
    EXPECT_EQ(find_rule(r->code()), r);
  }
  EXPECT_EQ(find_rule("GM901"), nullptr);  // test rules are not shipped
  const std::vector<const Rule*> mine{&kEqNone, &kBreaks};
  EXPECT_EQ(find_rule(mine, "GM902"), &kBreaks);
}

// ------------------------------------------------------------- selection

TEST(LintSelection, Selectors) {
  EXPECT_TRUE(is_valid_selector("ALL"));
  EXPECT_TRUE(is_valid_selector("GM"));
  EXPECT_TRUE(is_valid_selector("GM1"));
  EXPECT_TRUE(is_valid_selector("GM101"));
  EXPECT_FALSE(is_valid_selector("GM1011"));
  EXPECT_FALSE(is_valid_selector("E501"));
  EXPECT_FALSE(is_valid_selector("GM1x"));
  EXPECT_EQ(split_selectors(" GM1, GM201 ,GM3"), (std::vector<std::string>{"GM1", "GM201", "GM3"}));
}

TEST(LintSelection, PrefixesAndSpecificity) {
  RuleSelection all;
  EXPECT_TRUE(all.enabled("GM101"));
  auto s = RuleSelection::parse("GM1", "GM101");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->enabled("GM102"));
  EXPECT_FALSE(s->enabled("GM101"));
  EXPECT_FALSE(s->enabled("GM201"));
  s = RuleSelection::parse("GM101", "GM1");
  EXPECT_TRUE(s->enabled("GM101"));  // the more specific select wins
  EXPECT_FALSE(s->enabled("GM102"));
  s = RuleSelection::parse("GM1", "GM1");
  EXPECT_FALSE(s->enabled("GM101"));  // a tie: ignore wins
  s = RuleSelection::parse("ALL", "GM2,GM3");
  EXPECT_TRUE(s->enabled("GM101"));
  EXPECT_FALSE(s->enabled("GM301"));
  s = RuleSelection::parse("", "ALL");
  EXPECT_FALSE(s->enabled("GM101"));
  std::string bad;
  EXPECT_FALSE(RuleSelection::parse("GM1,XYZ", "", &bad));
  EXPECT_EQ(bad, "XYZ");
}

TEST(LintSelection, EngineRunsOnlySelectedRules) {
  const std::vector<const Rule*> rs{&kEqNone, &kDisplay};
  LintOptions o;
  o.selection = *RuleSelection::parse("GM90", "GM909");
  auto r = check("x == None\n", rs, o);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "GM901");
  o.selection = *RuleSelection::parse("GM909", "");
  r = check("x == None\n", rs, o);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].code, "GM909");
  o.selection = *RuleSelection::parse("GM1", "");
  EXPECT_TRUE(check("x == None\n", rs, o).diagnostics.empty());
}

// ----------------------------------------------------------- diagnostics

TEST(LintDiagnostics, CodesPositionsAndOrder) {
  const std::vector<const Rule*> rs{&kEqNone, &kDisplay};
  auto r = check("a = 1\n\xC3\xA9 == None\n", rs);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  // Same begin: sorted by code.
  EXPECT_EQ(r.diagnostics[0].code, "GM901");
  EXPECT_EQ(r.diagnostics[1].code, "GM909");
  const auto& d = r.diagnostics[0];
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_EQ(d.loc.col, 0u);
  EXPECT_EQ(d.loc.char_col, 1u);
  EXPECT_EQ(d.loc.end_line, 2u);
  EXPECT_EQ(d.loc.end_col, 10u);       // bytes: é is 2
  EXPECT_EQ(d.loc.end_char_col, 10u);  // 9 chars, then 1-based
  EXPECT_TRUE(d.fixable());
  EXPECT_EQ(d.applicability(), edits::Applicability::Safe);
  EXPECT_EQ(r.diagnostics[1].declined_reason, "value is not proven a tensor");
  EXPECT_FALSE(r.diagnostics[1].fixable());
}

TEST(LintDiagnostics, SyntaxErrorRunsNoRule) {
  auto r = check("x == None\ndef (\n", {&kEqNone});
  EXPECT_TRUE(r.syntax_error.has_value());
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(LintDiagnostics, ModelBuilderIsCalledPerParse) {
  int calls = 0;
  LintOptions o;
  o.build_model = [&](const Source&, const ParseResult&) {
    ++calls;
    return std::shared_ptr<const sema::Model>();
  };
  auto r = fix("x == None\n", {&kEqNone}, o);
  EXPECT_EQ(r.text, "x is None\n");
  EXPECT_EQ(calls, 2);  // round 1 (fix) + round 2 (nothing left)
}

// ----------------------------------------------------------- suppression

TEST(LintSuppression, ParsesDirectives) {
  std::vector<std::string> codes;
  std::size_t b = 0, e = 0;
  EXPECT_TRUE(parse_suppression_comment("# graphmend: ignore", codes, b, e));
  EXPECT_TRUE(codes.empty());
  EXPECT_TRUE(parse_suppression_comment("#graphmend:ignore[GM101,GM2]", codes, b, e));
  EXPECT_EQ(codes, (std::vector<std::string>{"GM101", "GM2"}));
  EXPECT_TRUE(
      parse_suppression_comment("# noqa: E501  # graphmend: ignore[ GM1 ]  trailing", codes, b, e));
  EXPECT_EQ(codes, (std::vector<std::string>{"GM1"}));
  EXPECT_EQ(b, 14u);
  EXPECT_FALSE(parse_suppression_comment("# graphmend: ignored", codes, b, e));
  EXPECT_FALSE(parse_suppression_comment("# graphmend: ignore[GM1", codes, b, e));
  EXPECT_FALSE(parse_suppression_comment("# graphmend: ignore[]", codes, b, e));
  EXPECT_FALSE(parse_suppression_comment("# type: ignore", codes, b, e));
}

TEST(LintSuppression, OnTheDiagnosticsLine) {
  const std::vector<const Rule*> rs{&kEqNone};
  EXPECT_EQ(check("x == None  # graphmend: ignore[GM901]\n", rs).diagnostics.size(), 0u);
  EXPECT_EQ(check("x == None  # graphmend: ignore\n", rs).diagnostics.size(), 0u);
  EXPECT_EQ(check("x == None  # graphmend: ignore[GM9]\n", rs).diagnostics.size(), 0u);
  auto r = check("x == None  # graphmend: ignore[GM1]\n", rs);
  EXPECT_EQ(r.diagnostics.size(), 1u);
  ASSERT_EQ(r.unused_suppressions.size(), 1u);
  EXPECT_EQ(r.unused_suppressions[0].codes, (std::vector<std::string>{"GM1"}));
  // Only on its own line.
  EXPECT_EQ(check("# graphmend: ignore\nx == None\n", rs).diagnostics.size(), 1u);
  // A '#' inside a string is not a comment.
  EXPECT_EQ(check("x == None, '# graphmend: ignore'\n", rs).diagnostics.size(), 1u);
}

TEST(LintSuppression, OnTheFirstLineOfTheStatement) {
  const std::vector<const Rule*> rs{&kEqNone};
  auto r = check("y = (  # graphmend: ignore[GM901]\n    x == None)\n", rs);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_EQ(r.suppressed, 1u);
  EXPECT_TRUE(r.unused_suppressions.empty());
  r = check("if (a and  # graphmend: ignore\n    x == None):\n    pass\n", rs);
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(LintSuppression, SuppressedFixesAreNotApplied) {
  auto r = fix("a == None  # graphmend: ignore\nb == None\n", {&kEqNone});
  EXPECT_EQ(r.text, "a == None  # graphmend: ignore\nb is None\n");
}

// -------------------------------------------------------------- fix loop

TEST(LintFix, AppliesSafeFixes) {
  auto r = fix("if x == None or y != None:\n    pass\n", {&kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text, "if x is None or y is not None:\n    pass\n");
  EXPECT_EQ(r.rounds, 1);
  EXPECT_EQ(r.applied_per_code(), (std::map<std::string, int>{{"GM901", 2}}));
  EXPECT_TRUE(r.remaining.empty());
}

TEST(LintFix, KeepsCrlf) {
  auto r = fix("a = 1\r\nif x == None:\r\n    pass\r\n", {&kEqNone});
  EXPECT_EQ(r.text, "a = 1\r\nif x is None:\r\n    pass\r\n");
}

TEST(LintFix, NothingToFix) {
  auto r = fix("x is None\n", {&kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::Unchanged);
  EXPECT_EQ(r.text, "x is None\n");
  EXPECT_EQ(r.rounds, 0);
}

TEST(LintFix, IsIdempotent) {
  const std::vector<const Rule*> rs{&kEqNone, &kRename, &kAddArg, &kWhere};
  for (std::string text : {"old() == None\n", "x = where(old(), a == None)\ny = where(b, c)\n",
                           "'''doc'''\nimport os\n\ndef f():\n    return where(a, b)  # c\n"}) {
    auto once = fix(text, rs);
    ASSERT_NE(once.status, FixResult::Status::FixBrokeSyntax) << text;
    auto twice = fix(once.text, rs);
    EXPECT_EQ(twice.text, once.text) << text;
    EXPECT_EQ(twice.status, FixResult::Status::Unchanged) << text;
  }
}

TEST(LintFix, OverlappingFixesTakeTwoRounds) {
  auto r = fix("old()\n", {&kRename, &kAddArg});
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text, "new(0)\n");
  EXPECT_EQ(r.rounds, 2);
  ASSERT_EQ(r.applied.size(), 2u);
  EXPECT_EQ(r.applied[0].code, "GM905");
  EXPECT_EQ(r.applied[0].round, 1);
  EXPECT_EQ(r.applied[1].code, "GM906");
  EXPECT_EQ(r.applied[1].round, 2);
}

TEST(LintFix, SharedImportIsAddedOnce) {
  auto r = fix("'''doc'''\nx = where(a, b)\ny = where(c, d)\n", {&kWhere});
  EXPECT_EQ(r.text, "'''doc'''\nimport torch\nx = torch.where(a, b)\ny = torch.where(c, d)\n");
  EXPECT_EQ(r.rounds, 1);
  EXPECT_EQ(r.applied_per_code().at("GM907"), 2);
}

TEST(LintFix, SyntaxErrorRevertsTheWholeFileAndNamesTheFix) {
  const std::string text = "if x == None:\n    pass\n";
  auto r = fix(text, {&kEqNone, &kBreaks});
  EXPECT_EQ(r.status, FixResult::Status::FixBrokeSyntax);
  EXPECT_EQ(r.text, text);
  EXPECT_TRUE(r.applied.empty());
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].code, "GM902");
  EXPECT_EQ(r.culprits[0].description, "break it");
  ASSERT_TRUE(r.syntax_error.has_value());
  EXPECT_EQ(r.remaining.size(), 2u);  // the input's diagnostics
}

TEST(LintFix, CycleIsNotConvergedAndKeepsTheOriginal) {
  const std::string text = "flip = 1\nx == None\n";
  auto r = fix(text, {&kFlips, &kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::NotConverged);
  EXPECT_EQ(r.text, text);
  EXPECT_TRUE(r.applied.empty());
  ASSERT_FALSE(r.culprits.empty());
  EXPECT_EQ(r.culprits[0].code, "GM903");
}

TEST(LintFix, GrowingFileStopsAtTheRoundLimit) {
  LintOptions o;
  o.max_rounds = 4;
  auto r = fix("x = 1\n", {&kGrows}, o);
  EXPECT_EQ(r.status, FixResult::Status::NotConverged);
  EXPECT_EQ(r.text, "x = 1\n");
  EXPECT_EQ(r.rounds, 5);  // max_rounds + the input's one finding
}

// Issue 14 item 6: fixes revealed one level per round (nested tensor `if`s,
// chained conditional expressions) converge past max_rounds.
TEST(LintFix, NestedFixesConvergePastMaxRounds) {
  std::string text = "x = ";
  for (int i = 0; i < 25; ++i) text += "w(";
  text += "1" + std::string(25, ')') + "\n";
  auto r = fix(text, {&kUnwrap});
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text, "x = 1\n");
  EXPECT_EQ(r.rounds, 25);
  EXPECT_TRUE(r.remaining.empty());
}

// At the bound, the rounds that lowered the number of findings are kept;
// the fixes still pending are named.
TEST(LintFix, AtTheBoundTheConvergedFixesAreKept) {
  LintOptions o;
  o.max_rounds = 2;
  auto r = fix("x = w(w(1))\n", {&kUnwrap, &kGrows}, o);
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text.substr(0, 6), "x = 1\n");
  ASSERT_FALSE(r.culprits.empty());
  EXPECT_EQ(r.culprits[0].code, "GM904");
  EXPECT_EQ(r.applied_per_code().at("GM908"), 2);
  // The kept text maps back to the input: every byte outside the markers
  // is the input's byte at the mapped offset.
  ASSERT_FALSE(r.source_map.empty());
  std::uint32_t dest = 0, src = 0;
  const std::string input = "x = w(w(1))\n";
  for (const auto& m : r.source_map.markers()) {
    EXPECT_EQ(r.text.substr(dest, m.dest_begin - dest), input.substr(src, m.src_begin - src));
    dest = m.dest_end;
    src = m.src_end;
  }
  EXPECT_EQ(r.text.substr(dest), input.substr(src));
}

// Inner first: of two nested fixes the inner one applies, and fixes
// inside one outer fix all apply in the same round.
TEST(LintFix, InnerFixesWinOverlaps) {
  const edits::Fix outer = Fix::safe("outer", {Edit::replace(0, 9, "X")});
  const edits::Fix a = Fix::safe("a", {Edit::replace(2, 3, "A")});
  const edits::Fix b = Fix::safe("b", {Edit::replace(5, 6, "B")});
  const std::vector<edits::Fix> fixes{outer, a, b};
  const auto res = edits::apply_fixes("f(a, b) + 1", fixes);
  EXPECT_EQ(res.text, "f(A, B) + 1");
  EXPECT_EQ(res.applied, 2u);
  EXPECT_EQ(res.status[0], edits::FixStatus::Conflict);
}

TEST(LintFix, UnsafeFixesOnlyWhenEnabled) {
  auto r = fix("x == None\n", {&kUnsafe});
  EXPECT_EQ(r.status, FixResult::Status::Unchanged);
  ASSERT_EQ(r.remaining.size(), 1u);
  EXPECT_EQ(r.remaining[0].applicability(), edits::Applicability::Unsafe);
  LintOptions o;
  o.unsafe_fixes = true;
  r = fix("x == None\n", {&kUnsafe}, o);
  EXPECT_EQ(r.text, "x is None\n");
}

TEST(LintFix, DisplayOnlyFixesAreNeverApplied) {
  LintOptions o;
  o.unsafe_fixes = true;
  auto r = fix("shown\nother\n", {&kDisplay}, o);
  EXPECT_EQ(r.status, FixResult::Status::Unchanged);
  EXPECT_EQ(r.remaining.size(), 2u);
}

TEST(LintFix, MalformedFixIsReportedAndSkipped) {
  auto r = fix("s = '\xC3\xA9'\nx == None\n", {&kMalformed, &kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text, "s = '\xC3\xA9'\nx is None\n");
  ASSERT_FALSE(r.invalid.empty());
  EXPECT_EQ(r.invalid[0].code, "GM910");
  ASSERT_EQ(r.remaining.size(), 1u);
  EXPECT_EQ(r.remaining[0].code, "GM910");
}

TEST(LintFix, ThrowingRuleIsContained) {
  auto c = check("x == None\n", {&kThrows, &kEqNone});
  ASSERT_EQ(c.rule_errors.size(), 1u);
  EXPECT_EQ(c.rule_errors[0].code, "GM911");
  ASSERT_EQ(c.diagnostics.size(), 1u);  // the thrower's partial findings are dropped
  EXPECT_EQ(c.diagnostics[0].code, "GM901");
  auto r = fix("x == None\n", {&kThrows, &kEqNone});
  EXPECT_EQ(r.text, "x is None\n");
  EXPECT_FALSE(r.rule_errors.empty());
}

TEST(LintFix, InputSyntaxErrorIsUntouched) {
  auto r = fix("x == None\nif\n", {&kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::InputSyntaxError);
  EXPECT_EQ(r.text, "x == None\nif\n");
  EXPECT_TRUE(r.syntax_error.has_value());
}

TEST(LintFix, BomFileRoundTrips) {
  auto s = std::get<Source>(Source::decode("\xEF\xBB\xBFx == None\n"));
  auto r = fix_to_fixpoint(s, LintOptions{}, std::vector<const Rule*>{&kEqNone});
  EXPECT_EQ(r.status, FixResult::Status::Fixed);
  EXPECT_EQ(r.text, "\xEF\xBB\xBFx is None\n");
  EXPECT_EQ(status_name(r.status), "fixed");
}

}  // namespace
}  // namespace gm::lint

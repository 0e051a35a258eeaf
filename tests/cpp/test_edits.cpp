// Edits: applying fixes, and the formatting-preserving edit builders.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "edits/edit.h"
#include "edits/helpers.h"
#include "edits/text.h"
#include "edits/tree_query.h"
#include "parser/parse.h"
#include "syntax/source.h"

namespace gm::edits {
namespace {

using ast::NodeId;
using ast::NodeKind;

// A parsed file plus its style, for the helpers.
struct Parsed {
  Source source;
  ParseResult result;
  Stylist style;
  explicit Parsed(std::string text)
      : source(std::get<Source>(Source::from_utf8(std::move(text)))),
        result(parse_module(source, ParseOptions{})),
        style(Stylist::detect(source.text(), result.lexed)) {
    EXPECT_FALSE(result.error.has_value()) << (result.error ? result.error->message : "");
  }
  FileView view() const { return FileView{source.text(), result.tree, result.lexed, style}; }
  std::span<const NodeId> body() const {
    return result.tree.children(result.tree.root(), GM_F(Module, body));
  }
  std::string apply(const Edit& e) const {
    Fix f = Fix::safe("test", {e});
    auto r = apply_fixes(source.text(), std::span(&f, 1));
    EXPECT_EQ(r.applied, 1u);
    return r.text;
  }
};

Fix fix1(Edit e) { return Fix::safe("f", {std::move(e)}); }

// ---------------------------------------------------------------- apply_fixes

TEST(EditsApply, SingleReplacement) {
  std::vector<Fix> fixes{fix1(Edit::replace(4, 6, "is"))};
  auto r = apply_fixes("x = == None", fixes);
  EXPECT_EQ(r.text, "x = is None");
  EXPECT_EQ(r.applied, 1u);
  EXPECT_EQ(r.status[0], FixStatus::Applied);
}

TEST(EditsApply, SortsFixesGivenOutOfOrder) {
  std::vector<Fix> fixes{fix1(Edit::replace(8, 9, "C")), fix1(Edit::insert(0, ">")),
                         fix1(Edit::remove(4, 5))};
  auto r = apply_fixes("aaa bbb c", fixes);
  EXPECT_EQ(r.text, ">aaa bb C");
  EXPECT_EQ(r.applied, 3u);
}

TEST(EditsApply, OverlappingFixIsSkippedAndReported) {
  std::vector<Fix> fixes{fix1(Edit::replace(2, 6, "X")), fix1(Edit::replace(0, 3, "Y")),
                         fix1(Edit::replace(7, 8, "Z"))};
  auto r = apply_fixes("0123456789", fixes);
  // Sorted by begin: [0,3) is accepted first, [2,6) overlaps it.
  EXPECT_EQ(r.text, "Y3456Z89");
  EXPECT_EQ(r.status[0], FixStatus::Conflict);
  EXPECT_EQ(r.status[1], FixStatus::Applied);
  EXPECT_EQ(r.status[2], FixStatus::Applied);
  EXPECT_EQ(r.conflicts, 1u);
}

TEST(EditsApply, MultiEditFixConflictsAsAWhole) {
  std::vector<Fix> fixes{fix1(Edit::replace(5, 7, "A")),
                         Fix::safe("two", {Edit::insert(0, "+"), Edit::replace(6, 8, "B")})};
  auto r = apply_fixes("0123456789", fixes);
  // "two" starts first (begin 0) and wins; the other overlaps its 2nd edit.
  EXPECT_EQ(r.text, "+012345B89");
  EXPECT_EQ(r.status[0], FixStatus::Conflict);
  EXPECT_EQ(r.status[1], FixStatus::Applied);
}

TEST(EditsApply, IdenticalEditsAreSharedNotDuplicated) {
  const std::string imp = "import torch\n";
  std::vector<Fix> fixes{Fix::safe("a", {Edit::insert(0, imp), Edit::replace(2, 3, "A")}),
                         Fix::safe("b", {Edit::insert(0, imp), Edit::replace(7, 8, "B")})};
  auto r = apply_fixes("x=a; y=b\n", fixes);
  EXPECT_EQ(r.text, "import torch\nx=A; y=B\n");
  EXPECT_EQ(r.applied, 2u);
}

TEST(EditsApply, TwoDifferentInsertionsAtOnePointConflict) {
  std::vector<Fix> fixes{fix1(Edit::insert(1, "a")), fix1(Edit::insert(1, "b"))};
  auto r = apply_fixes("xy", fixes);
  EXPECT_EQ(r.text, "xay");
  EXPECT_EQ(r.conflicts, 1u);
}

TEST(EditsApply, TouchingRangesDoNotConflict) {
  std::vector<Fix> fixes{fix1(Edit::replace(0, 2, "A")), fix1(Edit::replace(2, 4, "B")),
                         fix1(Edit::insert(4, "|"))};
  auto r = apply_fixes("aabbcc", fixes);
  EXPECT_EQ(r.text, "AB|cc");
  EXPECT_EQ(r.applied, 3u);
}

TEST(EditsApply, InsertionInsideAReplacedRangeConflicts) {
  std::vector<Fix> fixes{fix1(Edit::replace(0, 4, "X")), fix1(Edit::insert(2, "!"))};
  auto r = apply_fixes("abcdef", fixes);
  // Inner first (issue 14 item 6): the insertion nested in the replaced
  // range wins the round; the outer fix waits for the next one.
  EXPECT_EQ(r.text, "ab!cdef");
  EXPECT_EQ(r.status[0], FixStatus::Conflict);
  EXPECT_EQ(r.status[1], FixStatus::Applied);
}

TEST(EditsApply, NeverSplitsUtf8) {
  const std::string text = "a = '\xC3\xA9'";  // é is 2 bytes at [5, 7)
  std::vector<Fix> fixes{fix1(Edit::replace(6, 7, "x"))};
  auto r = apply_fixes(text, fixes);
  EXPECT_EQ(r.status[0], FixStatus::Invalid);
  EXPECT_EQ(r.text, text);
  EXPECT_FALSE(validate_fix(text, fixes[0]).empty());
  std::vector<Fix> ok{fix1(Edit::replace(5, 7, "\xE2\x82\xAC"))};  // €
  EXPECT_EQ(apply_fixes(text, ok).text, "a = '\xE2\x82\xAC'");
}

TEST(EditsApply, RejectsInvalidUtf8Replacement) {
  std::vector<Fix> fixes{fix1(Edit::replace(0, 1, "\xC3")),
                         fix1(Edit::replace(1, 2, "\xED\xA0\x80"))};
  auto r = apply_fixes("ab", fixes);
  EXPECT_EQ(r.invalid, 2u);
  EXPECT_EQ(r.text, "ab");
}

TEST(EditsApply, NeverSplitsCrlf) {
  const std::string text = "a\r\nb\r\n";
  std::vector<Fix> bad{fix1(Edit::insert(2, "x"))};
  EXPECT_EQ(apply_fixes(text, bad).status[0], FixStatus::Invalid);
  std::vector<Fix> bad2{fix1(Edit::remove(0, 2))};
  EXPECT_EQ(apply_fixes(text, bad2).status[0], FixStatus::Invalid);
  std::vector<Fix> good{fix1(Edit::remove(0, 3))};
  EXPECT_EQ(apply_fixes(text, good).text, "b\r\n");
}

TEST(EditsApply, RejectsOutOfRangeAndSelfOverlappingAndEmptyFixes) {
  std::vector<Fix> fixes{fix1(Edit::replace(2, 9, "x")),
                         Fix::safe("self", {Edit::replace(0, 2, "a"), Edit::replace(1, 3, "b")}),
                         Fix::safe("empty", {})};
  auto r = apply_fixes("abc", fixes);
  EXPECT_EQ(r.status[0], FixStatus::Invalid);
  EXPECT_EQ(r.status[1], FixStatus::Invalid);
  EXPECT_EQ(r.status[2], FixStatus::Empty);
  EXPECT_EQ(r.text, "abc");
}

TEST(EditsApply, FixRangeAndApplicabilityNames) {
  Fix f = Fix::unsafe("d", {Edit::replace(5, 7, ""), Edit::insert(2, "x")});
  EXPECT_EQ(f.begin(), 2u);
  EXPECT_EQ(f.end(), 7u);
  EXPECT_EQ(applicability_name(f.applicability), "unsafe");
  EXPECT_EQ(applicability_name(Applicability::Safe), "safe");
  EXPECT_EQ(applicability_name(Applicability::DisplayOnly), "display-only");
  EXPECT_LT(Applicability::Unsafe, Applicability::Safe);
}

// ------------------------------------------------------------------ style

TEST(EditsStyle, NewlineStyle) {
  EXPECT_EQ(detect_newline("a\nb\r\n"), NewlineStyle::LF);
  EXPECT_EQ(detect_newline("a\r\nb\n"), NewlineStyle::CRLF);
  EXPECT_EQ(detect_newline("a\rb"), NewlineStyle::CR);
  EXPECT_EQ(detect_newline("a"), NewlineStyle::LF);
}

TEST(EditsStyle, IndentUnitAndQuote) {
  Parsed two("x = 'a'\nif x:\n  if x:\n    y = \"b\"\n");
  EXPECT_EQ(two.style.indent_unit, "  ");
  EXPECT_EQ(two.style.quote, '\'');
  Parsed tab("if x:\n\ty = 1\n");
  EXPECT_EQ(tab.style.indent_unit, "\t");
  EXPECT_EQ(tab.style.quote, '"');  // default
  Parsed doc("\"\"\"doc\"\"\"\nx = b'q'\n");  // triple-quoted strings do not count
  EXPECT_EQ(doc.style.quote, '\'');
  Parsed fstr("x = f'{a}'\n");
  EXPECT_EQ(fstr.style.quote, '\'');
}

TEST(EditsStyle, LineBounds) {
  const std::string_view t = "ab\r\ncd\ref\n";
  EXPECT_EQ(line_start(t, 5), 4u);
  EXPECT_EQ(line_end(t, 4), 6u);
  EXPECT_EQ(full_line_end(t, 0), 4u);
  EXPECT_EQ(full_line_end(t, 4), 7u);
  EXPECT_EQ(full_line_end(t, 8), 10u);
  EXPECT_EQ(line_break_len(t, 2), 2u);
  EXPECT_EQ(line_indentation("if x:\n    y\n", 10), "    ");
  EXPECT_EQ(statement_indentation("if x:\n    y\n", 10), std::optional<std::string_view>("    "));
  EXPECT_FALSE(statement_indentation("a; b\n", 3).has_value());
  EXPECT_TRUE(only_trivia_after("a  # c\nb", 1));
  EXPECT_FALSE(only_trivia_after("a; b", 1));
}

TEST(EditsStyle, QuoteString) {
  Stylist dq;
  Stylist sq;
  sq.quote = '\'';
  EXPECT_EQ(quote_string("hi", dq), "\"hi\"");
  EXPECT_EQ(quote_string("hi", sq), "'hi'");
  EXPECT_EQ(quote_string("it's", sq), "\"it's\"");
  EXPECT_EQ(quote_string("a\"b'c", dq), "\"a\\\"b'c\"");
  EXPECT_EQ(quote_string("a\\b\n\x01", dq), "\"a\\\\b\\n\\x01\"");
}

// ---------------------------------------------------------- tree queries

TEST(EditsTree, EnclosingStatementAndSlot) {
  Parsed p("def f(x):\n    if x:\n        return x + 1\n");
  const auto& tree = p.result.tree;
  const std::uint32_t at =
      static_cast<std::uint32_t>(std::string_view(p.source.text()).find("x + 1"));
  NodeId ret = enclosing_statement(tree, at);
  ASSERT_TRUE(ret);
  EXPECT_EQ(tree.kind(ret), NodeKind::Return);
  StatementSlot slot = find_statement_slot(tree, ret);
  EXPECT_EQ(tree.kind(slot.parent), NodeKind::If);
  EXPECT_EQ(slot.body.size(), 1u);
  EXPECT_EQ(tree.kind(enclosing_statement(tree, 0)), NodeKind::FunctionDef);
  EXPECT_FALSE(module_docstring(tree));
  Parsed d("'''doc'''\nx = 1\n");
  EXPECT_EQ(module_docstring(d.result.tree), d.body()[0]);
}

// ------------------------------------------------------ replace_statement

TEST(EditsReplace, ReindentsToStatementAndFileUnit) {
  Parsed p("def f(x):\n  y = x\n  return y\n");
  const NodeId fn = p.body()[0];
  const NodeId assign = p.result.tree.children(fn, GM_F(FunctionDef, body))[0];
  const std::vector<std::string> lines{"if x:", "    y = 1", "else:", "    y = 2"};
  auto e = replace_statement(p.view(), assign, lines);
  ASSERT_TRUE(e);
  EXPECT_EQ(p.apply(*e), "def f(x):\n  if x:\n    y = 1\n  else:\n    y = 2\n  return y\n");
}

TEST(EditsReplace, UsesTabsAndCrlf) {
  Parsed p("if a:\r\n\tz = 0  # keep\r\n");
  const NodeId iff = p.body()[0];
  const NodeId assign = p.result.tree.children(iff, GM_F(If, body))[0];
  const std::vector<std::string> lines{"with t:", "    z = 1"};
  auto e = replace_statement(p.view(), assign, lines);
  ASSERT_TRUE(e);
  EXPECT_EQ(p.apply(*e), "if a:\r\n\twith t:\r\n\t\tz = 1  # keep\r\n");
}

TEST(EditsReplace, KeepsCommentsInsideTheRange) {
  Parsed p("x = f(a,  # first\n      b)  # tail\n");
  const std::vector<std::string> lines{"x = g(a, b)"};
  auto e = replace_statement(p.view(), p.body()[0], lines);
  ASSERT_TRUE(e);
  EXPECT_EQ(p.apply(*e), "# first\nx = g(a, b)  # tail\n");
  auto dropped = replace_statement(p.view(), p.body()[0], lines, /*keep_comments=*/false);
  EXPECT_EQ(p.apply(*dropped), "x = g(a, b)  # tail\n");
}

TEST(EditsReplace, DeclinesMultipleLinesAfterSemicolon) {
  Parsed p("a = 1; b = 2\n");
  const std::vector<std::string> two{"if a:", "    b = 3"};
  EXPECT_FALSE(replace_statement(p.view(), p.body()[1], two).has_value());
  const std::vector<std::string> one{"b = 3"};
  auto e = replace_statement(p.view(), p.body()[1], one);
  ASSERT_TRUE(e);
  EXPECT_EQ(p.apply(*e), "a = 1; b = 3\n");
}

// ------------------------------------------------------- delete_statement

TEST(EditsDelete, WholeLineWithTrailingComment) {
  Parsed p("a = 1\nprint(a)  # debug\nb = 2\n");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[1])), "a = 1\nb = 2\n");
}

TEST(EditsDelete, MultiLineStatementCrlf) {
  Parsed p("a = 1\r\nprint(a,\r\n      2)\r\nb = 2\r\n");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[1])), "a = 1\r\nb = 2\r\n");
}

TEST(EditsDelete, OnlyStatementOfABlockBecomesPass) {
  Parsed p("def f():\n    print(1)  # note\n");
  const NodeId call = p.result.tree.children(p.body()[0], GM_F(FunctionDef, body))[0];
  EXPECT_EQ(p.apply(delete_statement(p.view(), call)), "def f():\n    pass  # note\n");
}

TEST(EditsDelete, OnlyStatementOfElseAndOneLineBlock) {
  Parsed p("if a:\n    b = 1\nelse:\n    b = 2\nwhile a: a -= 1\n");
  const auto& tree = p.result.tree;
  const NodeId else_stmt = tree.children(p.body()[0], GM_F(If, orelse))[0];
  EXPECT_EQ(p.apply(delete_statement(p.view(), else_stmt)),
            "if a:\n    b = 1\nelse:\n    pass\nwhile a: a -= 1\n");
  const NodeId loop_stmt = tree.children(p.body()[1], GM_F(While, body))[0];
  EXPECT_EQ(p.apply(delete_statement(p.view(), loop_stmt)),
            "if a:\n    b = 1\nelse:\n    b = 2\nwhile a: pass\n");
  // In the module, the statement simply goes.
  Parsed q("x = 1\n");
  EXPECT_EQ(q.apply(delete_statement(q.view(), q.body()[0])), "");
}

TEST(EditsDelete, StatementsSharingALine) {
  Parsed p("a = 1; b = 2; c = 3\n");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[0])), "b = 2; c = 3\n");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[1])), "a = 1; c = 3\n");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[2])), "a = 1; b = 2\n");
  Parsed q("a = 1;\nb = 2\n");
  EXPECT_EQ(q.apply(delete_statement(q.view(), q.body()[0])), "b = 2\n");
}

TEST(EditsDelete, LastLineWithoutNewline) {
  Parsed p("a = 1\nb = 2");
  EXPECT_EQ(p.apply(delete_statement(p.view(), p.body()[1])), "a = 1\n");
}

// ---------------------------------------------------------- insert_import

std::string with_import(const std::string& text, const ImportSpec& spec) {
  Parsed p(text);
  auto e = insert_import(p.view(), spec);
  if (!e) return text;
  return p.apply(*e);
}

const ImportSpec kTorch = ImportSpec::import_module("torch");

TEST(EditsImport, SpecText) {
  EXPECT_EQ(kTorch.statement(), "import torch");
  EXPECT_EQ(ImportSpec::import_module("torch.nn.functional", "F").statement(),
            "import torch.nn.functional as F");
  EXPECT_EQ(ImportSpec::from_import("graphmend", "runtime", "_gm").statement(),
            "from graphmend import runtime as _gm");
  EXPECT_EQ(ImportSpec::import_module("torch.nn").bound_name(), "torch");
  EXPECT_EQ(ImportSpec::from_import("a", "b").bound_name(), "b");
}

TEST(EditsImport, EmptyFile) { EXPECT_EQ(with_import("", kTorch), "import torch\n"); }

TEST(EditsImport, TopOfFileWithoutImports) {
  EXPECT_EQ(with_import("x = 1\n", kTorch), "import torch\nx = 1\n");
  EXPECT_EQ(with_import("# comment\nx = 1\n", kTorch), "import torch\n# comment\nx = 1\n");
}

TEST(EditsImport, AfterShebangAndCodingCookie) {
  EXPECT_EQ(with_import("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n", kTorch),
            "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport torch\nx = 1\n");
}

TEST(EditsImport, AfterDocstring) {
  EXPECT_EQ(with_import("\"\"\"Doc.\n\nMore.\n\"\"\"\nx = 1\n", kTorch),
            "\"\"\"Doc.\n\nMore.\n\"\"\"\nimport torch\nx = 1\n");
}

TEST(EditsImport, AfterFutureImports) {
  EXPECT_EQ(with_import("'''d'''\nfrom __future__ import annotations\n\nx = 1\n", kTorch),
            "'''d'''\nfrom __future__ import annotations\nimport torch\n\nx = 1\n");
}

TEST(EditsImport, AfterExistingImports) {
  EXPECT_EQ(
      with_import("import os\nfrom typing import (\n    Any,\n    List,\n)  # c\n\nx = 1\n",
                  kTorch),
      "import os\nfrom typing import (\n    Any,\n    List,\n)  # c\nimport torch\n\nx = 1\n");
}

TEST(EditsImport, BeforeTheFirstUse) {
  Parsed p("import os\nx = 1\nimport sys\ny = 2\n");
  const auto use = static_cast<std::uint32_t>(std::string_view(p.source.text()).find("x = 1"));
  auto e = insert_import(p.view(), kTorch, use);
  ASSERT_TRUE(e);
  EXPECT_EQ(p.apply(*e), "import os\nimport torch\nx = 1\nimport sys\ny = 2\n");
}

TEST(EditsImport, CrlfFile) {
  EXPECT_EQ(with_import("import os\r\nx = 1\r\n", kTorch),
            "import os\r\nimport torch\r\nx = 1\r\n");
  EXPECT_EQ(with_import("x = 1\r\n", kTorch), "import torch\r\nx = 1\r\n");
}

TEST(EditsImport, CrOnlyFile) {
  EXPECT_EQ(with_import("import os\rx = 1\r", kTorch), "import os\rimport torch\rx = 1\r");
}

TEST(EditsImport, FileWithoutTrailingNewline) {
  EXPECT_EQ(with_import("import os", kTorch), "import os\nimport torch");
  EXPECT_EQ(with_import("'doc'", kTorch), "'doc'\nimport torch");
  EXPECT_EQ(with_import("x = 1", kTorch), "import torch\nx = 1");
  EXPECT_EQ(with_import("# -*- coding: utf-8 -*-", kTorch),
            "# -*- coding: utf-8 -*-\nimport torch");
}

TEST(EditsImport, NoDuplicate) {
  EXPECT_EQ(with_import("import os, torch\n", kTorch), "import os, torch\n");
  const auto where = ImportSpec::from_import("torch", "where");
  EXPECT_EQ(with_import("from torch import nn, where\n", where), "from torch import nn, where\n");
  // A different binding is a different import.
  EXPECT_EQ(with_import("import torch as T\n", kTorch), "import torch as T\nimport torch\n");
  EXPECT_EQ(with_import("from torch import where as w\n", where),
            "from torch import where as w\nfrom torch import where\n");
  EXPECT_EQ(with_import("from .torch import where\n", where),
            "from .torch import where\nfrom torch import where\n");
  // Inserting is idempotent.
  const std::string once = with_import("x = 1\n", kTorch);
  EXPECT_EQ(with_import(once, kTorch), once);
}

TEST(EditsDelete, NeverDeletesTheBom) {
  auto src =
      std::get<Source>(Source::decode("\xEF\xBB\xBF"
                                      "a = 1\nb = 2\n"));
  auto pr = parse_module(src, ParseOptions{});
  ASSERT_FALSE(pr.error);
  Stylist st = Stylist::detect(src.text(), pr.lexed);
  FileView v{src.text(), pr.tree, pr.lexed, st};
  const NodeId first = pr.tree.children(pr.tree.root(), GM_F(Module, body))[0];
  const Edit e = delete_statement(v, first);
  EXPECT_EQ(e.begin, 3u);
  EXPECT_EQ(e.end, 9u);
  const std::vector<std::string> lines{"if a:", "    b = 1"};
  auto r = replace_statement(v, first, lines);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->replacement, "if a:\n    b = 1");
}

TEST(EditsImport, KeepsBom) {
  auto src = std::get<Source>(Source::decode("\xEF\xBB\xBFx = 1\n"));
  auto pr = parse_module(src, ParseOptions{});
  ASSERT_FALSE(pr.error);
  Stylist st = Stylist::detect(src.text(), pr.lexed);
  FileView v{src.text(), pr.tree, pr.lexed, st};
  auto e = insert_import(v, kTorch);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->begin, 3u);
}

}  // namespace
}  // namespace gm::edits

TEST(EditsText, JoinLinesKeepsTokensApartAndBracketsTight) {
  EXPECT_EQ(gm::edits::join_lines("(x.abs().amax(-1)\n            > 1e4\n        ).any()"),
            "(x.abs().amax(-1) > 1e4).any()");
  EXPECT_EQ(gm::edits::join_lines("f(\r\n    a,\r\n    b,\r\n)"), "f(a, b,)");
  EXPECT_EQ(gm::edits::join_lines("a.sum() == 0"), "a.sum() == 0");
}

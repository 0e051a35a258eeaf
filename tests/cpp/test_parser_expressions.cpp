// Expression parsing: shapes, positions and errors, checked against what
// CPython's ast.dump(..., include_attributes=True) prints.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "ast/dump.h"
#include "parser/parse.h"

namespace {

struct Parsed {
  std::string dump;   // dump of the module, or empty
  std::string error;  // "Kind: message @line:col", or empty
};

Parsed parse(const std::string& src, int minor = 11) {
  auto decoded = gm::Source::decode(src);
  Parsed out;
  if (auto* err = std::get_if<gm::SyntaxError>(&decoded)) {
    out.error = err->kind + ": " + err->message;
    return out;
  }
  gm::ParseOptions opts;
  opts.version = {3, minor};
  const auto r = gm::parse_module(std::get<gm::Source>(decoded), opts);
  if (r.error) {
    out.error = r.error->kind + ": " + r.error->message + " @" + std::to_string(r.error->line) +
                ":" + std::to_string(r.error->col);
    return out;
  }
  gm::ast::DumpOptions d;
  d.minor = minor;
  out.dump = gm::ast::dump(r.tree, r.tree.root(), d);
  return out;
}

TEST(ParserExpressions, ParsesWithoutError) {
  for (const char* src : {"a + b * c\n", "f(x, *y, z=1, **k)\n", "a[1:2, ::3]\n",
                          "[x for x in y if x]\n", "{a: b, **c}\n", "lambda x: x\n",
                          "a if b else c\n", "not a or b and c\n", "a < b <= c is not d\n"}) {
    const Parsed p = parse(src);
    EXPECT_EQ(p.error, "") << src;
  }
}

// Expected dumps were produced by each CPython's
// ast.dump(ast.parse(src), include_attributes=True).
struct DumpCase {
  int minor;
  const char* src;
  const char* expected;
};

const DumpCase kDumpCases[] = {
    {12, "(a) + b\n",
     "Module(body=[Expr(value=BinOp(left=Name(id='a', ctx=Load(), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=2), op=Add(), right=Name(id='b', ctx=Load(), lineno=1, "
     "col_offset=6, end_lineno=1, end_col_offset=7), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=7), lineno=1, col_offset=0, end_lineno=1, end_col_offset=7)], "
     "type_ignores=[])"},
    {12, "(a, b)\n",
     "Module(body=[Expr(value=Tuple(elts=[Name(id='a', ctx=Load(), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=2), Name(id='b', ctx=Load(), lineno=1, col_offset=4, "
     "end_lineno=1, end_col_offset=5)], ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=6), lineno=1, col_offset=0, end_lineno=1, end_col_offset=6)], "
     "type_ignores=[])"},
    {12, "a, b,\n",
     "Module(body=[Expr(value=Tuple(elts=[Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), Name(id='b', ctx=Load(), lineno=1, col_offset=3, "
     "end_lineno=1, end_col_offset=4)], ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=5), lineno=1, col_offset=0, end_lineno=1, end_col_offset=5)], "
     "type_ignores=[])"},
    {12, "f(x for x in y)\n",
     "Module(body=[Expr(value=Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), args=[GeneratorExp(elt=Name(id='x', ctx=Load(), lineno=1, "
     "col_offset=2, end_lineno=1, end_col_offset=3), generators=[comprehension(target=Name(id='x', "
     "ctx=Store(), lineno=1, col_offset=8, end_lineno=1, end_col_offset=9), iter=Name(id='y', "
     "ctx=Load(), lineno=1, col_offset=13, end_lineno=1, end_col_offset=14), ifs=[], is_async=0)], "
     "lineno=1, col_offset=1, end_lineno=1, end_col_offset=15)], keywords=[], lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=15), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=15)], type_ignores=[])"},
    {12, "f(a, *b, c=1, **d)\n",
     "Module(body=[Expr(value=Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), args=[Name(id='a', ctx=Load(), lineno=1, col_offset=2, "
     "end_lineno=1, end_col_offset=3), Starred(value=Name(id='b', ctx=Load(), lineno=1, "
     "col_offset=6, end_lineno=1, end_col_offset=7), ctx=Load(), lineno=1, col_offset=5, "
     "end_lineno=1, end_col_offset=7)], keywords=[keyword(arg='c', value=Constant(value=1, "
     "lineno=1, col_offset=11, end_lineno=1, end_col_offset=12), lineno=1, col_offset=9, "
     "end_lineno=1, end_col_offset=12), keyword(value=Name(id='d', ctx=Load(), lineno=1, "
     "col_offset=16, end_lineno=1, end_col_offset=17), lineno=1, col_offset=14, end_lineno=1, "
     "end_col_offset=17)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=18), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=18)], type_ignores=[])"},
    {12, "a[1:2, ::3]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=Tuple(elts=[Slice(lower=Constant(value=1, lineno=1, "
     "col_offset=2, end_lineno=1, end_col_offset=3), upper=Constant(value=2, lineno=1, "
     "col_offset=4, end_lineno=1, end_col_offset=5), lineno=1, col_offset=2, end_lineno=1, "
     "end_col_offset=5), Slice(step=Constant(value=3, lineno=1, col_offset=9, end_lineno=1, "
     "end_col_offset=10), lineno=1, col_offset=7, end_lineno=1, end_col_offset=10)], ctx=Load(), "
     "lineno=1, col_offset=2, end_lineno=1, end_col_offset=10), ctx=Load(), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=11), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=11)], type_ignores=[])"},
    {12, "a[:]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=Slice(lineno=1, col_offset=2, end_lineno=1, "
     "end_col_offset=3), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=4), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=4)], type_ignores=[])"},
    {12, "a[*b]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=Tuple(elts=[Starred(value=Name(id='b', ctx=Load(), "
     "lineno=1, col_offset=3, end_lineno=1, end_col_offset=4), ctx=Load(), lineno=1, col_offset=2, "
     "end_lineno=1, end_col_offset=4)], ctx=Load(), lineno=1, col_offset=2, end_lineno=1, "
     "end_col_offset=4), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=5), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=5)], type_ignores=[])"},
    {12, "{**a, 'b': 1}\n",
     "Module(body=[Expr(value=Dict(keys=[None, Constant(value='b', lineno=1, col_offset=6, "
     "end_lineno=1, end_col_offset=9)], values=[Name(id='a', ctx=Load(), lineno=1, col_offset=3, "
     "end_lineno=1, end_col_offset=4), Constant(value=1, lineno=1, col_offset=11, end_lineno=1, "
     "end_col_offset=12)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=13), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=13)], type_ignores=[])"},
    {12, "[x async for x in y if z]\n",
     "Module(body=[Expr(value=ListComp(elt=Name(id='x', ctx=Load(), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=2), generators=[comprehension(target=Name(id='x', ctx=Store(), "
     "lineno=1, col_offset=13, end_lineno=1, end_col_offset=14), iter=Name(id='y', ctx=Load(), "
     "lineno=1, col_offset=18, end_lineno=1, end_col_offset=19), ifs=[Name(id='z', ctx=Load(), "
     "lineno=1, col_offset=23, end_lineno=1, end_col_offset=24)], is_async=1)], lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=25), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=25)], type_ignores=[])"},
    {12, "lambda x, *y, z=1, **k: x\n",
     "Module(body=[Expr(value=Lambda(args=arguments(posonlyargs=[], args=[arg(arg='x', lineno=1, "
     "col_offset=7, end_lineno=1, end_col_offset=8)], vararg=arg(arg='y', lineno=1, col_offset=11, "
     "end_lineno=1, end_col_offset=12), kwonlyargs=[arg(arg='z', lineno=1, col_offset=14, "
     "end_lineno=1, end_col_offset=15)], kw_defaults=[Constant(value=1, lineno=1, col_offset=16, "
     "end_lineno=1, end_col_offset=17)], kwarg=arg(arg='k', lineno=1, col_offset=21, end_lineno=1, "
     "end_col_offset=22), defaults=[]), body=Name(id='x', ctx=Load(), lineno=1, col_offset=24, "
     "end_lineno=1, end_col_offset=25), lineno=1, col_offset=0, end_lineno=1, end_col_offset=25), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=25)], type_ignores=[])"},
    {12, "a if b else c\n",
     "Module(body=[Expr(value=IfExp(test=Name(id='b', ctx=Load(), lineno=1, col_offset=5, "
     "end_lineno=1, end_col_offset=6), body=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), orelse=Name(id='c', ctx=Load(), lineno=1, col_offset=12, "
     "end_lineno=1, end_col_offset=13), lineno=1, col_offset=0, end_lineno=1, end_col_offset=13), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=13)], type_ignores=[])"},
    {12, "not a or b and c\n",
     "Module(body=[Expr(value=BoolOp(op=Or(), values=[UnaryOp(op=Not(), operand=Name(id='a', "
     "ctx=Load(), lineno=1, col_offset=4, end_lineno=1, end_col_offset=5), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=5), BoolOp(op=And(), values=[Name(id='b', ctx=Load(), lineno=1, "
     "col_offset=9, end_lineno=1, end_col_offset=10), Name(id='c', ctx=Load(), lineno=1, "
     "col_offset=15, end_lineno=1, end_col_offset=16)], lineno=1, col_offset=9, end_lineno=1, "
     "end_col_offset=16)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=16), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=16)], type_ignores=[])"},
    {12, "a < b <= c is not d not in e\n",
     "Module(body=[Expr(value=Compare(left=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), ops=[Lt(), LtE(), IsNot(), NotIn()], "
     "comparators=[Name(id='b', ctx=Load(), lineno=1, col_offset=4, end_lineno=1, "
     "end_col_offset=5), Name(id='c', ctx=Load(), lineno=1, col_offset=9, end_lineno=1, "
     "end_col_offset=10), Name(id='d', ctx=Load(), lineno=1, col_offset=18, end_lineno=1, "
     "end_col_offset=19), Name(id='e', ctx=Load(), lineno=1, col_offset=27, end_lineno=1, "
     "end_col_offset=28)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=28), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=28)], type_ignores=[])"},
    {12, "(x := 1)\n",
     "Module(body=[Expr(value=NamedExpr(target=Name(id='x', ctx=Store(), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=2), value=Constant(value=1, lineno=1, col_offset=6, "
     "end_lineno=1, end_col_offset=7), lineno=1, col_offset=1, end_lineno=1, end_col_offset=7), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=8)], type_ignores=[])"},
    {12, "-a ** -b\n",
     "Module(body=[Expr(value=UnaryOp(op=USub(), operand=BinOp(left=Name(id='a', ctx=Load(), "
     "lineno=1, col_offset=1, end_lineno=1, end_col_offset=2), op=Pow(), right=UnaryOp(op=USub(), "
     "operand=Name(id='b', ctx=Load(), lineno=1, col_offset=7, end_lineno=1, end_col_offset=8), "
     "lineno=1, col_offset=6, end_lineno=1, end_col_offset=8), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=8), lineno=1, col_offset=0, end_lineno=1, end_col_offset=8), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=8)], type_ignores=[])"},
    {12, "x = yield a, b\n",
     "Module(body=[Assign(targets=[Name(id='x', ctx=Store(), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=1)], value=Yield(value=Tuple(elts=[Name(id='a', ctx=Load(), lineno=1, "
     "col_offset=10, end_lineno=1, end_col_offset=11), Name(id='b', ctx=Load(), lineno=1, "
     "col_offset=13, end_lineno=1, end_col_offset=14)], ctx=Load(), lineno=1, col_offset=10, "
     "end_lineno=1, end_col_offset=14), lineno=1, col_offset=4, end_lineno=1, end_col_offset=14), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=14)], type_ignores=[])"},
    {12, "(yield)\n",
     "Module(body=[Expr(value=Yield(lineno=1, col_offset=1, end_lineno=1, end_col_offset=6), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=7)], type_ignores=[])"},
    {12, "(a).b(c)[d]\n",
     "Module(body=[Expr(value=Subscript(value=Call(func=Attribute(value=Name(id='a', ctx=Load(), "
     "lineno=1, col_offset=1, end_lineno=1, end_col_offset=2), attr='b', ctx=Load(), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=5), args=[Name(id='c', ctx=Load(), lineno=1, "
     "col_offset=6, end_lineno=1, end_col_offset=7)], keywords=[], lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=8), slice=Name(id='d', ctx=Load(), lineno=1, col_offset=9, "
     "end_lineno=1, end_col_offset=10), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=11), lineno=1, col_offset=0, end_lineno=1, end_col_offset=11)], "
     "type_ignores=[])"},
    {12, "[*a, *b] = c\n",
     "Module(body=[Assign(targets=[List(elts=[Starred(value=Name(id='a', ctx=Store(), lineno=1, "
     "col_offset=2, end_lineno=1, end_col_offset=3), ctx=Store(), lineno=1, col_offset=1, "
     "end_lineno=1, end_col_offset=3), Starred(value=Name(id='b', ctx=Store(), lineno=1, "
     "col_offset=6, end_lineno=1, end_col_offset=7), ctx=Store(), lineno=1, col_offset=5, "
     "end_lineno=1, end_col_offset=7)], ctx=Store(), lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=8)], value=Name(id='c', ctx=Load(), lineno=1, col_offset=11, end_lineno=1, "
     "end_col_offset=12), lineno=1, col_offset=0, end_lineno=1, end_col_offset=12)], "
     "type_ignores=[])"},
    {12, "del a, (b), [c]\n",
     "Module(body=[Delete(targets=[Name(id='a', ctx=Del(), lineno=1, col_offset=4, end_lineno=1, "
     "end_col_offset=5), Name(id='b', ctx=Del(), lineno=1, col_offset=8, end_lineno=1, "
     "end_col_offset=9), List(elts=[Name(id='c', ctx=Del(), lineno=1, col_offset=13, end_lineno=1, "
     "end_col_offset=14)], ctx=Del(), lineno=1, col_offset=12, end_lineno=1, end_col_offset=15)], "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=15)], type_ignores=[])"},
    {8, "f(*(a))\n",
     "Module(body=[Expr(value=Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), args=[Starred(value=Name(id='a', ctx=Load(), lineno=1, "
     "col_offset=4, end_lineno=1, end_col_offset=5), ctx=Load(), lineno=1, col_offset=2, "
     "end_lineno=1, end_col_offset=5)], keywords=[], lineno=1, col_offset=0, end_lineno=1, "
     "end_col_offset=7), lineno=1, col_offset=0, end_lineno=1, end_col_offset=7)], "
     "type_ignores=[])"},
    {8, "for (a), b in c: pass\n",
     "Module(body=[For(target=Tuple(elts=[Name(id='a', ctx=Store(), lineno=1, col_offset=5, "
     "end_lineno=1, end_col_offset=6), Name(id='b', ctx=Store(), lineno=1, col_offset=9, "
     "end_lineno=1, end_col_offset=10)], ctx=Store(), lineno=1, col_offset=5, end_lineno=1, "
     "end_col_offset=10), iter=Name(id='c', ctx=Load(), lineno=1, col_offset=14, end_lineno=1, "
     "end_col_offset=15), body=[Pass(lineno=1, col_offset=17, end_lineno=1, end_col_offset=21)], "
     "orelse=[], type_comment=None, lineno=1, col_offset=0, end_lineno=1, end_col_offset=21)], "
     "type_ignores=[])"},
    {8, "a[1:2, 3]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=ExtSlice(dims=[Slice(lower=Constant(value=1, "
     "kind=None, lineno=1, col_offset=2, end_lineno=1, end_col_offset=3), upper=Constant(value=2, "
     "kind=None, lineno=1, col_offset=4, end_lineno=1, end_col_offset=5), step=None), "
     "Index(value=Constant(value=3, kind=None, lineno=1, col_offset=7, end_lineno=1, "
     "end_col_offset=8))]), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)], type_ignores=[])"},
    {8, "f(a=1, **k)\n",
     "Module(body=[Expr(value=Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), args=[], keywords=[keyword(arg='a', value=Constant(value=1, "
     "kind=None, lineno=1, col_offset=4, end_lineno=1, end_col_offset=5)), keyword(arg=None, "
     "value=Name(id='k', ctx=Load(), lineno=1, col_offset=9, end_lineno=1, end_col_offset=10))], "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=11), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=11)], type_ignores=[])"},
    {9, "{x := 1}\n",
     "Module(body=[Expr(value=Set(elts=[NamedExpr(target=Name(id='x', ctx=Store(), lineno=1, "
     "col_offset=1, end_lineno=1, end_col_offset=2), value=Constant(value=1, lineno=1, "
     "col_offset=6, end_lineno=1, end_col_offset=7), lineno=1, col_offset=1, end_lineno=1, "
     "end_col_offset=7)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=8), lineno=1, "
     "col_offset=0, end_lineno=1, end_col_offset=8)], type_ignores=[])"},
    {10, "a[b := 1]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=NamedExpr(target=Name(id='b', ctx=Store(), lineno=1, "
     "col_offset=2, end_lineno=1, end_col_offset=3), value=Constant(value=1, lineno=1, "
     "col_offset=7, end_lineno=1, end_col_offset=8), lineno=1, col_offset=2, end_lineno=1, "
     "end_col_offset=8), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)], type_ignores=[])"},
    {11, "a[*b, c]\n",
     "Module(body=[Expr(value=Subscript(value=Name(id='a', ctx=Load(), lineno=1, col_offset=0, "
     "end_lineno=1, end_col_offset=1), slice=Tuple(elts=[Starred(value=Name(id='b', ctx=Load(), "
     "lineno=1, col_offset=3, end_lineno=1, end_col_offset=4), ctx=Load(), lineno=1, col_offset=2, "
     "end_lineno=1, end_col_offset=4), Name(id='c', ctx=Load(), lineno=1, col_offset=6, "
     "end_lineno=1, end_col_offset=7)], ctx=Load(), lineno=1, col_offset=2, end_lineno=1, "
     "end_col_offset=7), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=8), "
     "lineno=1, col_offset=0, end_lineno=1, end_col_offset=8)], type_ignores=[])"},
};

TEST(ParserExpressions, MatchesCPythonDumps) {
  for (const DumpCase& c : kDumpCases) {
    const Parsed p = parse(c.src, c.minor);
    EXPECT_EQ(p.error, "") << "3." << c.minor << ": " << c.src;
    EXPECT_EQ(p.dump, c.expected) << "3." << c.minor << ": " << c.src;
  }
}

TEST(ParserExpressions, VersionGates) {
  // walrus in a set display: 3.9+
  EXPECT_NE(parse("{x := 1}\n", 8).error, "");
  // bare walrus as a subscript: 3.10+
  EXPECT_NE(parse("a[b := 1]\n", 9).error, "");
  EXPECT_NE(parse("a[b := 1 : 2]\n", 12).error, "");
  // starred subscripts: 3.11+
  EXPECT_NE(parse("a[*b]\n", 10).error, "");
  // parenthesised starred expression: 3.8 only
  EXPECT_EQ(parse("x = (*a)\n", 8).error, "");
  EXPECT_EQ(parse("x = (*a)\n", 10).error, "SyntaxError: cannot use starred expression here @1:5");
  // 3.8's comp_if accepts a lambda
  EXPECT_EQ(parse("[x for x in y if lambda: 1]\n", 8).error, "");
  EXPECT_NE(parse("[x for x in y if lambda: 1]\n", 9).error, "");
}

TEST(ParserExpressions, ArgumentErrors) {
  EXPECT_NE(parse("f(a=1, b)\n").error, "");
  EXPECT_NE(parse("f(**a, *b)\n").error, "");
  EXPECT_NE(parse("f(**a, b)\n").error, "");
  EXPECT_NE(parse("f(x for x in y, 1)\n").error, "");
  EXPECT_NE(parse("class A(x for x in y): pass\n").error, "");
  EXPECT_NE(parse("f(a=1, a=2)\n", 8).error, "");
  EXPECT_EQ(parse("f(a=1, a=2)\n", 9).error, "");
}

TEST(ParserExpressions, ErrorMessages) {
  EXPECT_EQ(parse("x = (1 2)\n", 10).error,
            "SyntaxError: invalid syntax. Perhaps you forgot a comma? @1:5");
  EXPECT_EQ(parse("x = (1 2)\n", 9).error, "SyntaxError: invalid syntax @1:7");
  EXPECT_EQ(parse("x = 1 if 2\n", 10).error,
            "SyntaxError: expected 'else' after 'if' expression @1:4");
  EXPECT_EQ(parse("f(x=1 for x in y)\n", 12).error,
            "SyntaxError: invalid syntax. Maybe you meant '==' or ':=' instead of '='? @1:2");
  EXPECT_EQ(parse("x = yield = 1\n", 12).error,
            "SyntaxError: assignment to yield expression not possible @1:4");
  EXPECT_EQ(parse("(f() := 1)\n", 12).error,
            "SyntaxError: cannot use assignment expressions with function call @1:1");
  // 3.10+: a tokenizer error later in the file replaces the parser's error.
  EXPECT_EQ(parse("f(a b)\nx = 'abc\n", 12).error.substr(0, 40),
            "SyntaxError: unterminated string literal");
  EXPECT_EQ(parse("f(a b)\nx = 'abc\n", 9).error, "SyntaxError: invalid syntax @1:4");
  // `<>`: "invalid syntax" at the operator in every version, also after the
  // Barry future import (CPython enables `<>` only by a compile flag).
  for (int minor : {8, 9, 11, 13}) {
    EXPECT_EQ(parse("1 <> 2\n", minor).error, "SyntaxError: invalid syntax @1:2");
    EXPECT_EQ(parse("if a <> b: pass\n", minor).error, "SyntaxError: invalid syntax @1:5");
    EXPECT_EQ(parse("from __future__ import barry_as_FLUFL\nx = (1 <>\n 2)\n", minor).error,
              "SyntaxError: invalid syntax @2:7");
    EXPECT_EQ(parse("from __future__ import barry_as_FLUFL\nx = 1 != 2\n", minor).error, "");
  }
}

TEST(ParserExpressions, DeepNestingIsAnErrorNotACrash) {
  for (const std::string unit : {"(", "[", "-", "not ", "lambda:", "~", "+", "await ", "*"}) {
    std::string src;
    for (int i = 0; i < 100000; ++i) src += unit;
    src += "1\n";
    const Parsed p = parse(src);
    EXPECT_NE(p.error, "") << unit;
  }
}

TEST(ParserExpressions, InvalidTargets) {
  EXPECT_EQ(parse("f() = 1\n", 8).error, "SyntaxError: cannot assign to function call @1:0");
  EXPECT_EQ(parse("f() = 1\n", 11).error,
            "SyntaxError: cannot assign to function call here. Maybe you meant '==' instead "
            "of '='? @1:0");
  EXPECT_EQ(parse("del f()\n", 11).error, "SyntaxError: cannot delete function call @1:4");
  EXPECT_EQ(parse("a < b = 1\n", 11).error, "SyntaxError: cannot assign to comparison @1:0");
  EXPECT_EQ(parse("f() += 1\n", 11).error,
            "SyntaxError: 'function call' is an illegal expression for augmented assignment @1:0");
}

}  // namespace

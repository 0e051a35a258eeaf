// ast.dump per CPython version, on hand-built trees. Expected strings are
// CPython's own output (3.8.18, 3.9.18, 3.10.13, 3.12.1, 3.13.0) for the
// source in each test's comment.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ast/dump.h"
#include "ast/tree.h"

namespace {

using gm::ast::ConstantValue;
using gm::ast::DumpOptions;
using gm::ast::Field;
using gm::ast::NodeId;
using gm::ast::NodeKind;
using gm::ast::Position;
using gm::ast::Tree;

Position P(int l, int c, int el, int ec) { return Position{l, c, el, ec}; }

std::string D(const Tree& t, int minor, bool attrs = true) {
  DumpOptions o;
  o.minor = minor;
  o.include_attributes = attrs;
  return gm::ast::dump(t, t.root(), o);
}

struct B {
  Tree t;
  NodeId name(std::string_view id, Position p, NodeKind ctx = NodeKind::Load) {
    return t.add(NodeKind::Name, 0, 0, p, {t.string(id), Tree::op(ctx)});
  }
  NodeId integer(std::string_view digits, Position p) {
    ConstantValue v;
    v.kind = ConstantValue::Kind::Int;
    v.text = t.intern(digits);
    return t.add(NodeKind::Constant, 0, 0, p, {t.constant(v), Tree::none_string()});
  }
  NodeId none(Position p) {
    ConstantValue v;
    return t.add(NodeKind::Constant, 0, 0, p, {t.constant(v), Tree::none_string()});
  }
  Field list(std::vector<NodeId> ids) { return t.list(ids); }
  Field empty() { return t.list({}); }
  void module(std::vector<NodeId> body) {
    t.set_root(t.add(NodeKind::Module, 0, 0, {}, {list(body), empty()}));
  }
  NodeId expr(NodeId value, Position p) {
    return t.add(NodeKind::Expr, 0, 0, p, {Tree::node(value)});
  }
};

// x[1:2, 3]
TEST(Dump, ExtSliceAndIndexIn38) {
  B b;
  auto x = b.name("x", P(1, 0, 1, 1));
  auto slice = b.t.add(NodeKind::Slice, 0, 0, P(1, 2, 1, 5),
                       {Tree::node(b.integer("1", P(1, 2, 1, 3))),
                        Tree::node(b.integer("2", P(1, 4, 1, 5))), Tree::none()});
  auto tuple = b.t.add(NodeKind::Tuple, 0, 0, P(1, 2, 1, 8),
                       {b.list({slice, b.integer("3", P(1, 7, 1, 8))}), Tree::op(NodeKind::Load)});
  auto sub = b.t.add(NodeKind::Subscript, 0, 0, P(1, 0, 1, 9),
                     {Tree::node(x), Tree::node(tuple), Tree::op(NodeKind::Load)});
  b.module({b.expr(sub, P(1, 0, 1, 9))});
  EXPECT_EQ(
      D(b.t, 8),
      "Module(body=[Expr(value=Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, "
      "end_lineno=1, end_col_offset=1), slice=ExtSlice(dims=[Slice(lower=Constant(value=1, "
      "kind=None, lineno=1, col_offset=2, end_lineno=1, end_col_offset=3), upper=Constant(value=2, "
      "kind=None, lineno=1, col_offset=4, end_lineno=1, end_col_offset=5), step=None), "
      "Index(value=Constant(value=3, kind=None, lineno=1, col_offset=7, end_lineno=1, "
      "end_col_offset=8))]), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9), "
      "lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)], type_ignores=[])");
  EXPECT_EQ(
      D(b.t, 9),
      "Module(body=[Expr(value=Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, "
      "end_lineno=1, end_col_offset=1), slice=Tuple(elts=[Slice(lower=Constant(value=1, lineno=1, "
      "col_offset=2, end_lineno=1, end_col_offset=3), upper=Constant(value=2, lineno=1, "
      "col_offset=4, end_lineno=1, end_col_offset=5), lineno=1, col_offset=2, end_lineno=1, "
      "end_col_offset=5), Constant(value=3, lineno=1, col_offset=7, end_lineno=1, "
      "end_col_offset=8)], ctx=Load(), lineno=1, col_offset=2, end_lineno=1, end_col_offset=8), "
      "ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9), lineno=1, "
      "col_offset=0, end_lineno=1, end_col_offset=9)], type_ignores=[])");
  EXPECT_EQ(
      D(b.t, 13),
      "Module(body=[Expr(value=Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, "
      "end_lineno=1, end_col_offset=1), slice=Tuple(elts=[Slice(lower=Constant(value=1, lineno=1, "
      "col_offset=2, end_lineno=1, end_col_offset=3), upper=Constant(value=2, lineno=1, "
      "col_offset=4, end_lineno=1, end_col_offset=5), lineno=1, col_offset=2, end_lineno=1, "
      "end_col_offset=5), Constant(value=3, lineno=1, col_offset=7, end_lineno=1, "
      "end_col_offset=8)], ctx=Load(), lineno=1, col_offset=2, end_lineno=1, end_col_offset=8), "
      "ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9), lineno=1, "
      "col_offset=0, end_lineno=1, end_col_offset=9)])");
}

// x[a] and x[::2]
TEST(Dump, IndexAndPlainSliceIn38) {
  B b;
  auto sub1 = b.t.add(NodeKind::Subscript, 0, 0, P(1, 0, 1, 4),
                      {Tree::node(b.name("x", P(1, 0, 1, 1))),
                       Tree::node(b.name("a", P(1, 2, 1, 3))), Tree::op(NodeKind::Load)});
  auto slice = b.t.add(NodeKind::Slice, 0, 0, P(1, 2, 1, 5),
                       {Tree::none(), Tree::none(), Tree::node(b.integer("2", P(1, 4, 1, 5)))});
  auto sub2 = b.t.add(
      NodeKind::Subscript, 0, 0, P(1, 0, 1, 6),
      {Tree::node(b.name("x", P(1, 0, 1, 1))), Tree::node(slice), Tree::op(NodeKind::Load)});
  b.t.set_root(sub1);
  EXPECT_EQ(D(b.t, 8),
            "Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
            "end_col_offset=1), slice=Index(value=Name(id='a', ctx=Load(), lineno=1, col_offset=2, "
            "end_lineno=1, end_col_offset=3)), ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
            "end_col_offset=4)");
  b.t.set_root(sub2);
  EXPECT_EQ(
      D(b.t, 8),
      "Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
      "end_col_offset=1), slice=Slice(lower=None, upper=None, step=Constant(value=2, kind=None, "
      "lineno=1, col_offset=4, end_lineno=1, end_col_offset=5)), ctx=Load(), lineno=1, "
      "col_offset=0, end_lineno=1, end_col_offset=6)");
  EXPECT_EQ(
      D(b.t, 10),
      "Subscript(value=Name(id='x', ctx=Load(), lineno=1, col_offset=0, end_lineno=1, "
      "end_col_offset=1), slice=Slice(step=Constant(value=2, lineno=1, col_offset=4, "
      "end_lineno=1, end_col_offset=5), lineno=1, col_offset=2, end_lineno=1, end_col_offset=5), "
      "ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=6)");
}

// def f(a, *, k=None):\n    return
TEST(Dump, OptionalAndEmptyFieldsPerVersion) {
  B b;
  auto arg_a = b.t.add(NodeKind::arg, 0, 0, P(1, 6, 1, 7),
                       {b.t.string("a"), Tree::none(), Tree::none_string()});
  auto arg_k = b.t.add(NodeKind::arg, 0, 0, P(1, 12, 1, 13),
                       {b.t.string("k"), Tree::none(), Tree::none_string()});
  auto args = b.t.add(NodeKind::arguments, 0, 0, {},
                      {b.empty(), b.list({arg_a}), Tree::none(), b.list({arg_k}),
                       b.list({b.none(P(1, 14, 1, 18))}), Tree::none(), b.empty()});
  auto ret = b.t.add(NodeKind::Return, 0, 0, P(2, 4, 2, 10), {Tree::none()});
  auto fn = b.t.add(NodeKind::FunctionDef, 0, 0, P(1, 0, 2, 10),
                    {b.t.string("f"), Tree::node(args), b.list({ret}), b.empty(), Tree::none(),
                     Tree::none_string(), b.empty()});
  b.module({fn});
  EXPECT_EQ(D(b.t, 8),
            "Module(body=[FunctionDef(name='f', args=arguments(posonlyargs=[], args=[arg(arg='a', "
            "annotation=None, type_comment=None, lineno=1, col_offset=6, end_lineno=1, "
            "end_col_offset=7)], vararg=None, kwonlyargs=[arg(arg='k', annotation=None, "
            "type_comment=None, lineno=1, col_offset=12, end_lineno=1, end_col_offset=13)], "
            "kw_defaults=[Constant(value=None, kind=None, lineno=1, col_offset=14, end_lineno=1, "
            "end_col_offset=18)], kwarg=None, defaults=[]), body=[Return(value=None, lineno=2, "
            "col_offset=4, end_lineno=2, end_col_offset=10)], decorator_list=[], returns=None, "
            "type_comment=None, lineno=1, col_offset=0, end_lineno=2, end_col_offset=10)], "
            "type_ignores=[])");
  const std::string v9 =
      "Module(body=[FunctionDef(name='f', args=arguments(posonlyargs=[], args=[arg(arg='a', "
      "lineno=1, "
      "col_offset=6, end_lineno=1, end_col_offset=7)], kwonlyargs=[arg(arg='k', lineno=1, "
      "col_offset=12, end_lineno=1, end_col_offset=13)], kw_defaults=[Constant(value=None, "
      "lineno=1, "
      "col_offset=14, end_lineno=1, end_col_offset=18)], defaults=[]), body=[Return(lineno=2, "
      "col_offset=4, end_lineno=2, end_col_offset=10)], decorator_list=[], lineno=1, col_offset=0, "
      "end_lineno=2, end_col_offset=10)], type_ignores=[])";
  EXPECT_EQ(D(b.t, 9), v9);
  EXPECT_EQ(D(b.t, 11), v9);
  std::string v12 = v9;
  v12.insert(v12.find("decorator_list=[], ") + 19, "type_params=[], ");
  EXPECT_EQ(D(b.t, 12), v12);
  EXPECT_EQ(
      D(b.t, 13),
      "Module(body=[FunctionDef(name='f', args=arguments(args=[arg(arg='a', lineno=1, "
      "col_offset=6, "
      "end_lineno=1, end_col_offset=7)], kwonlyargs=[arg(arg='k', lineno=1, col_offset=12, "
      "end_lineno=1, end_col_offset=13)], kw_defaults=[Constant(value=None, lineno=1, "
      "col_offset=14, end_lineno=1, end_col_offset=18)]), body=[Return(lineno=2, col_offset=4, "
      "end_lineno=2, end_col_offset=10)], lineno=1, col_offset=0, end_lineno=2, "
      "end_col_offset=10)])");
}

// f(a, k=1): keyword has positions from 3.9
TEST(Dump, KeywordPositionsFrom39) {
  B b;
  auto kw = b.t.add(NodeKind::keyword, 0, 0, P(1, 5, 1, 8),
                    {b.t.string("k"), Tree::node(b.integer("1", P(1, 7, 1, 8)))});
  auto call = b.t.add(
      NodeKind::Call, 0, 0, P(1, 0, 1, 9),
      {Tree::node(b.name("f", P(1, 0, 1, 1))), b.list({b.name("a", P(1, 2, 1, 3))}), b.list({kw})});
  b.t.set_root(call);
  EXPECT_EQ(
      D(b.t, 8),
      "Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=1), "
      "args=[Name(id='a', ctx=Load(), lineno=1, col_offset=2, end_lineno=1, end_col_offset=3)], "
      "keywords=[keyword(arg='k', value=Constant(value=1, kind=None, lineno=1, col_offset=7, "
      "end_lineno=1, end_col_offset=8))], lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)");
  EXPECT_EQ(
      D(b.t, 9),
      "Call(func=Name(id='f', ctx=Load(), lineno=1, col_offset=0, end_lineno=1, end_col_offset=1), "
      "args=[Name(id='a', ctx=Load(), lineno=1, col_offset=2, end_lineno=1, end_col_offset=3)], "
      "keywords=[keyword(arg='k', value=Constant(value=1, lineno=1, col_offset=7, end_lineno=1, "
      "end_col_offset=8), lineno=1, col_offset=5, end_lineno=1, end_col_offset=8)], lineno=1, "
      "col_offset=0, end_lineno=1, end_col_offset=9)");
}

// import a as b: alias has positions from 3.10
TEST(Dump, AliasPositionsFrom310) {
  B b;
  auto alias = b.t.add(NodeKind::alias, 0, 0, P(1, 7, 1, 13), {b.t.string("a"), b.t.string("b")});
  auto imp = b.t.add(NodeKind::Import, 0, 0, P(1, 0, 1, 13), {b.list({alias})});
  b.module({imp});
  EXPECT_EQ(D(b.t, 9),
            "Module(body=[Import(names=[alias(name='a', asname='b')], lineno=1, col_offset=0, "
            "end_lineno=1, end_col_offset=13)], type_ignores=[])");
  EXPECT_EQ(D(b.t, 10),
            "Module(body=[Import(names=[alias(name='a', asname='b', lineno=1, col_offset=7, "
            "end_lineno=1, "
            "end_col_offset=13)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=13)], "
            "type_ignores=[])");
  EXPECT_EQ(D(b.t, 13),
            "Module(body=[Import(names=[alias(name='a', asname='b', lineno=1, col_offset=7, "
            "end_lineno=1, "
            "end_col_offset=13)], lineno=1, col_offset=0, end_lineno=1, end_col_offset=13)])");
}

// lambda: 0 -> arguments() in 3.13
TEST(Dump, EmptyArguments) {
  B b;
  auto args =
      b.t.add(NodeKind::arguments, 0, 0, {},
              {b.empty(), b.empty(), Tree::none(), b.empty(), b.empty(), Tree::none(), b.empty()});
  auto lam = b.t.add(NodeKind::Lambda, 0, 0, P(1, 0, 1, 9),
                     {Tree::node(args), Tree::node(b.integer("0", P(1, 8, 1, 9)))});
  b.t.set_root(lam);
  EXPECT_EQ(
      D(b.t, 8),
      "Lambda(args=arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], "
      "kwarg=None, defaults=[]), body=Constant(value=0, kind=None, lineno=1, col_offset=8, "
      "end_lineno=1, end_col_offset=9), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)");
  EXPECT_EQ(
      D(b.t, 10),
      "Lambda(args=arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), "
      "body=Constant(value=0, lineno=1, col_offset=8, end_lineno=1, end_col_offset=9), lineno=1, "
      "col_offset=0, end_lineno=1, end_col_offset=9)");
  EXPECT_EQ(D(b.t, 13),
            "Lambda(args=arguments(), body=Constant(value=0, lineno=1, col_offset=8, end_lineno=1, "
            "end_col_offset=9), lineno=1, col_offset=0, end_lineno=1, end_col_offset=9)");
}

// global a, b / a < b == c / u'x'
TEST(Dump, IdentListsOpListsAndKind) {
  B b;
  std::vector<gm::ast::StrRef> names{b.t.intern("a"), b.t.intern("b")};
  auto glob = b.t.add(NodeKind::Global, 0, 0, P(1, 0, 1, 11), {b.t.ident_list(names)});
  b.t.set_root(glob);
  EXPECT_EQ(D(b.t, 13),
            "Global(names=['a', 'b'], lineno=1, col_offset=0, end_lineno=1, end_col_offset=11)");

  std::vector<NodeKind> ops{NodeKind::Lt, NodeKind::Eq};
  auto cmp = b.t.add(NodeKind::Compare, 0, 0, P(1, 0, 1, 10),
                     {Tree::node(b.name("a", P(1, 0, 1, 1))), b.t.op_list(ops),
                      b.list({b.name("b", P(1, 4, 1, 5)), b.name("c", P(1, 9, 1, 10))})});
  b.t.set_root(cmp);
  EXPECT_EQ(D(b.t, 9, false),
            "Compare(left=Name(id='a', ctx=Load()), ops=[Lt(), Eq()], comparators=[Name(id='b', "
            "ctx=Load()), Name(id='c', ctx=Load())])");

  ConstantValue v;
  v.kind = ConstantValue::Kind::Str;
  v.text = b.t.intern("x");
  auto u = b.t.add(NodeKind::Constant, 0, 0, P(1, 0, 1, 4), {b.t.constant(v), b.t.string("u")});
  b.t.set_root(u);
  EXPECT_EQ(
      D(b.t, 8),
      "Constant(value='x', kind='u', lineno=1, col_offset=0, end_lineno=1, end_col_offset=4)");
  EXPECT_EQ(
      D(b.t, 13),
      "Constant(value='x', kind='u', lineno=1, col_offset=0, end_lineno=1, end_col_offset=4)");
}

// `type X[T = int] = T`: type_params from 3.12, default_value from 3.13
TEST(Dump, TypeParamsAndDefaults) {
  B b;
  auto tv = b.t.add(NodeKind::TypeVar, 0, 0, P(1, 7, 1, 14),
                    {b.t.string("T"), Tree::none(), Tree::node(b.name("int", P(1, 11, 1, 14)))});
  auto alias = b.t.add(NodeKind::TypeAlias, 0, 0, P(1, 0, 1, 19),
                       {Tree::node(b.name("X", P(1, 5, 1, 6), NodeKind::Store)), b.list({tv}),
                        Tree::node(b.name("T", P(1, 18, 1, 19)))});
  b.t.set_root(alias);
  EXPECT_EQ(D(b.t, 13, false),
            "TypeAlias(name=Name(id='X', ctx=Store()), type_params=[TypeVar(name='T', "
            "default_value=Name(id='int', ctx=Load()))], value=Name(id='T', ctx=Load()))");
  EXPECT_EQ(D(b.t, 12, false),
            "TypeAlias(name=Name(id='X', ctx=Store()), type_params=[TypeVar(name='T')], "
            "value=Name(id='T', ctx=Load()))");
}

// MatchSingleton(value=None) keeps its None in every version; Dict keys keep None.
TEST(Dump, NoneValuesThatStay) {
  B b;
  ConstantValue none;
  auto ms = b.t.add(NodeKind::MatchSingleton, 0, 0, P(2, 9, 2, 13), {b.t.constant(none)});
  b.t.set_root(ms);
  EXPECT_EQ(D(b.t, 13),
            "MatchSingleton(value=None, lineno=2, col_offset=9, end_lineno=2, end_col_offset=13)");
  auto dict = b.t.add(NodeKind::Dict, 0, 0, P(1, 0, 1, 7),
                      {b.list({NodeId{}}), b.list({b.name("d", P(1, 3, 1, 4))})});
  b.t.set_root(dict);
  EXPECT_EQ(D(b.t, 13, false), "Dict(keys=[None], values=[Name(id='d', ctx=Load())])");
}

// A 200 000-deep left-nested BinOp chain: the dumper must not use the C stack.
TEST(Dump, DeepTreeDoesNotOverflow) {
  B b;
  NodeId cur = b.name("a", P(1, 0, 1, 1));
  constexpr int kDepth = 200000;
  for (int i = 0; i < kDepth; ++i)
    cur =
        b.t.add(NodeKind::BinOp, 0, 0, P(1, 0, 1, 1),
                {Tree::node(cur), Tree::op(NodeKind::Add), Tree::node(b.name("a", P(1, 0, 1, 1)))});
  b.t.set_root(cur);
  const std::string s = D(b.t, 11, false);
  EXPECT_EQ(s.rfind("BinOp(left=", 0), 0u);
  EXPECT_EQ(s.size(),
            kDepth * std::string("BinOp(left=, op=Add(), right=Name(id='a', ctx=Load()))").size() +
                std::string("Name(id='a', ctx=Load())").size());
}

TEST(Dump, NoneRoot) {
  Tree t;
  EXPECT_EQ(gm::ast::dump(t, NodeId{}, DumpOptions{}), "None");
}

}  // namespace

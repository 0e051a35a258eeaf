// The semantic model: scopes and bindings, qualified names, compiled regions
// and tensor facts, on small snippets parsed as Python 3.11.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "analyzed_snippet.h"
#include "parser/parse.h"
#include "semantic/model.h"
#include "semantic/ops.h"

namespace {

using gm::ast::NodeId;
using gm::ast::NodeKind;
using gm::sema::BindingKind;
using gm::sema::DType;
using gm::sema::ModuleConfidence;
using gm::sema::RegionReason;
using gm::sema::ScopeKind;
using gm::sema::TensorKind;

struct Analyzed : gm::testing::Snippet {
  // A Name node by text, n-th occurrence in source order.
  NodeId name(std::string_view id, int nth = 0) const {
    const auto& t = parsed.tree;
    NodeId best{};
    std::uint32_t best_pos = 0;
    std::vector<std::pair<std::uint32_t, NodeId>> all;
    for (std::uint32_t i = 1; i <= t.node_count(); ++i) {
      const NodeId n{i};
      if (t.kind(n) == NodeKind::Name && t.text(t.field(n, GM_F(Name, id))) == id)
        all.push_back({t.at(n).begin, n});
    }
    std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first < b.first; });
    (void)best;
    (void)best_pos;
    return nth < static_cast<int>(all.size()) ? all[nth].second : NodeId{};
  }
  NodeId def(std::string_view fname, int nth = 0) const {
    const auto& t = parsed.tree;
    for (std::uint32_t i = 1; i <= t.node_count(); ++i) {
      const NodeId n{i};
      if ((t.kind(n) == NodeKind::FunctionDef || t.kind(n) == NodeKind::AsyncFunctionDef) &&
          t.text(t.field(n, GM_F(FunctionDef, name))) == fname && nth-- == 0)
        return n;
    }
    return {};
  }
  NodeId cls(std::string_view cname) const {
    const auto& t = parsed.tree;
    for (std::uint32_t i = 1; i <= t.node_count(); ++i) {
      const NodeId n{i};
      if (t.kind(n) == NodeKind::ClassDef && t.text(t.field(n, GM_F(ClassDef, name))) == cname)
        return n;
    }
    return {};
  }
  std::string qname(NodeId e) const {
    auto q = model.qualified_name(e);
    return q ? *q : "<none>";
  }
  std::string qexpr(NodeKind k, std::string_view snippet) const { return qname(find(k, snippet)); }
  int line_of(const gm::sema::Binding* b) const {
    return b ? parsed.tree.at(b->node).pos.lineno : -1;
  }
  TensorKind kind_of(NodeKind k, std::string_view snippet, int nth = 0) const {
    const NodeId n = find(k, snippet, nth);
    EXPECT_TRUE(n) << "no node " << snippet;
    return model.fact(n).kind;
  }
};

std::unique_ptr<Analyzed> analyze(std::string text) {
  return gm::testing::analyze_snippet<Analyzed>(std::move(text));
}

// ------------------------------------------------------------ scopes

TEST(SemanticScopes, KindsAndParents) {
  auto a = analyze(
      "x = 1\n"
      "class C:\n"
      "    y = 2\n"
      "    def m(self):\n"
      "        f = lambda z: z\n"
      "        return [i for i in range(3)]\n"
      "async def g():\n"
      "    pass\n");
  const auto& m = a->model;
  ASSERT_EQ(m.scopes().size(), 6u);
  EXPECT_EQ(m.scope(0).kind, ScopeKind::Module);
  const auto c = m.scope_opened_by(a->cls("C"));
  ASSERT_NE(c, gm::sema::kNone);
  EXPECT_EQ(m.scope(c).kind, ScopeKind::Class);
  const auto f = m.scope_opened_by(a->def("m"));
  EXPECT_EQ(m.scope(f).kind, ScopeKind::Function);
  EXPECT_EQ(m.scope(f).parent, c);
  EXPECT_EQ(m.scope(m.scope_opened_by(a->def("g"))).kind, ScopeKind::Function);
  EXPECT_EQ(m.scope_of(a->name("z", 0)), m.scope_of(a->name("z", 0)));
  EXPECT_EQ(m.scope(m.scope_of(a->name("z", 0))).kind, ScopeKind::Lambda);
  EXPECT_EQ(m.scope(m.scope_of(a->name("i", 0))).kind, ScopeKind::Comprehension);
  // the first iterable is evaluated in the enclosing (function) scope
  EXPECT_EQ(m.scope_of(a->name("range")), f);
}

TEST(SemanticScopes, BindingKinds) {
  auto a = analyze(
      "import os.path\n"
      "import numpy as np\n"
      "from a import b as c\n"
      "x, (y, *z) = 1, (2, 3)\n"
      "x += 1\n"
      "w: int = 3\n"
      "v: int\n"
      "for i in []: pass\n"
      "with open('f') as fh: pass\n"
      "try:\n    pass\nexcept E as err:\n    pass\n"
      "def f(p, /, q, *args, r, **kw): pass\n"
      "class K: pass\n"
      "if (n := 5): pass\n"
      "match x:\n    case [1, *rest]: pass\n    case {'k': 1, **others}: pass\n"
      "    case P(a=cap) as whole: pass\n"
      "del w\n");
  const auto& m = a->model;
  auto kind_of = [&](std::string_view name, int nth = 0) {
    auto bs = m.bindings_of(0, name);
    EXPECT_GT(static_cast<int>(bs.size()), nth) << name;
    return static_cast<int>(bs.size()) > nth ? bs[nth]->kind : BindingKind::Declaration;
  };
  EXPECT_EQ(kind_of("os"), BindingKind::Import);
  EXPECT_EQ(m.bindings_of(0, "os")[0]->qualified, "os");
  EXPECT_EQ(m.bindings_of(0, "np")[0]->qualified, "numpy");
  EXPECT_EQ(m.bindings_of(0, "c")[0]->qualified, "a.b");
  EXPECT_EQ(kind_of("x"), BindingKind::Assign);
  EXPECT_EQ(kind_of("x", 1), BindingKind::AugAssign);
  EXPECT_EQ(kind_of("y"), BindingKind::Assign);
  EXPECT_EQ(kind_of("z"), BindingKind::Assign);
  EXPECT_EQ(kind_of("w"), BindingKind::AnnAssign);
  EXPECT_EQ(kind_of("w", 1), BindingKind::Delete);
  EXPECT_EQ(kind_of("v"), BindingKind::Declaration);
  EXPECT_EQ(kind_of("i"), BindingKind::For);
  EXPECT_EQ(kind_of("fh"), BindingKind::With);
  EXPECT_EQ(kind_of("err"), BindingKind::ExceptAs);
  EXPECT_EQ(kind_of("f"), BindingKind::FunctionDef);
  EXPECT_EQ(kind_of("K"), BindingKind::ClassDef);
  EXPECT_EQ(kind_of("n"), BindingKind::NamedExpr);
  EXPECT_EQ(kind_of("rest"), BindingKind::MatchCapture);
  EXPECT_EQ(kind_of("others"), BindingKind::MatchCapture);
  EXPECT_EQ(kind_of("cap"), BindingKind::MatchCapture);
  EXPECT_EQ(kind_of("whole"), BindingKind::MatchCapture);
  const auto fs = m.scope_opened_by(a->def("f"));
  for (auto p : {"p", "q", "args", "r", "kw"}) {
    auto bs = m.bindings_of(fs, p);
    ASSERT_EQ(bs.size(), 1u) << p;
    EXPECT_EQ(bs[0]->kind, BindingKind::Parameter) << p;
  }
  // a, b = x, y: element values are matched
  auto xs = m.bindings_of(0, "x");
  EXPECT_EQ(a->tree().kind(xs[0]->value), NodeKind::Constant);
}

TEST(SemanticScopes, ResolveLegbAndRebinding) {
  auto a = analyze(
      "x = 1\n"            // line 1
      "def f():\n"
      "    print(x)\n"     // global x
      "def g():\n"
      "    x = 2\n"        // line 5
      "    def h():\n"
      "        return x\n" // g's x
      "    x = 3\n"        // line 8
      "    return x\n"     // line 9: the line-8 binding
      "class C:\n"
      "    x = 4\n"
      "    y = x\n"        // class x
      "    def m(self):\n"
      "        return x\n" // class scope skipped: global x
      "print(len)\n");
  const auto& m = a->model;
  EXPECT_EQ(a->line_of(m.resolve(a->name("x", 1))), 1);
  const auto* hx = m.resolve(a->name("x", 3));
  ASSERT_NE(hx, nullptr);
  EXPECT_EQ(m.scope(hx->scope).kind, ScopeKind::Function);
  EXPECT_EQ(a->line_of(m.resolve(a->name("x", 5))), 8);
  EXPECT_EQ(a->line_of(m.resolve(a->name("x", 7))), 11);
  EXPECT_EQ(a->line_of(m.resolve(a->name("x", 8))), 1);
  EXPECT_EQ(m.resolve(a->name("print", 0)), nullptr);
  EXPECT_TRUE(m.is_builtin(a->name("print", 0)));
  EXPECT_TRUE(m.is_builtin(a->name("len", 0)));
  // all bindings of g's x, in order
  EXPECT_EQ(m.bindings_of(m.scope_opened_by(a->def("g")), "x").size(), 2u);
}

// The one assignment that reaches a use, by its value's text ("" when more
// than one may); uses counted as `name` counts them, from 0.
TEST(SemanticScopes, SoleValueAtAUse) {
  auto a = analyze(
      "def f(x, c, n):\n"
      "    s = x.std()\n"
      "    if s < 1:\n"         // s 1: line 2 only
      "        s = x.mean()\n"
      "    elif s > 9:\n"       // s 3: the other arm's binding is not on its path
      "        s = s * 2\n"
      "    return s\n"          // s 6: either arm's value
      "def g(x, c):\n"
      "    s = x.std()\n"
      "    if c:\n"
      "        s = 1.0\n"
      "    return s\n"          // s 9: the branch may have rebound it
      "def h(x, n):\n"
      "    s = x.std()\n"
      "    for _ in range(n):\n"
      "        t = s\n"         // s 11: the loop's rebinding reaches it
      "        s = 2.0\n"
      "    while s > 0:\n"      // s 13: as does the while body's
      "        s = s - 1\n"
      "def k(x):\n"
      "    s = x.std()\n"
      "    try:\n"
      "        s = x.sum()\n"
      "    except ValueError:\n"
      "        return s\n"      // s 18: the try body may have rebound it
      "    u = s\n"             // s 19: either value
      "    return u\n"
      "def once(x):\n"
      "    s = x.std()\n"
      "    return s\n");        // s 21
  const auto& m = a->model;
  auto value = [&](int nth) {
    const NodeId v = m.sole_value_at(a->name("s", nth));
    if (!v) return std::string();
    const auto& n = a->tree().at(v);
    return std::string(a->source->text().substr(n.begin, n.end - n.begin));
  };
  EXPECT_EQ(value(1), "x.std()");
  EXPECT_EQ(value(3), "x.std()");
  for (int nth : {6, 9, 11, 13, 18, 19}) EXPECT_EQ(value(nth), "") << nth;
  EXPECT_EQ(value(21), "x.std()");
}

TEST(SemanticScopes, OneElementTensors) {
  auto a = analyze(
      "import torch\n"
      "def f(x, n):\n"
      "    loss = x.pow(2).mean()\n"
      "    t = x * 2\n"
      "    if n:\n"
      "        s = x.sum()\n"
      "    else:\n"
      "        s = x\n"
      "    return (loss, t, s, torch.amax(x), x.sum(dtype=torch.float64), x.max(),\n"
      "            x.sum(0), x.max(1), x.mode(), x.aminmax(), x.logsumexp(), torch.sum(x, 1),\n"
      "            x.amax(dim=0))\n");
  const auto& m = a->model;
  auto one = [&](std::string_view call) {
    const NodeId id = a->find(NodeKind::Call, call);
    EXPECT_TRUE(id) << call;
    return m.one_element(id);
  };
  EXPECT_TRUE(m.one_element(a->name("loss", 1)));  // through its one assignment
  EXPECT_FALSE(m.one_element(a->name("t", 1)));
  EXPECT_FALSE(m.one_element(a->name("s", 2)));  // either branch's value
  EXPECT_TRUE(one("torch.amax(x)"));
  EXPECT_TRUE(one("x.sum(dtype=torch.float64)"));
  EXPECT_TRUE(one("x.max()"));
  for (std::string_view partial : {"x.sum(0)", "x.max(1)", "x.mode()", "x.aminmax()",
                                   "x.logsumexp()", "torch.sum(x, 1)", "x.amax(dim=0)"})
    EXPECT_FALSE(one(partial)) << partial;
}

TEST(SemanticScopes, GlobalNonlocalAndWalrus) {
  auto a = analyze(
      "def f():\n"
      "    global G\n"
      "    G = 1\n"
      "def outer():\n"
      "    def inner():\n"
      "        nonlocal v\n"
      "        v = 2\n"
      "    v = 1\n"
      "    ys = [(w := k) for k in range(3)]\n"
      "    return w\n"
      "print = 5\n"
      "print\n");
  const auto& m = a->model;
  ASSERT_EQ(m.bindings_of(0, "G").size(), 1u);
  const auto outer = m.scope_opened_by(a->def("outer"));
  EXPECT_EQ(m.bindings_of(outer, "v").size(), 2u);
  EXPECT_EQ(m.bindings_of(outer, "w").size(), 1u);
  EXPECT_EQ(m.bindings_of(outer, "w")[0]->kind, BindingKind::NamedExpr);
  const auto* w = m.resolve(a->name("w", 1));
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->scope, outer);
  EXPECT_FALSE(m.is_builtin(a->name("print", 1)));
  EXPECT_EQ(a->qname(a->name("print", 1)), "<none>");
}

// ------------------------------------------------------------ qualified names

TEST(SemanticQualifiedNames, Imports) {
  auto a = analyze(
      "import torch\n"
      "import torch.nn.functional as F\n"
      "from torch import where as w\n"
      "from torch.nn import functional\n"
      "from . import sibling\n"
      "from .mod import x\n"
      "from ..pkg.sub import y\n"
      "import os.path\n"
      "import numpy as np\n"
      "import warnings\n"
      "from warnings import warn\n"
      "alias = torch.nn\n"
      "torch.where\n"
      "F.relu\n"
      "w\n"
      "functional.softmax\n"
      "sibling.f\n"
      "x.attr\n"
      "y\n"
      "os.path.join\n"
      "np.array\n"
      "warnings.warn\n"
      "warn\n"
      "alias.Linear\n"
      "isinstance\n"
      "undefined_name.attr\n");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "torch.where"), "torch.where");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "F.relu"), "torch.nn.functional.relu");
  EXPECT_EQ(a->qname(a->name("w", 0)), "torch.where");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "functional.softmax"), "torch.nn.functional.softmax");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "sibling.f"), ".sibling.f");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "x.attr"), ".mod.x.attr");
  EXPECT_EQ(a->qname(a->name("y", 0)), "..pkg.sub.y");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "os.path.join"), "os.path.join");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "np.array"), "numpy.array");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "warnings.warn"), "warnings.warn");
  EXPECT_EQ(a->qname(a->name("warn", 0)), "warnings.warn");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "alias.Linear"), "torch.nn.Linear");
  EXPECT_EQ(a->qname(a->name("isinstance")), "builtins.isinstance");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "undefined_name.attr"), "<none>");
}

TEST(SemanticQualifiedNames, Loggers) {
  auto a = analyze(
      "import logging\n"
      "logger = logging.getLogger(__name__)\n"
      "other = make()\n"
      "def f():\n"
      "    logger.warning('x')\n"
      "    other.warning('x')\n"
      "    logging.getLogger('a').info('y')\n");
  EXPECT_TRUE(a->model.is_logger(a->name("logger", 1)));
  EXPECT_FALSE(a->model.is_logger(a->name("other", 1)));
  EXPECT_TRUE(a->model.is_logger(a->find(NodeKind::Call, "logging.getLogger('a')")));
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "logger.warning"), "<none>");
}

TEST(SemanticQualifiedNames, TransformersLoggingPattern) {
  auto a = analyze(
      "from ...utils import logging\n"
      "logger = logging.get_logger(__name__)\n"
      "def f():\n"
      "    logger.warning_once('x')\n");
  EXPECT_EQ(a->qexpr(NodeKind::Attribute, "logging.get_logger"), "...utils.logging.get_logger");
  EXPECT_TRUE(a->model.is_logger(a->name("logger", 1)));
  auto b = analyze(
      "from transformers.utils import logging\n"
      "logger = logging.get_logger(__name__)\n"
      "logger.info('x')\n");
  EXPECT_TRUE(b->model.is_logger(b->name("logger", 1)));
  auto c = analyze(
      "from .utils import logging as hf_logging\n"
      "log = hf_logging.get_logger(__name__)\n"
      "log.info('x')\n");
  EXPECT_TRUE(c->model.is_logger(c->name("log", 1)));
}

// ------------------------------------------------------------ regions

constexpr const char* kModelSource =
    "import torch\n"
    "from torch import nn\n"
    "import torch.nn.functional as F\n"
    "from ...modeling_utils import PreTrainedModel\n"
    "from somewhere import FancyLayer, Helper\n"
    "\n"
    "def helper(x):\n"
    "    return x * 2\n"
    "\n"
    "def unused(x):\n"
    "    return x\n"
    "\n"
    "class Block(nn.Module):\n"
    "    def __init__(self, d):\n"
    "        super().__init__()\n"
    "        print('init')\n"
    "        self.proj = nn.Linear(d, d)\n"
    "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
    "        return self._inner(helper(self.proj(x)))\n"
    "    def _inner(self, y):\n"
    "        return y\n"
    "    def not_called(self):\n"
    "        pass\n"
    "\n"
    "class Stack(Block):\n"
    "    def __init__(self, d):\n"
    "        super().__init__(d)\n"
    "        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])\n"
    "        self.head = Head()\n"
    "    def forward(self, x):\n"
    "        for blk in self.blocks:\n"
    "            x = blk(x)\n"
    "        return self.head(x) + self._inner(x)\n"
    "\n"
    "class Head(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return self.finish(x)\n"
    "    def finish(self, x):\n"
    "        return x\n"
    "\n"
    "class Pretrained(PreTrainedModel):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "\n"
    "class Fancy(FancyLayer):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "\n"
    "class Plain(Helper):\n"
    "    def forward(self, x):\n"
    "        return x\n"
    "\n"
    "@torch.compile\n"
    "def compiled(x):\n"
    "    return torch.sin(x)\n"
    "\n"
    "@torch.compile(mode='max-autotune')\n"
    "def compiled2(x):\n"
    "    def local(z):\n"
    "        return z\n"
    "    return local(x)\n"
    "\n"
    "def later(x):\n"
    "    return x\n"
    "\n"
    "opt = torch.compile(later)\n";

TEST(SemanticRegions, ModuleClassesAndConfidence) {
  auto a = analyze(kModelSource);
  const auto& m = a->model;
  EXPECT_EQ(m.module_confidence(a->cls("Block")), ModuleConfidence::Known);
  EXPECT_EQ(m.module_confidence(a->cls("Stack")), ModuleConfidence::Known);
  EXPECT_EQ(m.module_confidence(a->cls("Pretrained")), ModuleConfidence::Known);
  EXPECT_EQ(m.module_confidence(a->cls("Fancy")), ModuleConfidence::Name);
  EXPECT_EQ(m.module_confidence(a->cls("Plain")), ModuleConfidence::None);
}

TEST(SemanticRegions, DerivesFromInFileBases) {
  auto a = analyze(
      "class A: pass\n"
      "class B(A): pass\n"
      "class C(B, object): pass\n"
      "class D: pass\n");
  const auto& m = a->model;
  EXPECT_TRUE(m.derives_from(a->cls("B"), a->cls("A")));
  EXPECT_TRUE(m.derives_from(a->cls("C"), a->cls("A")));  // through B
  EXPECT_FALSE(m.derives_from(a->cls("A"), a->cls("A")));
  EXPECT_FALSE(m.derives_from(a->cls("A"), a->cls("C")));
  EXPECT_FALSE(m.derives_from(a->cls("D"), a->cls("A")));
}

TEST(SemanticRegions, AssignedSelfAttributes) {
  auto a = analyze(
      "class A:\n"
      "    def __init__(self, other):\n"
      "        self.x = 1\n"
      "        self.y += 1\n"
      "        self.p, (self.q, _) = 1, (2, 3)\n"
      "        for self.i in range(3): pass\n"
      "        self.register_buffer('buf', None)\n"
      "        self.register_parameter('w', None)\n"
      "        self.add_module('sub', None)\n"
      "        other.z = 1\n"
      "        print(self.r)\n");
  const auto& m = a->model;
  for (const char* yes : {"x", "y", "p", "q", "i", "buf", "w", "sub"})
    EXPECT_TRUE(m.assigns_self_attr(yes)) << yes;
  for (const char* no : {"z", "r", "other", "register_buffer"})
    EXPECT_FALSE(m.assigns_self_attr(no)) << no;
  auto b = analyze("class B:\n    def f(self):\n        return self.x\n");
  EXPECT_FALSE(b->model.assigns_self_attr("x"));  // a fact of its own tree only
}

TEST(SemanticRegions, EntriesAndCallees) {
  auto a = analyze(kModelSource);
  const auto& m = a->model;
  auto reason = [&](NodeId fn) {
    const auto* r = m.region_of(fn);
    return r ? static_cast<int>(r->reason) : -1;
  };
  EXPECT_EQ(reason(a->def("forward", 0)), static_cast<int>(RegionReason::ModuleForward));
  EXPECT_EQ(reason(a->def("forward", 1)), static_cast<int>(RegionReason::ModuleForward));
  EXPECT_EQ(reason(a->def("helper")), static_cast<int>(RegionReason::Called));
  EXPECT_EQ(reason(a->def("_inner")), static_cast<int>(RegionReason::Called));
  EXPECT_EQ(m.region_of(a->def("helper"))->via, a->def("forward", 0));
  EXPECT_EQ(reason(a->def("finish")), static_cast<int>(RegionReason::Called));
  EXPECT_EQ(reason(a->def("compiled")), static_cast<int>(RegionReason::CompileDecorator));
  EXPECT_EQ(reason(a->def("compiled2")), static_cast<int>(RegionReason::CompileDecorator));
  EXPECT_EQ(reason(a->def("local")), static_cast<int>(RegionReason::Nested));
  EXPECT_EQ(reason(a->def("later")), static_cast<int>(RegionReason::CompileCall));
  EXPECT_EQ(m.region_of(a->def("__init__", 0)), nullptr);
  EXPECT_EQ(m.region_of(a->def("__init__", 1)), nullptr);
  EXPECT_EQ(m.region_of(a->def("not_called")), nullptr);
  EXPECT_EQ(m.region_of(a->def("unused")), nullptr);
  EXPECT_EQ(m.region_of(a->def("forward", 5)), nullptr);  // Plain: not a module
  // statements
  EXPECT_FALSE(m.is_in_region(a->find(NodeKind::Call, "print('init')")));
  EXPECT_TRUE(m.is_in_region(a->find(NodeKind::Call, "helper(self.proj(x))")));
  EXPECT_FALSE(m.is_in_region(a->def("forward", 0)));
  // Stack.forward reaches Block.forward through the ModuleList and Head.forward
  const auto blk_call = a->find(NodeKind::Call, "blk(x)");
  auto cs = m.callees(blk_call);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0], a->def("forward", 0));
  auto hs = m.callees(a->find(NodeKind::Call, "self.head(x)"));
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0], a->def("forward", 2));
}

TEST(SemanticRegions, SubmoduleForwardOnlyReachedThroughCalls) {
  auto a = analyze(
      "import torch\n"
      "class Inner:\n"
      "    def forward(self, x):\n"
      "        return x\n"
      "    def other(self):\n"
      "        return 1\n"
      "class Outer(torch.nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.inner = Inner()\n"
      "    def forward(self, x):\n"
      "        return self.inner(x)\n");
  const auto& m = a->model;
  EXPECT_EQ(m.module_confidence(a->cls("Inner")), ModuleConfidence::None);
  const auto* r = m.region_of(a->def("forward", 0));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, RegionReason::Called);
  EXPECT_EQ(r->via, a->def("forward", 1));
  EXPECT_EQ(m.region_of(a->def("other")), nullptr);
}

TEST(SemanticRegions, CallablesStoredInSelfAttributesAreCalled) {
  // vector_quantize_pytorch: `self.sample_fn = a if c else b` in __init__,
  // `self.sample_fn(...)` in forward; partial() and a bound method too.
  auto a = analyze(
      "import functools\n"
      "import torch\n"
      "def sample_ddp(x):\n"
      "    return x\n"
      "def sample_local(x):\n"
      "    return x\n"
      "def scaled(x, s):\n"
      "    return x * s\n"
      "def never(x):\n"
      "    return x\n"
      "class Codebook(torch.nn.Module):\n"
      "    def __init__(self, ddp):\n"
      "        super().__init__()\n"
      "        self.sample_fn = sample_ddp if ddp else sample_local\n"
      "        self.scale_fn = functools.partial(scaled, s=2)\n"
      "        self.norm_fn = self._norm\n"
      "        self.unused_fn = never\n"
      "    def _norm(self, x):\n"
      "        return x\n"
      "    def forward(self, x):\n"
      "        return self.norm_fn(self.scale_fn(self.sample_fn(x)))\n");
  const auto& m = a->model;
  for (const char* f : {"sample_ddp", "sample_local", "scaled", "_norm"}) {
    const auto* r = m.region_of(a->def(f));
    ASSERT_NE(r, nullptr) << f;
    EXPECT_EQ(r->reason, RegionReason::Called) << f;
  }
  EXPECT_EQ(m.region_of(a->def("never")), nullptr);
  EXPECT_EQ(m.region_of(a->def("__init__")), nullptr);
}

// ------------------------------------------------------------ tensor facts

TEST(SemanticFacts, NestedEnumerateAndZipTargets) {
  // `for i, (x, y) in enumerate(zip(xs, ys))`: each name gets the element
  // of its own iterable, however the targets nest.
  auto a = analyze(
      "import torch\n"
      "def f(xs: torch.Tensor, ys: torch.Tensor, names: list):\n"
      "    for i, (x, n) in enumerate(zip(xs, names)):\n"
      "        pass\n"
      "    for (j, y), m in zip(enumerate(ys), names):\n"
      "        pass\n"
      "    for k, (p, *rest) in enumerate(zip(xs, ys, ys)):\n"
      "        pass\n"
      "    for u, v in zip(xs, ys):\n"
      "        pass\n");
  auto fk = [&](std::string_view nm) { return a->model.fact(a->name(nm, 0)).kind; };
  EXPECT_EQ(fk("x"), TensorKind::Tensor);
  EXPECT_EQ(fk("y"), TensorKind::Tensor);
  EXPECT_EQ(fk("u"), TensorKind::Tensor);
  EXPECT_EQ(fk("v"), TensorKind::Tensor);
  EXPECT_EQ(fk("i"), TensorKind::NotTensor);
  EXPECT_EQ(fk("j"), TensorKind::NotTensor);
  EXPECT_NE(fk("n"), TensorKind::Tensor);
  EXPECT_NE(fk("m"), TensorKind::Tensor);
  // three iterables for two targets: not unpacked by position
  EXPECT_NE(fk("p"), TensorKind::Tensor);
}

TEST(SemanticFacts, SourcesAndPropagation) {
  auto a = analyze(
      "import torch\n"
      "from torch import nn, Tensor\n"
      "from typing import Optional\n"
      "class M(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.lin = nn.Linear(4, 4)\n"
      "        self.scale = 0.5\n"
      "    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor] = None, n: int = 3,\n"
      "                y: Tensor = None, z=None):\n"
      "        h = self.lin(x)\n"
      "        s = h.sum()\n"
      "        b = s > 0\n"
      "        k = x.any()\n"
      "        v = s.item()\n"
      "        d = x.dim()\n"
      "        e = torch.equal(x, h)\n"
      "        l = len(x)\n"
      "        i = isinstance(x, torch.Tensor)\n"
      "        isn = mask is None\n"
      "        sz = x.shape[0]\n"
      "        w = torch.where(b, x, h)\n"
      "        a = x.abs()\n"
      "        c = x + 1\n"
      "        q = self.scale\n"
      "        st = 'text'\n"
      "        am = x.argmax(-1)\n"
      "        nn_ = torch.isnan(x)\n"
      "        f = x.float()\n"
      "        parts = x.chunk(2)\n"
      "        p0 = parts[0]\n"
      "        p1, p2 = x.split(2)\n"
      "        bs, sl = x.size()\n"
      "        z2 = z\n"
      "        nil = None\n"
      "        return h, mask, y\n");
  auto fk = [&](std::string_view nm) { return a->model.fact(a->name(nm, 0)).kind; };
  EXPECT_EQ(fk("h"), TensorKind::Tensor);
  EXPECT_EQ(fk("s"), TensorKind::Tensor);
  EXPECT_EQ(fk("b"), TensorKind::Tensor);
  EXPECT_EQ(a->model.fact(a->name("b", 0)).dtype, DType::Bool);
  EXPECT_EQ(fk("k"), TensorKind::Tensor);
  EXPECT_EQ(a->model.fact(a->name("k", 0)).dtype, DType::Bool);
  EXPECT_EQ(fk("v"), TensorKind::NotTensor);
  EXPECT_EQ(fk("d"), TensorKind::NotTensor);
  EXPECT_EQ(fk("e"), TensorKind::NotTensor);
  EXPECT_EQ(fk("l"), TensorKind::NotTensor);
  EXPECT_EQ(fk("i"), TensorKind::NotTensor);
  EXPECT_EQ(fk("isn"), TensorKind::NotTensor);
  EXPECT_EQ(fk("sz"), TensorKind::NotTensor);
  EXPECT_EQ(fk("w"), TensorKind::Tensor);
  EXPECT_EQ(fk("a"), TensorKind::Tensor);
  EXPECT_EQ(fk("c"), TensorKind::Tensor);
  EXPECT_EQ(fk("q"), TensorKind::NotTensor);
  EXPECT_EQ(fk("st"), TensorKind::NotTensor);
  EXPECT_EQ(fk("am"), TensorKind::Tensor);
  EXPECT_EQ(a->model.fact(a->name("am", 0)).dtype, DType::Integer);
  EXPECT_EQ(a->model.fact(a->name("nn_", 0)).dtype, DType::Bool);
  EXPECT_EQ(a->model.fact(a->name("f", 0)).dtype, DType::Floating);
  EXPECT_EQ(fk("parts"), TensorKind::NotTensor);
  EXPECT_EQ(a->model.fact(a->name("parts", 0)).element, TensorKind::Tensor);
  EXPECT_EQ(fk("p0"), TensorKind::Tensor);
  EXPECT_EQ(fk("p1"), TensorKind::Tensor);
  EXPECT_EQ(fk("p2"), TensorKind::Tensor);
  EXPECT_EQ(fk("bs"), TensorKind::NotTensor);
  EXPECT_EQ(fk("z2"), TensorKind::Unknown);  // unannotated, default None
  EXPECT_TRUE(a->model.fact(a->name("nil", 0)).is_none);
  // parameters
  EXPECT_EQ(a->model.fact(a->name("x", 1)).kind, TensorKind::Tensor);  // h = self.lin(x)
  EXPECT_EQ(a->model.fact(a->name("mask", 1)).kind, TensorKind::TensorOrNone);
  EXPECT_EQ(a->model.fact(a->name("y", 0)).kind, TensorKind::TensorOrNone);
  EXPECT_EQ(a->model.fact(a->find(NodeKind::Call, "torch.equal(x, h)")).kind,
            TensorKind::NotTensor);
  EXPECT_EQ(a->kind_of(NodeKind::Compare, "s > 0"), TensorKind::Tensor);
  EXPECT_EQ(a->kind_of(NodeKind::Attribute, "x.shape"), TensorKind::NotTensor);
  // same shape: elementwise ops keep x's shape
  EXPECT_TRUE(a->model.same_shape(a->name("a", 0), a->name("c", 0)));
  EXPECT_TRUE(a->model.same_shape(a->name("a", 0), a->name("x", 1)));
  EXPECT_FALSE(a->model.same_shape(a->name("a", 0), a->name("h", 0)));
}

TEST(SemanticFacts, UnknownStaysUnknown) {
  auto a = analyze(
      "import torch\n"
      "from lib import thing\n"
      "def f(x, t: torch.Tensor, c):\n"
      "    u = thing(x)\n"
      "    m = x.sum()\n"
      "    r = t if c else 0\n"
      "    k = t\n"
      "    if c:\n"
      "        k = 1\n"
      "    j = k\n"
      "    n = t\n"
      "    for _ in range(3):\n"
      "        o = n\n"
      "        n = 1\n"
      "    return u\n");
  auto fk = [&](std::string_view nm, int nth = 0) { return a->model.fact(a->name(nm, nth)).kind; };
  EXPECT_EQ(fk("u"), TensorKind::Unknown);
  EXPECT_EQ(fk("m"), TensorKind::Unknown);  // x is not known to be a tensor
  EXPECT_EQ(fk("r"), TensorKind::Unknown);
  EXPECT_EQ(fk("j"), TensorKind::Unknown);  // k is a tensor or an int
  EXPECT_EQ(fk("o"), TensorKind::Unknown);  // loop-carried rebinding
  EXPECT_EQ(fk("k", 0), TensorKind::Tensor);
}

TEST(SemanticFacts, StraightLineRefinementAndInterprocedural) {
  auto a = analyze(
      "import torch\n"
      "def helper(t: torch.Tensor):\n"
      "    return t * 2\n"
      "def maybe(t: torch.Tensor):\n"
      "    if t.any():\n"
      "        return t\n"
      "def f(t: torch.Tensor):\n"
      "    x = 1\n"
      "    x = torch.zeros(3, dtype=torch.bool)\n"
      "    y = x\n"
      "    h = helper(t)\n"
      "    g = maybe(t)\n"
      "    t = t.float()\n"
      "    return t\n");
  auto fact = [&](std::string_view nm, int nth = 0) { return a->model.fact(a->name(nm, nth)); };
  EXPECT_EQ(fact("y").kind, TensorKind::Tensor);
  EXPECT_EQ(fact("y").dtype, DType::Bool);
  EXPECT_EQ(fact("h").kind, TensorKind::Tensor);
  EXPECT_EQ(fact("g").kind, TensorKind::TensorOrNone);
  // `return t` after t = t.float(): the float tensor
  const NodeId last_t = a->name("t", 7);
  ASSERT_TRUE(last_t);
  EXPECT_EQ(a->model.fact(last_t).kind, TensorKind::Tensor);
  EXPECT_EQ(a->model.fact(last_t).dtype, DType::Floating);
}

TEST(SemanticRegions, InheritanceSuperSlicedListsAndCompileCall) {
  auto a = analyze(
      "import torch\n"
      "from torch.nn import Module\n"
      "class Base(Module):\n"
      "    def shared(self, x):\n"
      "        return x\n"
      "    def forward(self, x):\n"
      "        return x\n"
      "class Layer(Module):\n"
      "    def forward(self, x):\n"
      "        return x\n"
      "class Child(Base):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.layers = torch.nn.ModuleList([Layer() for _ in range(3)])\n"
      "    def forward(self, x):\n"
      "        x = super().forward(x)\n"
      "        for i, layer in enumerate(self.layers[:2]):\n"
      "            x = layer(x)\n"
      "        return self.shared(x)\n"
      "class Free:\n"
      "    def forward(self, x):\n"
      "        return x\n"
      "    def run(self, x):\n"
      "        return x\n"
      "compiled = torch.compile(Free())\n");
  const auto& m = a->model;
  EXPECT_EQ(m.module_confidence(a->cls("Base")), ModuleConfidence::Known);
  EXPECT_EQ(m.module_confidence(a->cls("Child")), ModuleConfidence::Known);
  auto cs = m.callees(a->find(NodeKind::Call, "super().forward(x)"));
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0], a->def("forward", 0));
  auto ls = m.callees(a->find(NodeKind::Call, "layer(x)"));
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0], a->def("forward", 1));
  auto ss = m.callees(a->find(NodeKind::Call, "self.shared(x)"));
  ASSERT_EQ(ss.size(), 1u);
  EXPECT_EQ(ss[0], a->def("shared"));
  ASSERT_NE(m.region_of(a->def("shared")), nullptr);
  const auto* free_fwd = m.region_of(a->def("forward", 3));
  ASSERT_NE(free_fwd, nullptr);
  EXPECT_EQ(free_fwd->reason, RegionReason::CompileCall);
  EXPECT_EQ(m.region_of(a->def("run")), nullptr);
}

TEST(SemanticFacts, InFileSubmodulesAndLayers) {
  auto a = analyze(
      "import torch\n"
      "from torch import nn\n"
      "class Norm(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.weight = nn.Parameter(torch.ones(4))\n"
      "    def forward(self, x):\n"
      "        return x * self.weight\n"
      "class Pair(nn.Module):\n"
      "    def forward(self, x):\n"
      "        return x, x\n"
      "class Net(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.norm = Norm()\n"
      "        self.pair = Pair()\n"
      "        self.act = nn.GELU()\n"
      "        self.blocks = nn.ModuleList([Norm() for _ in range(2)])\n"
      "    eps = 1e-6\n"
      "    def forward(self, x):\n"
      "        tr = self.training\n"
      "        ep = self.eps\n"
      "        n = self.norm(x)\n"
      "        p = self.pair(x)\n"
      "        g = self.act(x)\n"
      "        w = self.weight_of()\n"
      "        for blk in self.blocks:\n"
      "            o = blk(x)\n"
      "        return n\n"
      "    def weight_of(self):\n"
      "        return self.norm.weight\n");
  auto fk = [&](std::string_view nm) { return a->model.fact(a->name(nm, 0)).kind; };
  EXPECT_EQ(fk("n"), TensorKind::Tensor);
  EXPECT_EQ(fk("p"), TensorKind::NotTensor);  // a tuple
  EXPECT_EQ(a->model.fact(a->name("p", 0)).element, TensorKind::Unknown);
  EXPECT_EQ(fk("g"), TensorKind::Tensor);
  EXPECT_EQ(fk("o"), TensorKind::Tensor);
  EXPECT_EQ(fk("w"), TensorKind::Unknown);  // attribute of another object
  EXPECT_EQ(fk("tr"), TensorKind::NotTensor);
  EXPECT_EQ(fk("ep"), TensorKind::NotTensor);
  EXPECT_EQ(a->model.fact(a->name("ep", 0)).dtype, DType::Floating);
}

TEST(SemanticScopes, ClassScopeInvisibleToComprehension) {
  auto a = analyze(
      "k = 0\n"
      "class C:\n"
      "    k = 1\n"
      "    vals = [k for _ in range(k)]\n");
  const auto& m = a->model;
  // the element `k` resolves to the module's k, the first iterable's `k` to C's
  EXPECT_EQ(a->line_of(m.resolve(a->name("k", 2))), 1);
  EXPECT_EQ(a->line_of(m.resolve(a->name("k", 3))), 3);
}

TEST(SemanticFacts, NeverCrashesOnBrokenInput) {
  for (const char* src :
       {"def f(:\n", "class\n", "x = (\n", "", "lambda: (yield)\n", "[x async for x in y]\n",
        "def f[T](x: T) -> T: return x\n", "type X = int\n"}) {
    auto decoded = gm::Source::from_utf8(src);
    ASSERT_TRUE(std::holds_alternative<gm::Source>(decoded));
    gm::ParseOptions options;
    options.version = {3, 12};
    auto r = gm::parse_module(std::get<gm::Source>(decoded), options);
    auto m = gm::sema::analyze(r.tree, std::get<gm::Source>(decoded));
    EXPECT_GE(m.scopes().size(), 1u);
  }
}

}  // namespace

namespace {

TEST(SemanticRegions, LibraryModeMakesEveryFunctionARegion) {
  const std::string text =
      "import torch\n\nclass Mixin:\n    def helper(self, x):\n        return x\n\n"
      "def util(x):\n    def inner():\n        return x\n    return inner\n\n"
      "class M(torch.nn.Module):\n    def forward(self, x):\n        return x\n";
  auto a = analyze(text);
  EXPECT_EQ(a->model.region_of(a->def("helper")), nullptr);
  EXPECT_EQ(a->model.region_of(a->def("util")), nullptr);
  ASSERT_NE(a->model.region_of(a->def("forward")), nullptr);

  gm::sema::AnalyzeOptions options;
  options.all_functions = true;
  const auto lib = gm::sema::analyze(a->parsed.tree, *a->source, options);
  for (const char* fn : {"helper", "util", "inner"}) {
    const auto* r = lib.region_of(a->def(fn));
    ASSERT_NE(r, nullptr) << fn;
    EXPECT_EQ(r->reason, gm::sema::RegionReason::Library) << fn;
  }
  // Reachable entries keep their own reason.
  EXPECT_EQ(lib.region_of(a->def("forward"))->reason, gm::sema::RegionReason::ModuleForward);
}

}  // namespace

namespace {

using gm::sema::Interval;
namespace ops = gm::sema::ops;

TEST(SemanticOps, TableRows) {
  const ops::OpInfo* sigmoid = ops::lookup("sigmoid");
  ASSERT_NE(sigmoid, nullptr);
  EXPECT_EQ(sigmoid->function.ret, gm::sema::Ret::Tensor);
  EXPECT_EQ(sigmoid->functional.dtype, gm::sema::RetDType::Float);
  EXPECT_TRUE(sigmoid->function.same_shape);
  EXPECT_TRUE(sigmoid->predicable());
  EXPECT_TRUE(sigmoid->has(ops::GradBounded));
  EXPECT_EQ(ops::lookup_qualified("torch.nn.functional.relu"), ops::lookup("relu"));
  EXPECT_EQ(ops::lookup_qualified("torch.special.erf"), ops::lookup("erf"));
  EXPECT_EQ(ops::lookup_qualified("torch.jit.is_tracing"), nullptr);  // not a leaf
  EXPECT_EQ(ops::lookup("jit.is_tracing")->function.ret, gm::sema::Ret::NotTensor);
  EXPECT_EQ(ops::lookup_qualified("numpy.sum"), nullptr);
  EXPECT_EQ(ops::torch_leaf("torch.linalg.norm"), "norm");
  EXPECT_EQ(ops::lookup("not_an_op"), nullptr);
  // Pure but not total (indices may be out of range), random, data-dependent.
  EXPECT_FALSE(ops::lookup("gather")->predicable());
  EXPECT_FALSE(ops::lookup("rand")->predicable());
  EXPECT_TRUE(ops::lookup("nonzero")->has(ops::DynamicShape));
  EXPECT_FALSE(ops::lookup("exp")->has(ops::GradBounded));  // unbounded derivative
  EXPECT_TRUE(ops::lookup("sum")->has(ops::Reduction));
  EXPECT_EQ(ops::lookup("sum")->evidence, ops::Evidence::Reduction);
  EXPECT_EQ(ops::lookup("isnan")->evidence, ops::Evidence::Method);
  EXPECT_EQ(ops::lookup("max")->overload, ops::Overload::MaxMin);
  EXPECT_TRUE(ops::lookup("shape")->has(ops::MetaAttr));
  EXPECT_EQ(ops::lookup("shape")->attribute.ret, gm::sema::Ret::IntSeq);
  EXPECT_TRUE(ops::lookup("zeros")->has(ops::SizeArgs));
  EXPECT_TRUE(ops::lookup("view")->has(ops::MethodSizeArgs));
}

TEST(SemanticOps, ValueRangeColumn) {
  auto range = [](const char* name) { return ops::value_range(*ops::lookup(name)); };
  const auto rand = range("rand");
  ASSERT_TRUE(rand.has_value());
  EXPECT_EQ(*rand, (Interval{0, 1, Interval::Closed, Interval::Closed}));
  EXPECT_TRUE(rand->contains(0.0));
  EXPECT_TRUE(rand->contains(1.0));  // a reduced-precision draw can round up to 1
  EXPECT_FALSE(rand->contains(-1e-300));
  EXPECT_EQ(range("rand_like"), rand);
  EXPECT_TRUE(ops::lookup("rand")->has(ops::Draw));
  EXPECT_TRUE(ops::lookup("rand_like")->has(ops::Draw));
  EXPECT_FALSE(ops::lookup("sigmoid")->has(ops::Draw));
  for (const char* unit : {"sigmoid", "softmax", "hardsigmoid"}) {
    EXPECT_EQ(range(unit), (Interval{0, 1, Interval::Closed, Interval::Closed})) << unit;
    EXPECT_TRUE(range(unit)->contains(*rand)) << unit;
    EXPECT_FALSE(rand->contains(*range("abs"))) << unit;
  }
  for (const char* nonneg : {"abs", "relu", "exp", "sqrt", "square"}) {
    const auto r = range(nonneg);
    ASSERT_TRUE(r.has_value()) << nonneg;
    EXPECT_EQ(r->lo, 0.0) << nonneg;
    EXPECT_TRUE(std::isinf(r->hi)) << nonneg;
    EXPECT_FALSE(r->contains(-1e-300)) << nonneg;
  }
  EXPECT_EQ(range("tanh"), (Interval{-1, 1}));
  EXPECT_EQ(range("eq"), (Interval{0, 1}));  // a bool result
  EXPECT_FALSE(range("randn").has_value());
  EXPECT_FALSE(range("add").has_value());
  // Every row: a well-formed interval; every bounded derivative is of a
  // predicable op.
  for (const char* n : {"rand", "sigmoid", "relu6", "log_softmax", "elu", "erfc"}) {
    const auto r = range(n);
    ASSERT_TRUE(r.has_value()) << n;
    EXPECT_LE(r->lo, r->hi) << n;
  }
}

TEST(SemanticOps, ModelValueRange) {
  auto a = analyze(
      "import torch\n"
      "import torch.nn.functional as F\n"
      "def f(x: torch.Tensor, k):\n"
      "    p = torch.rand([])\n"
      "    q = F.softmax(x, -1)\n"
      "    r = x.relu()\n"
      "    s = x > 0\n"
      "    u = torch.randn(3)\n"
      "    w = torch.rand([])\n"
      "    w = x\n"
      "    return p, q, r, s, u, w, k.sigmoid(), 0.5, -2, True\n");
  const auto& m = a->model;
  auto at = [&](const char* name) { return m.value_range(a->name(name, 1)); };
  EXPECT_EQ(at("p"), (Interval{0, 1, Interval::Closed, Interval::Closed}));
  EXPECT_EQ(at("q"), (Interval{0, 1}));
  ASSERT_TRUE(at("r").has_value());
  EXPECT_EQ(at("r")->lo, 0.0);
  EXPECT_EQ(at("s"), (Interval{0, 1}));
  EXPECT_FALSE(at("u").has_value());
  EXPECT_FALSE(m.value_range(a->name("w", 2)).has_value());  // bound twice
  // k is not known to be a tensor: its .sigmoid() may be anything
  EXPECT_FALSE(m.value_range(a->find(NodeKind::Call, "k.sigmoid()")).has_value());
  EXPECT_EQ(m.value_range(a->find(NodeKind::Constant, "0.5")), (Interval{0.5, 0.5}));
  EXPECT_EQ(m.value_range(a->find(NodeKind::UnaryOp, "-2")), (Interval{-2, -2}));
  EXPECT_EQ(m.value_range(a->find(NodeKind::Constant, "True")), (Interval{1, 1}));
}

}  // namespace

namespace {

TEST(SemanticScopes, ElifFromTheTree) {
  auto a = analyze(
      "if a:\n"
      "    pass\n"
      "elif b:\n"
      "    pass\n"
      "elif c:\n"
      "    pass\n"
      "else:\n"
      "    pass\n"
      "if d:\n"
      "    pass\n"
      "else:\n"
      "    if e:\n"
      "        pass\n"
      "if f:\n"
      "    pass\n"
      "else:\n"
      "    if g:\n"
      "        pass\n"
      "    x = 1\n");
  const auto& m = a->model;
  auto if_of = [&](const char* test) { return m.parent(a->name(test)); };
  EXPECT_FALSE(m.is_elif(if_of("a")));
  EXPECT_TRUE(m.is_elif(if_of("b")));
  EXPECT_TRUE(m.is_elif(if_of("c")));
  EXPECT_FALSE(m.is_elif(if_of("d")));
  EXPECT_FALSE(m.is_elif(if_of("e")));  // else: followed by an indented if
  EXPECT_FALSE(m.is_elif(if_of("g")));  // not the only statement of the else
  EXPECT_FALSE(m.is_elif(a->name("a")));  // not an If
}

}  // namespace

namespace {

TEST(SemanticFacts, TensorEvidenceConfidence) {
  auto a = analyze(
      "import torch\n"
      "def f(x: torch.Tensor, y, n: int):\n"
      "    a = x + 1\n"
      "    b = y.any()\n"
      "    c = y.keys()\n"
      "    d = n.sum()\n"
      "    e = torch.isnan\n"
      "    return a, b, c, d, e, y, len(y)\n");
  const auto& m = a->model;
  using gm::sema::TensorEvidence;
  EXPECT_EQ(m.tensor_evidence(a->name("a", 1)), TensorEvidence::Proven);
  EXPECT_EQ(m.tensor_evidence(a->find(NodeKind::Call, "y.any()")), TensorEvidence::Syntactic);
  EXPECT_EQ(m.tensor_evidence(a->find(NodeKind::Call, "y.keys()")), TensorEvidence::Unknown);
  // an int has no .sum(): not evidence
  EXPECT_EQ(m.tensor_evidence(a->find(NodeKind::Call, "n.sum()")), TensorEvidence::Unknown);
  EXPECT_EQ(m.tensor_evidence(a->name("y", 3)), TensorEvidence::Unknown);
  EXPECT_EQ(m.tensor_evidence(a->find(NodeKind::Call, "len(y)")), TensorEvidence::NotTensor);
}

}  // namespace

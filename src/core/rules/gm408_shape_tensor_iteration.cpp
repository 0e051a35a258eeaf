// GM408: a loop over a tensor of sizes whose items are used as Python ints.
//
// The fix hands the loop the Python list the tensor was built from. It is a
// small interprocedural proof: the loop's function may get the tensor as a
// parameter, from a call site that built it with `torch.as_tensor(L, ...)`,
// or from a caller that itself received the tensor and its list side by side.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rules/matching.h"
#include "rules/predication.h"
#include "rules/rules.h"
#include "semantic/ops.h"

namespace gm::rules {
namespace {

using namespace matching;
using sema::Binding;
using sema::BindingKind;

constexpr std::string_view kDoc = R"md(# GM408 shape-tensor-iteration

## What it detects
A `for` loop inside a compiled region over a tensor of sizes, such as
`for level, (height, width) in enumerate(spatial_shapes)`, whose items are
used where Python needs an int: a size or step of `torch.linspace`,
`torch.arange`, `torch.zeros`, ..., a `.view`/`.reshape`/`.expand` size, a
slice bound. The tensor must be proven one: built in the function with
`torch.as_tensor(...)`/`torch.tensor(...)`, or passed as one by a call site
in the same file.

## Why Dynamo breaks there
Iterating a tensor gives 0-d tensors. Where one is used as a size, PyTorch
reads its value (`aten._local_scalar_dense`, what `.item()` does). Dynamo
cannot keep that data-dependent number in the graph (default
`capture_scalar_outputs=False`): "Data dependent operator" (GB0033) ends the
graph, and inside a loop it gives up on the whole frame ("graph break in
loop", GB7000), so the function runs eagerly on every call.

## The rewrite
Sizes normally start as Python ints: the tensor is built from a list, as in
Deformable-DETR-style models:

```python
spatial_shapes = torch.as_tensor(spatial_shapes_list, dtype=torch.long)
...
proposals = self.generate_encoder_output_proposals(out, mask, spatial_shapes)
```

The fix passes that list instead (`..., spatial_shapes_list)`), at every call
site where it is proven to hold the same values, so the loop iterates Python
ints that Dynamo treats as constants. When the tensor is a parameter of the
caller too, the proof goes one level up: every call site of the caller in
the file must pass the tensor built from a list and that very list as
another parameter (`spatial_shapes=..., spatial_shapes_list=...`); the
caller then passes its list parameter. A loop over a local
`t = torch.as_tensor(L, dtype=torch.long)` iterates `L`.

The fix is **unsafe** (`--unsafe-fixes`): it holds under assumptions the file
alone cannot prove, named in the fix: calls between building the tensor and
the loop do not mutate the list, code outside the file does not override the
loop's function or call the caller with a tensor and list that disagree, and
the sizes fit the arithmetic (an int64 product that overflows wraps around
as a tensor; `height - 0.5` is a float32 0-d tensor but a Python float, the
same number while sizes are below 2**23), and no item meets a 0-d integer
tensor of another dtype (`h * n` with `n` a 0-d int32 tensor is int64 before,
int32 after). Division (`h / 3`) and float constants float32 cannot hold
(`h * 0.1`) are declined: they round differently.

## When it declines
- the items are used other than as sizes: compared, formatted, passed to an
  unknown function, indexed with (`x[h]` copies where `x[int]` views), ...;
- the loop target is not unpacked (`for row in t` gives 1-d tensors, not
  tuples), or an item name is bound elsewhere in the function;
- the tensor is used other than by the loop in its function, or rebound;
- the tensor is not built with an integer `dtype` from a list name, the
  list is rebound or mutated in the function after the tensor is built (an
  `append`, an item store), or no list is in scope at the call site;
- a call site cannot be matched to the parameters (`*args`, `**kwargs`).

## Example

```python
def get_reference_points(spatial_shapes, valid_ratios):
    for level, (height, width) in enumerate(spatial_shapes):   # GM408
        ref = torch.linspace(0.5, height - 0.5, height)
        ...

def forward(self, x, spatial_shapes, spatial_shapes_list, valid_ratios):
    ref = self.get_reference_points(spatial_shapes, valid_ratios)
# after (this module's callers pass both):
    ref = self.get_reference_points(spatial_shapes_list, valid_ratios)
```
)md";

bool is_function(const ast::Tree& t, NodeId n) {
  return n && (t.kind(n) == NodeKind::FunctionDef || t.kind(n) == NodeKind::AsyncFunctionDef);
}

bool is_int_constant(const ast::Tree& t, NodeId e) {
  return e && t.kind(e) == NodeKind::Constant &&
         t.constant_at(t.field(e, GM_F(Constant, value))).kind == ast::ConstantValue::Kind::Int;
}
// A float constant float32 holds exactly (0.5, 2.0, not 0.1): `h - 0.5` is
// then the same number as a float32 0-d tensor and as a Python float.
bool is_float_constant(const ast::Tree& t, NodeId e) {
  if (!e || t.kind(e) != NodeKind::Constant) return false;
  const auto& c = t.constant_at(t.field(e, GM_F(Constant, value)));
  return c.kind == ast::ConstantValue::Kind::Float &&
         static_cast<double>(static_cast<float>(c.number)) == c.number;
}

// The owner function of a binding's scope (the def node), else None.
NodeId def_of_scope(const sema::Model& m, sema::ScopeId s) {
  if (s == sema::kNone) return {};
  const sema::Scope& sc = m.scope(s);
  return sc.kind == sema::ScopeKind::Function ? sc.node : NodeId{};
}

// Loads (Name nodes) under `root` that resolve to `b`.
std::vector<NodeId> loads_of(const sema::Model& m, NodeId root, const Binding* b) {
  std::vector<NodeId> out;
  const ast::Tree& t = m.tree();
  walk(t, root, [&](NodeId n) {
    if (t.kind(n) == NodeKind::Name && ctx_of(t, n) == NodeKind::Load && name_id(t, n) == b->name &&
        m.resolve(n) == b)
      out.push_back(n);
  });
  return out;
}

bool only_binding(const sema::Model& m, const Binding* b) {
  return m.bindings_of(b->scope, b->name).size() == 1;
}

// Where a statement-level use sits for "after" comparisons.
std::uint32_t begin_of_stmt(const lint::RuleContext& ctx, NodeId n) {
  const NodeId s = edits::enclosing_statement(ctx.tree(), ctx.tree().at(n).begin);
  return s ? ctx.tree().at(s).begin : ctx.tree().at(n).begin;
}

// ------------------------------------------------------------ parameters

struct Params {
  std::vector<NodeId> positional;  // posonlyargs + args (arg nodes)
  std::size_t posonly = 0;
  std::vector<NodeId> kwonly;
  bool varargs = false;
};

Params params_of(const ast::Tree& t, NodeId def) {
  Params p;
  const NodeId a = t.child(def, GM_F(FunctionDef, args));
  for (NodeId x : t.children(a, GM_F(arguments, posonlyargs))) p.positional.push_back(x);
  p.posonly = p.positional.size();
  for (NodeId x : t.children(a, GM_F(arguments, args))) p.positional.push_back(x);
  for (NodeId x : t.children(a, GM_F(arguments, kwonlyargs))) p.kwonly.push_back(x);
  p.varargs = t.child(a, GM_F(arguments, vararg)) || t.child(a, GM_F(arguments, kwarg));
  return p;
}

std::string_view arg_name(const ast::Tree& t, NodeId arg) {
  return t.text(t.field(arg, GM_F(arg, arg)));
}

bool has_decorator(const sema::Model& m, NodeId def, std::string_view builtin) {
  const ast::Tree& t = m.tree();
  for (NodeId d : t.children(def, GM_F(FunctionDef, decorator_list)))
    if (t.kind(d) == NodeKind::Name && name_id(t, d) == builtin && m.is_builtin(d)) return true;
  return false;
}

// The ClassDef a def is a method of, else None.
NodeId class_of_method(const sema::Model& m, NodeId def) {
  const sema::ScopeId s = m.scope_of(def);
  if (s == sema::kNone) return {};
  const sema::Scope& sc = m.scope(s);
  return sc.kind == sema::ScopeKind::Class ? sc.node : NodeId{};
}

// The argument expression a call passes for parameter `param` of `callee`:
// None when the parameter is left to its default; nullopt when the call
// cannot be matched (starred arguments, `**kwargs`).
std::optional<NodeId> argument_for(const sema::Model& m, NodeId call, NodeId callee, NodeId param) {
  const ast::Tree& t = m.tree();
  if (has_double_star(t, call)) return std::nullopt;
  const Params ps = params_of(t, callee);
  std::size_t skip = 0;
  if (class_of_method(m, callee) && !has_decorator(m, callee, "staticmethod")) {
    skip = 1;  // self / cls, bound by the call
    const NodeId func = t.child(call, GM_F(Call, func));
    if (t.kind(func) == NodeKind::Attribute) {
      const NodeId obj = t.child(func, GM_F(Attribute, value));
      if (t.kind(obj) == NodeKind::Name && !has_decorator(m, callee, "classmethod")) {
        const Binding* b = m.resolve(obj);
        if (b && b->kind == BindingKind::ClassDef) skip = 0;  // C.method(obj, ...)
      }
    }
  }
  const auto args = t.children(call, GM_F(Call, args));
  for (NodeId a : args)
    if (t.kind(a) == NodeKind::Starred) return std::nullopt;
  for (std::size_t i = 0; i < ps.positional.size(); ++i) {
    if (ps.positional[i] != param) continue;
    if (i < skip) return std::nullopt;
    if (i - skip < args.size()) return args[i - skip];
    if (i < ps.posonly) return NodeId{};
    break;
  }
  const std::string_view name = arg_name(t, param);
  if (NodeId v = keyword(t, call, name)) return v;
  return NodeId{};
}

// ------------------------------------------------------------ the proof

// Everything one check() call needs about the file.
struct FileFacts {
  const lint::RuleContext& ctx;
  const sema::Model& m;
  std::unordered_map<std::uint32_t, std::vector<NodeId>> calls_to;  // def → calls

  explicit FileFacts(const lint::RuleContext& c) : ctx(c), m(*c.model()) {
    const ast::Tree& t = c.tree();
    walk(t, t.root(), [&](NodeId n) {
      if (t.kind(n) != NodeKind::Call) return;
      for (NodeId f : m.callees(n)) calls_to[f.index].push_back(n);
    });
  }
  const std::vector<NodeId>& callers(NodeId def) const {
    static const std::vector<NodeId> none;
    auto it = calls_to.find(def.index);
    return it == calls_to.end() ? none : it->second;
  }
};

// How `list_b` (a list bound in function `func`) is mutated in `func` from
// offset `after` on: "" when it is not (as far as the syntax shows).
std::string mutation_after(const FileFacts& ff, NodeId func, const Binding* list_b,
                           std::uint32_t after) {
  const ast::Tree& t = ff.ctx.tree();
  for (NodeId use : loads_of(ff.m, func, list_b)) {
    if (t.at(use).begin < after) continue;
    NodeId e = use;
    for (NodeId p = ff.m.parent(e); p; e = p, p = ff.m.parent(p)) {
      if (t.kind(p) == NodeKind::Subscript && t.child(p, GM_F(Subscript, value)) == e) {
        if (ctx_of(t, p) != NodeKind::Load)
          return "an item store into `" + std::string(list_b->name) + "`" +
                 predication::line_suffix(ff.ctx, p);
        continue;
      }
      if (t.kind(p) == NodeKind::Attribute && t.child(p, GM_F(Attribute, value)) == e) {
        const std::string_view attr = t.text(t.field(p, GM_F(Attribute, attr)));
        if (attr != "index" && attr != "count" && attr != "copy")
          return "`" + std::string(list_b->name) + "." + std::string(attr) + "`" +
                 predication::line_suffix(ff.ctx, p);
      }
      // a second name for the list (or for one of its items) could mutate it
      // unseen
      const NodeKind k = t.kind(p);
      if (k == NodeKind::Assign || k == NodeKind::AnnAssign || k == NodeKind::NamedExpr ||
          k == NodeKind::AugAssign || k == NodeKind::withitem)
        return "`" + std::string(list_b->name) + "` gets another name" +
               predication::line_suffix(ff.ctx, p);
      break;
    }
  }
  return {};
}

// dtype= of a tensor factory: an integer dtype wide enough for sizes.
bool integer_dtype(const sema::Model& m, NodeId dtype) {
  if (!dtype) return false;
  const auto q = m.qualified_name(dtype);
  return q &&
         (*q == "torch.long" || *q == "torch.int64" || *q == "torch.int" || *q == "torch.int32");
}

struct ListProof {
  const Binding* list = nullptr;  // the list's binding where the argument is evaluated
  std::string why;                // when list is null: why there is none
};

ListProof list_behind(const FileFacts& ff, NodeId expr, int depth);

// `expr` is a local `t = torch.as_tensor(L, dtype=<int>)`: L's binding.
ListProof local_list(const FileFacts& ff, NodeId expr, const Binding* b) {
  const ast::Tree& t = ff.ctx.tree();
  const sema::Model& m = ff.m;
  ListProof r;
  const NodeId v = b->value;
  const auto callee = callee_name(m, v);
  if (!callee || (*callee != "torch.as_tensor" && *callee != "torch.tensor"))
    return r.why = "`" + std::string(b->name) + "` is not built with `torch.as_tensor(list, ...)`",
           r;
  const auto args = t.children(v, GM_F(Call, args));
  if (args.size() != 1 || t.kind(args[0]) != NodeKind::Name)
    return r.why = "`" + std::string(b->name) + "` is not built from a list name", r;
  if (!integer_dtype(m, keyword(t, v, "dtype")))
    return r.why = "`" + std::string(b->name) + "` is not built with an integer `dtype=`", r;
  const Binding* lb = m.resolve(args[0]);
  if (!lb || !only_binding(m, lb))
    return r.why = "`" + std::string(name_id(t, args[0])) + "` is rebound", r;
  const NodeId func = predication::enclosing_function(m, expr);
  if (!func || def_of_scope(m, lb->scope) != func || def_of_scope(m, b->scope) != func)
    return r.why = "the list is not local to the caller", r;
  const std::uint32_t built = begin_of_stmt(ff.ctx, v);
  if (begin_of_stmt(ff.ctx, expr) <= built)
    return r.why = "the tensor is used before it is built", r;
  if (auto mut = mutation_after(ff, func, lb, built); !mut.empty())
    return r.why = "the list may change after the tensor is built: " + mut, r;
  r.list = lb;
  return r;
}

// `expr` is parameter P of function f: a sibling parameter S that every call
// site of f in the file binds to the list behind the tensor it passes for P.
ListProof sibling_list(const FileFacts& ff, const Binding* b, int depth) {
  const ast::Tree& t = ff.ctx.tree();
  const sema::Model& m = ff.m;
  ListProof r;
  const NodeId f = def_of_scope(m, b->scope);
  if (!f || depth <= 0) return r.why = "`" + std::string(b->name) + "` is a parameter", r;
  const auto& sites = ff.callers(f);
  if (sites.empty())
    return r.why = "`" + std::string(b->name) + "` is a parameter of `" +
                   std::string(t.text(t.field(f, GM_F(FunctionDef, name)))) +
                   "`, which no call in this file calls",
           r;
  const Params ps = params_of(t, f);
  std::vector<NodeId> candidates;
  for (NodeId p : ps.positional)
    if (p != b->node) candidates.push_back(p);
  for (NodeId p : ps.kwonly)
    if (p != b->node) candidates.push_back(p);
  for (NodeId call : sites) {
    const auto arg = argument_for(m, call, f, b->node);
    if (!arg)
      return r.why = "a call of the caller cannot be matched to its parameters" +
                     predication::line_suffix(ff.ctx, call),
             r;
    if (!*arg)
      return r.why = "a call of the caller leaves `" + std::string(b->name) + "` to its default" +
                     predication::line_suffix(ff.ctx, call),
             r;
    const ListProof inner = list_behind(ff, *arg, depth - 1);
    if (!inner.list) return r.why = inner.why, r;
    std::erase_if(candidates, [&](NodeId p) {
      const auto s_arg = argument_for(m, call, f, p);
      return !s_arg || !*s_arg || t.kind(*s_arg) != NodeKind::Name ||
             m.resolve(*s_arg) != inner.list;
    });
    if (candidates.empty())
      return r.why = "no other parameter of the caller gets the list `" +
                     std::string(inner.list->name) + "`" + predication::line_suffix(ff.ctx, call),
             r;
  }
  // the sibling parameter itself: never rebound or mutated in f
  for (NodeId p : candidates) {
    const auto bs = m.bindings_of(b->scope, arg_name(t, p));
    if (bs.size() != 1) continue;
    if (!mutation_after(ff, f, bs[0], 0).empty()) continue;
    r.list = bs[0];
    return r;
  }
  return r.why = "the caller's list parameter is rebound or mutated", r;
}

ListProof list_behind(const FileFacts& ff, NodeId expr, int depth) {
  const ast::Tree& t = ff.ctx.tree();
  ListProof r;
  if (!expr || t.kind(expr) != NodeKind::Name) return r.why = "the argument is not a name", r;
  const Binding* b = ff.m.resolve(expr);
  if (!b || !only_binding(ff.m, b))
    return r.why = "`" + std::string(name_id(t, expr)) + "` is rebound", r;
  if (b->kind == BindingKind::Assign && b->value) return local_list(ff, expr, b);
  if (b->kind == BindingKind::Parameter) return sibling_list(ff, b, depth);
  return r.why = "`" + std::string(b->name) + "` is not built from a list", r;
}

// ------------------------------------------------------------ item uses

// How the loop's items (and what is computed from them) are used. An item is
// a 0-d integer tensor before the fix and a Python int after; every use must
// behave the same for both.
class ItemUses {
 public:
  ItemUses(const FileFacts& ff, NodeId func) : ff_(ff), t_(ff.ctx.tree()), func_(func) {}

  void track(const Binding* b) {
    if (std::find(tracked_.begin(), tracked_.end(), b) == tracked_.end()) {
      tracked_.push_back(b);
      work_.push_back(b);
    }
  }
  // Runs to a fixpoint; false with why() on the first use that differs.
  // Every use is visited (a size use after a failing one still counts).
  bool run() {
    while (!work_.empty()) {
      const Binding* b = work_.back();
      work_.pop_back();
      for (NodeId use : loads_of(ff_.m, func_, b)) use_(use);
    }
    return why_.empty();
  }
  bool reaches_size() const { return size_use_; }
  const std::string& why() const { return why_; }

 private:
  enum class Kind { Int, Float, Tensor, Unknown };

  void fail(NodeId at, std::string what) {
    if (why_.empty()) why_ = std::move(what) + predication::line_suffix(ff_.ctx, at);
  }
  bool tracked(NodeId name) const {
    if (t_.kind(name) != NodeKind::Name) return false;
    const Binding* b = ff_.m.resolve(name);
    return std::find(tracked_.begin(), tracked_.end(), b) != tracked_.end();
  }
  // What an operand beside an item is.
  Kind operand(NodeId e) {
    const ast::DepthGuard guard(operand_depth_);
    if (guard.exceeded()) return Kind::Unknown;
    if (is_int_constant(t_, e) || tracked(e) || int_name(e)) return Kind::Int;
    if (is_float_constant(t_, e)) return Kind::Float;
    if (t_.kind(e) == NodeKind::UnaryOp) return operand(t_.child(e, GM_F(UnaryOp, operand)));
    if (t_.kind(e) == NodeKind::BinOp) {
      const Kind l = operand(t_.child(e, GM_F(BinOp, left)));
      const Kind r = operand(t_.child(e, GM_F(BinOp, right)));
      const auto op = static_cast<NodeKind>(t_.field(e, GM_F(BinOp, op)).a);
      if (l == Kind::Unknown || r == Kind::Unknown || !arithmetic(op)) return Kind::Unknown;
      if (l == Kind::Tensor || r == Kind::Tensor) return Kind::Tensor;
      return l == Kind::Int && r == Kind::Int ? Kind::Int : Kind::Float;
    }
    if (is_tensor(ff_.m, e)) return Kind::Tensor;
    if (t_.kind(e) == NodeKind::Subscript) {  // x[:, None, i]: tensor-style indexing
      NodeId s = t_.child(e, GM_F(Subscript, slice));
      std::vector<NodeId> parts{s};
      if (t_.kind(s) == NodeKind::Tuple) {
        parts.clear();
        for (NodeId x : t_.children(s, GM_F(Tuple, elts))) parts.push_back(x);
      }
      for (NodeId x : parts)
        if (t_.kind(x) == NodeKind::Slice ||
            (t_.kind(x) == NodeKind::Constant &&
             t_.constant_at(t_.field(x, GM_F(Constant, value))).kind ==
                 ast::ConstantValue::Kind::None))
          return Kind::Tensor;
    }
    return Kind::Unknown;
  }

  static bool arithmetic(NodeKind op) {
    return op == NodeKind::Add || op == NodeKind::Sub || op == NodeKind::Mult ||
           op == NodeKind::FloorDiv || op == NodeKind::Mod;
  }

  bool size_call(NodeId call, Kind k) const {
    // The op table's SizeArgs (torch.zeros(*sizes), ...), RangeArgs
    // (torch.arange(start, end, step): Scalar or 0-d tensor alike) and
    // MethodSizeArgs (t.view(*sizes), ...).
    using sema::ops::lookup;
    if (auto q = callee_name(ff_.m, call)) {
      const std::string_view name = std::string_view(*q).substr(q->starts_with("torch.") ? 6 : 0);
      const sema::ops::OpInfo* op =
          q->starts_with("torch.") && name.find('.') == std::string_view::npos ? lookup(name)
                                                                               : nullptr;
      if (op && op->has(sema::ops::RangeArgs)) return true;
      if (k != Kind::Int) return false;
      if (op && op->has(sema::ops::SizeArgs)) return true;
      if (*q == "builtins.range") return true;
      return false;
    }
    if (k != Kind::Int) return false;
    const NodeId func = t_.child(call, GM_F(Call, func));
    if (t_.kind(func) != NodeKind::Attribute) return false;
    const sema::ops::OpInfo* op = lookup(t_.text(t_.field(func, GM_F(Attribute, attr))));
    if (op && op->has(sema::ops::MethodSizeArgs)) return true;
    return false;
  }

  // A local name every binding of which is an int constant or a value
  // computed from the items (`pos = 0` ... `pos += h * w`): it holds an int
  // before and after the fix too; its own uses are checked as items'.
  bool int_name(NodeId name) {
    if (t_.kind(name) != NodeKind::Name) return false;
    const Binding* b = ff_.m.resolve(name);
    if (!b || def_of_scope(ff_.m, b->scope) != func_) return false;
    const auto all = ff_.m.bindings_of(b->scope, b->name);
    for (const Binding* o : all) {
      const bool assign = o->kind == BindingKind::Assign || o->kind == BindingKind::AugAssign;
      if (!assign || t_.kind(o->node) != NodeKind::Name || !whole_target(o)) return false;
      const NodeId value = t_.kind(o->binder) == NodeKind::AugAssign
                               ? t_.child(o->binder, GM_F(AugAssign, value))
                               : t_.child(o->binder, GM_F(Assign, value));
      bool uses_item = is_int_constant(t_, value);
      walk(t_, value, [&](NodeId n) { uses_item = uses_item || tracked(n); });
      if (!uses_item) return false;
    }
    for (const Binding* o : all) track(o);
    return true;
  }
  // `x = v` / `x += v` with x the whole target.
  bool whole_target(const Binding* o) const {
    const NodeId s = o->binder;
    if (t_.kind(s) == NodeKind::AugAssign) return t_.child(s, GM_F(AugAssign, target)) == o->node;
    if (t_.kind(s) != NodeKind::Assign) return false;
    const auto targets = t_.children(s, GM_F(Assign, targets));
    return targets.size() == 1 && targets[0] == o->node;
  }

  // Assignment of an item-derived int to a plain local name.
  void derive(NodeId stmt, NodeId target) {
    if (!int_name(target))
      return fail(stmt, "an item is stored into `" + std::string(ff_.ctx.text_of(target)) +
                            "`, which is also bound otherwise");
  }

  void use_(NodeId use) {
    Kind k = Kind::Int;
    NodeId e = use;
    for (;;) {
      const NodeId p = ff_.m.parent(e);
      if (!p) return fail(e, "an item is used outside any expression");
      switch (t_.kind(p)) {
        case NodeKind::BinOp: {
          const NodeId l = t_.child(p, GM_F(BinOp, left)), rr = t_.child(p, GM_F(BinOp, right));
          const Kind o = operand(l == e ? rr : l);
          const auto op = static_cast<NodeKind>(t_.field(p, GM_F(BinOp, op)).a);
          // `/` is left out: h / 3 rounds differently in float32 and float64
          const bool int_op = op == NodeKind::Add || op == NodeKind::Sub || op == NodeKind::Mult ||
                              op == NodeKind::FloorDiv || op == NodeKind::Mod;
          // with a (non-0-d integer) tensor: a tensor either way, same dtype
          if (o == Kind::Tensor && (int_op || op == NodeKind::Div)) return;
          if (!int_op)
            return fail(p, "an item is an operand of `" + std::string(ff_.ctx.text_of(p)) + "`");
          if (o == Kind::Unknown)
            return fail(p, "an item meets an operand not known to be a number or a tensor in `" +
                               std::string(ff_.ctx.text_of(p)) + "`");
          k = k == Kind::Int && o == Kind::Int ? Kind::Int : Kind::Float;
          e = p;
          continue;
        }
        case NodeKind::UnaryOp: {
          const auto op = static_cast<NodeKind>(t_.field(p, GM_F(UnaryOp, op)).a);
          if (op != NodeKind::USub && op != NodeKind::UAdd)
            return fail(p, "an item is an operand of `" + std::string(ff_.ctx.text_of(p)) + "`");
          e = p;
          continue;
        }
        case NodeKind::Slice:
          if (k != Kind::Int) return fail(p, "a non-integer item value is a slice bound");
          size_use_ = true;
          return;
        case NodeKind::keyword: {
          const NodeId call = ff_.m.parent(p);
          if (call && t_.kind(call) == NodeKind::Call && size_call(call, k)) {
            size_use_ = true;
            return;
          }
          return fail(
              p, "an item is passed to `" + std::string(ff_.ctx.text_of(call ? call : p)) + "`");
        }
        case NodeKind::Call:
          if (t_.child(p, GM_F(Call, func)) != e && size_call(p, k)) {
            size_use_ = true;
            return;
          }
          return fail(p, "an item is passed to `" + std::string(ff_.ctx.text_of(p)) + "`");
        case NodeKind::Tuple:
        case NodeKind::List: {  // a size tuple: x.view((b, h, w)), torch.zeros([h, w])
          const NodeId call = ff_.m.parent(p);
          if (k == Kind::Int && call && t_.kind(call) == NodeKind::Call &&
              t_.child(call, GM_F(Call, func)) != p && size_call(call, k)) {
            size_use_ = true;
            return;
          }
          return fail(p, "an item is put into `" + std::string(ff_.ctx.text_of(p)) + "`");
        }
        case NodeKind::AugAssign: {
          const auto op = static_cast<NodeKind>(t_.field(p, GM_F(AugAssign, op)).a);
          if (k != Kind::Int ||
              !(op == NodeKind::Add || op == NodeKind::Sub || op == NodeKind::Mult))
            return fail(p, "an item updates `" + std::string(ff_.ctx.text_of(p)) + "`");
          return derive(p, t_.child(p, GM_F(AugAssign, target)));
        }
        case NodeKind::Assign: {
          const auto targets = t_.children(p, GM_F(Assign, targets));
          if (k != Kind::Int || targets.size() != 1)
            return fail(p, "an item is stored by `" + std::string(ff_.ctx.text_of(p)) + "`");
          return derive(p, targets[0]);
        }
        default: return fail(p, "an item is used in `" + std::string(ff_.ctx.text_of(p)) + "`");
      }
    }
  }

  const FileFacts& ff_;
  const ast::Tree& t_;
  NodeId func_;
  std::vector<const Binding*> tracked_;
  int operand_depth_ = 0;  // ast::DepthGuard's counter for operand()
  std::vector<const Binding*> work_;
  bool size_use_ = false;
  std::string why_;
};

// ------------------------------------------------------------ the rule

std::string join(const std::vector<std::uint32_t>& xs) {
  std::string out;
  for (auto x : xs) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return out;
}

// `for [i,] (a, b, ...) in [enumerate(]seq[)]`: seq and the item names.
struct LoopShape {
  NodeId seq;
  std::vector<NodeId> items;
};

std::optional<LoopShape> loop_shape(const sema::Model& m, NodeId loop) {
  const ast::Tree& t = m.tree();
  NodeId it = t.child(loop, GM_F(For, iter));
  NodeId target = t.child(loop, GM_F(For, target));
  if (t.kind(it) == NodeKind::Call) {
    const NodeId f = t.child(it, GM_F(Call, func));
    const auto args = t.children(it, GM_F(Call, args));
    if (t.kind(f) != NodeKind::Name || name_id(t, f) != "enumerate" || !m.is_builtin(f) ||
        args.size() != 1 || !t.children(it, GM_F(Call, keywords)).empty())
      return std::nullopt;
    it = args[0];
    if (t.kind(target) != NodeKind::Tuple) return std::nullopt;
    const auto pair = t.children(target, GM_F(Tuple, elts));
    if (pair.size() != 2) return std::nullopt;
    target = pair[1];
  }
  if (t.kind(it) != NodeKind::Name) return std::nullopt;
  if (t.kind(target) != NodeKind::Tuple && t.kind(target) != NodeKind::List) return std::nullopt;
  LoopShape s{it, {}};
  const auto elts = t.kind(target) == NodeKind::Tuple ? t.children(target, GM_F(Tuple, elts))
                                                      : t.children(target, GM_F(List, elts));
  for (NodeId x : elts) {
    if (t.kind(x) != NodeKind::Name) return std::nullopt;
    s.items.push_back(x);
  }
  if (s.items.empty()) return std::nullopt;
  return s;
}

class ShapeTensorIteration final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM408"; }
  std::string_view name() const override { return "shape-tensor-iteration"; }
  std::string_view summary() const override {
    return "a loop over a tensor of sizes reads tensor data at every size it uses";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    if (!ctx.model()) return;
    std::optional<FileFacts> ff;
    const ast::Tree& t = ctx.tree();
    for_each_in_region(ctx, [&](NodeId n) {
      if (t.kind(n) != NodeKind::For) return;
      const auto shape = loop_shape(*ctx.model(), n);
      if (!shape) return;
      if (!ff) ff.emplace(ctx);
      check_loop(*ff, n, *shape, sink);
    });
  }

 private:
  void check_loop(const FileFacts& ff, NodeId loop, const LoopShape& s,
                  lint::DiagnosticSink& sink) const {
    const ast::Tree& t = ff.ctx.tree();
    const sema::Model& m = ff.m;
    const NodeId func = predication::enclosing_function(m, loop);
    if (!func) return;
    const Binding* seq = m.resolve(s.seq);
    if (!seq || def_of_scope(m, seq->scope) != func) return;

    // Is the sequence a tensor? A local tensor fact, or a parameter some call
    // site passes a tensor for.
    // call sites passing a tensor (parameter case), with the list behind it
    struct Site {
      NodeId call, arg;
      ListProof proof;
    };
    std::vector<Site> tensor_sites;
    bool local = false;
    if (seq->kind == BindingKind::Parameter) {
      for (NodeId call : ff.callers(func)) {
        const auto arg = argument_for(m, call, func, seq->node);
        if (!arg || !*arg) continue;
        ListProof proof = list_behind(ff, *arg, 1);
        if (proof.list || is_tensor(m, *arg))
          tensor_sites.push_back({call, *arg, std::move(proof)});
      }
      if (tensor_sites.empty()) return;
    } else {
      if (!is_tensor(m, s.seq)) return;
      local = true;
    }

    ItemUses uses(ff, func);
    std::string why;
    for (NodeId item : s.items) {
      const Binding* b = m.resolve(item);
      if (!b || !only_binding(m, b)) {
        why = "`" + std::string(name_id(t, item)) + "` is bound elsewhere in the function too";
        break;
      }
      uses.track(b);
    }
    if (why.empty() && !uses.run()) why = uses.why();
    // Items never used as sizes: no data read. (The loop may still break
    // elsewhere, but not for the reason this rule is about.)
    if (!uses.reaches_size()) return;

    const std::string seq_name(seq->name);
    auto& d = sink.report(
        begin_of(t, s.seq), end_of(t, s.seq),
        "iterating tensor `" + seq_name + "` gives 0-d tensors that are then used as sizes");
    d.why =
        "Dynamo: Data dependent operator (aten._local_scalar_dense) where an item is used as a "
        "size; inside a loop the whole frame falls back to eager (graph break in loop)";
    if (!why.empty()) return void(d.declined_reason = why);

    std::vector<edits::Edit> edits;
    std::vector<std::string> lists;
    std::vector<std::uint32_t> lines;
    std::string last_why;
    if (local) {
      const ListProof p = list_behind(ff, s.seq, 0);
      if (!p.list) return void(d.declined_reason = p.why);
      edits.push_back(
          edits::Edit::replace(begin_of(t, s.seq), end_of(t, s.seq), std::string(p.list->name)));
      lists.push_back(std::string(p.list->name));
    } else {
      // the parameter: used by this loop only, never rebound
      if (!only_binding(m, seq) || loads_of(m, func, seq).size() != 1)
        return void(d.declined_reason = "`" + seq_name + "` is used other than by this loop");
      if (const std::string o = override_of(ff, func); !o.empty())
        return void(d.declined_reason = o);
      for (const Site& site : tensor_sites) {
        if (m.callees(site.call).size() != 1) {
          last_why = "a call site may reach another function" +
                     predication::line_suffix(ff.ctx, site.call);
          continue;
        }
        if (!site.proof.list) {
          last_why = site.proof.why;
          continue;
        }
        const std::string list(site.proof.list->name);
        edits.push_back(edits::Edit::replace(begin_of(t, site.arg), end_of(t, site.arg), list));
        lists.push_back(list);
        lines.push_back(predication::line_of(ff.ctx, begin_of(t, site.call)));
      }
      if (edits.empty())
        return void(d.declined_reason = "no Python list holding the same values: " + last_why);
    }
    std::sort(lists.begin(), lists.end());
    lists.erase(std::unique(lists.begin(), lists.end()), lists.end());
    std::string names;
    for (const auto& l : lists) names += (names.empty() ? "`" : ", `") + l + "`";
    std::string description =
        local ? "Iterate the list " + names + " the tensor was built from"
              : "Pass the list " + names + " the tensor was built from in the call" +
                    (lines.size() == 1 ? " on line " : "s on lines ") + join(lines);
    description +=
        " (assumes the list is not mutated by calls in between, no caller outside this file "
        "passes a tensor and list that disagree, and the sizes fit in float32/int64 arithmetic)";
    d.fix = edits::Fix::unsafe(std::move(description), std::move(edits));
  }

  // A method that an in-file subclass overrides: the override would get the
  // list too.
  static std::string override_of(const FileFacts& ff, NodeId func) {
    const sema::Model& m = ff.m;
    const ast::Tree& t = m.tree();
    const NodeId cls = class_of_method(m, func);
    if (!cls) return {};
    const std::string_view fname = t.text(t.field(func, GM_F(FunctionDef, name)));
    std::string found;
    walk(t, t.root(), [&](NodeId n) {
      if (!found.empty() || t.kind(n) != NodeKind::ClassDef || n == cls) return;
      if (!m.derives_from(n, cls)) return;
      for (NodeId st : t.children(n, GM_F(ClassDef, body)))
        if (is_function(t, st) && t.text(t.field(st, GM_F(FunctionDef, name))) == fname)
          found = "`" + std::string(fname) + "` is overridden in subclass `" +
                  std::string(t.text(t.field(n, GM_F(ClassDef, name)))) + "`";
    });
    return found;
  }
};

}  // namespace

const lint::Rule& gm408_shape_tensor_iteration() {
  static const ShapeTensorIteration rule;
  return rule;
}

}  // namespace gm::rules

// Value ranges of op results (see value_range.h).
#include "semantic/value_range.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>

#include "ast/tree.h"
#include "semantic/analyzer.h"
#include "semantic/ops.h"

namespace gm::sema {
std::string number_text(double x);

namespace {

using ast::NodeKind;

bool floating_dtype(const Model& m, NodeId e) {
  const auto q = m.qualified_name(e);
  if (!q) return false;
  for (std::string_view d : {"torch.float16", "torch.float32", "torch.float64", "torch.bfloat16",
                             "torch.float", "torch.double", "torch.half"})
    if (*q == d) return true;
  return false;
}

NodeId keyword_value(const ast::Tree& tree, NodeId call, std::string_view name) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto arg = tree.field(k, GM_F(keyword, arg));
    if (arg.b != 0 && tree.text(arg) == name) return tree.child(k, GM_F(keyword, value));
  }
  return NodeId{};
}

bool has_double_star(const ast::Tree& tree, NodeId call) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords)))
    if (tree.field(k, GM_F(keyword, arg)).b == 0) return true;
  return false;
}

// A number literal (`0`, `1.5`, `-1`): its value and source text.
std::optional<RangeBound> number_literal(const ast::Tree& tree, NodeId e) {
  bool negative = false;
  NodeId c = e;
  if (tree.kind(c) == NodeKind::UnaryOp &&
      static_cast<NodeKind>(tree.field(c, GM_F(UnaryOp, op)).a) == NodeKind::USub) {
    negative = true;
    c = tree.child(c, GM_F(UnaryOp, operand));
  }
  if (tree.kind(c) != NodeKind::Constant) return std::nullopt;
  const auto& v = tree.constant_at(tree.field(c, GM_F(Constant, value)));
  double x;
  if (v.kind == ast::ConstantValue::Kind::Float) {
    x = v.number;
  } else if (v.kind == ast::ConstantValue::Kind::Int) {
    const std::string_view digits = tree.str(v.text);
    if (digits.size() > 15) return std::nullopt;  // not exactly a double
    x = std::stod(std::string(digits));
  } else {
    return std::nullopt;
  }
  if (negative) x = -x;
  return RangeBound{x, true, number_text(x)};
}

}  // namespace

std::string number_text(double x) {
  if (x == 0.0) return "0";
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

std::optional<ValueRange> op_value_range(const Model& m, NodeId call) {
  const ast::Tree& tree = m.tree();
  if (!call || tree.kind(call) != NodeKind::Call) return std::nullopt;
  const auto q = m.qualified_name(tree.child(call, GM_F(Call, func)));
  if (!q) return std::nullopt;
  const auto args = tree.children(call, GM_F(Call, args));
  const bool starred = std::any_of(args.begin(), args.end(),
                                   [&](NodeId a) { return tree.kind(a) == NodeKind::Starred; });
  if (starred || has_double_star(tree, call)) return std::nullopt;
  ValueRange r;
  r.op = *q;
  r.draw = call;
  // torch: a random draw of the op table with a range (torch.rand,
  // torch.rand_like), for floating results (the range is the table's).
  if (const ops::OpInfo* op = ops::lookup_qualified(*q); op && op->has(ops::Draw)) {
    const auto range = ops::value_range(*op);
    if (!range || std::isinf(range->lo) || std::isinf(range->hi)) return std::nullopt;
    const NodeId dtype = keyword_value(tree, call, "dtype");
    if (dtype && !floating_dtype(m, dtype)) return std::nullopt;
    if (detail::ends_with(*q, "_like") && !dtype) {  // the dtype of the tensor it is like
      if (args.empty()) return std::nullopt;
      const TensorFact f = m.fact(args[0]);
      if (f.kind != TensorKind::Tensor || f.dtype != DType::Floating) return std::nullopt;
    }
    r.lo = {range->lo, range->lo_end == Interval::Closed, number_text(range->lo)};
    r.hi = {range->hi, range->hi_end == Interval::Closed, number_text(range->hi)};
    r.tensor = true;
    return r;
  }
  if (*q == "random.random") {
    if (!args.empty() || !tree.children(call, GM_F(Call, keywords)).empty()) return std::nullopt;
    r.lo = {0.0, true, "0"};
    r.hi = {1.0, false, "1"};
    return r;
  }
  if (*q == "random.uniform") {
    if (args.size() != 2 || !tree.children(call, GM_F(Call, keywords)).empty()) return std::nullopt;
    auto a = number_literal(tree, args[0]), b = number_literal(tree, args[1]);
    if (!a || !b) return std::nullopt;
    if (b->value < a->value) std::swap(a, b);
    r.lo = *a;
    r.hi = *b;
    return r;
  }
  return std::nullopt;
}

std::optional<ValueRange> value_range(const Model& m, NodeId expr) {
  const ast::Tree& tree = m.tree();
  if (!expr) return std::nullopt;
  if (tree.kind(expr) == NodeKind::Call) return op_value_range(m, expr);
  if (tree.kind(expr) != NodeKind::Name) return std::nullopt;
  const Binding* b = m.resolve(expr);
  if (!b || b->scope == kNone || m.scope(b->scope).kind != ScopeKind::Function) return std::nullopt;
  // Every binding of the name is `name = <draw>`; the range is their union.
  std::optional<ValueRange> r;
  for (const Binding* o : m.bindings_of(b->scope, b->name)) {
    if (o->kind != BindingKind::Assign || !o->value) return std::nullopt;
    auto ro = op_value_range(m, o->value);
    if (!ro) return std::nullopt;
    if (!r) {
      r = std::move(ro);
      continue;
    }
    if (ro->lo.value < r->lo.value || (ro->lo.value == r->lo.value && ro->lo.closed))
      r->lo = ro->lo;
    if (ro->hi.value > r->hi.value || (ro->hi.value == r->hi.value && ro->hi.closed))
      r->hi = ro->hi;
    r->tensor = r->tensor && ro->tensor;
  }
  if (!r) return std::nullopt;
  r->draw = b->value ? b->value : r->draw;
  // Every read of this binding is a comparison operand.
  bool ok = true;
  std::function<void(NodeId)> walk = [&](NodeId n) {
    if (!ok) return;
    if (tree.kind(n) == NodeKind::Name &&
        static_cast<NodeKind>(tree.field(n, GM_F(Name, ctx)).a) == NodeKind::Load &&
        tree.text(tree.field(n, GM_F(Name, id))) == b->name && m.resolve(n) &&
        m.resolve(n)->scope == b->scope) {
      const NodeId p = m.parent(n);
      if (!p || tree.kind(p) != NodeKind::Compare) ok = false;
    }
    const auto fields = ast::fields_of(tree.kind(n));
    for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
      if (fields[i].kind == ast::FieldKind::Node || fields[i].kind == ast::FieldKind::OptNode) {
        if (NodeId c = tree.child(n, i)) walk(c);
      } else if (fields[i].kind == ast::FieldKind::List ||
                 fields[i].kind == ast::FieldKind::OptList) {
        for (NodeId c : tree.children(n, i))
          if (c) walk(c);
      }
    }
  };
  walk(m.scope(b->scope).node);
  if (!ok) return std::nullopt;
  return r;
}

}  // namespace gm::sema

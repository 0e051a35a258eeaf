// Matching: tree queries for recognising call and name patterns in regions
// (the scalar, data-dependent-shape and untraceable-Python rules, and any
// rule that matches a method call, a keyword or a constant).
//
// Policy on tensor facts, one for all these rules:
//  - a method whose name is tensor-specific (`.item()`, `.tolist()`,
//    `.nonzero()`, `.unique()`, `.repeat_interleave()`, `.requires_grad_()`)
//    is reported unless the receiver is proven not to be a tensor
//    (TensorKind::NotTensor): unannotated parameters are Unknown, and these
//    names are (nearly) only tensors';
//  - where the pattern itself is generic Python (`x[m]`, `while c:`,
//    `if c: break`), the operand must be a proven tensor fact.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ast/tree.h"
#include "ast/visit.h"
#include "edits/tree_query.h"
#include "lint/rule.h"
#include "semantic/model.h"

namespace gm::rules::matching {

using ast::NodeId;
using ast::NodeKind;

// Pre-order walk over every node under `n` (n included).
template <typename F>
void walk(const ast::Tree& tree, NodeId n, const F& f) {
  ast::preorder(tree, n, [&](NodeId c) { f(c); });
}

// Calls f(node) for every node of the file that is inside a compiled region.
// Does nothing without a semantic model.
template <typename F>
void for_each_in_region(const lint::RuleContext& ctx, const F& f) {
  const sema::Model* m = ctx.model();
  if (!m) return;
  for (NodeId n : m->region_nodes()) f(n);
}

// The identifier of a Name node; "" for any other node.
inline std::string_view name_id(const ast::Tree& tree, NodeId n) {
  return tree.kind(n) == NodeKind::Name ? tree.text(tree.field(n, GM_F(Name, id)))
                                        : std::string_view{};
}

// Load / Store / Del of a Name, Subscript or Attribute (Load for any other node).
inline NodeKind ctx_of(const ast::Tree& tree, NodeId n) {
  switch (tree.kind(n)) {
    case NodeKind::Name: return static_cast<NodeKind>(tree.field(n, GM_F(Name, ctx)).a);
    case NodeKind::Subscript: return static_cast<NodeKind>(tree.field(n, GM_F(Subscript, ctx)).a);
    case NodeKind::Attribute: return static_cast<NodeKind>(tree.field(n, GM_F(Attribute, ctx)).a);
    default: return NodeKind::Load;
  }
}

// `recv.<name>(...)`: the receiver, else None.
inline NodeId method_receiver(const ast::Tree& tree, NodeId call, std::string_view name) {
  if (tree.kind(call) != NodeKind::Call) return {};
  const NodeId func = tree.child(call, GM_F(Call, func));
  if (tree.kind(func) != NodeKind::Attribute) return {};
  if (tree.text(tree.field(func, GM_F(Attribute, attr))) != name) return {};
  return tree.child(func, GM_F(Attribute, value));
}

// The qualified name of a call's callee ("torch.nonzero"), if it resolves.
inline std::optional<std::string> callee_name(const sema::Model& m, NodeId call) {
  if (m.tree().kind(call) != NodeKind::Call) return std::nullopt;
  return m.qualified_name(m.tree().child(call, GM_F(Call, func)));
}

// The value of keyword `name` of a call, else None.
inline NodeId keyword(const ast::Tree& tree, NodeId call, std::string_view name) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto f = tree.field(k, GM_F(keyword, arg));
    if (!ast::Tree::is_none_string(f) && tree.text(f) == name)
      return tree.child(k, GM_F(keyword, value));
  }
  return {};
}

inline bool has_double_star(const ast::Tree& tree, NodeId call) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords)))
    if (ast::Tree::is_none_string(tree.field(k, GM_F(keyword, arg)))) return true;
  return false;
}

// Model::tensor_evidence, the one tensor-evidence query.
inline bool not_tensor(const sema::Model& m, NodeId e) {
  return m.tensor_evidence(e) == sema::TensorEvidence::NotTensor;
}
inline bool is_tensor(const sema::Model& m, NodeId e) {
  return m.tensor_evidence(e) == sema::TensorEvidence::Proven;
}

inline bool is_false_constant(const ast::Tree& tree, NodeId e) {
  return e && tree.kind(e) == NodeKind::Constant &&
         tree.constant_at(tree.field(e, GM_F(Constant, value))).kind ==
             ast::ConstantValue::Kind::False;
}

inline std::uint32_t begin_of(const ast::Tree& t, NodeId n) { return t.at(n).begin; }
inline std::uint32_t end_of(const ast::Tree& t, NodeId n) { return t.at(n).end; }

// The message every report-only rule gives as the reason
// no automatic fix is offered, prefixed with the rule-specific part.
inline std::string declined(std::string_view specific) {
  return std::string(specific) + " (report-only rule: no automatic fix is offered)";
}

}  // namespace gm::rules::matching

#include "edits/tree_query.h"

#include <vector>

namespace gm::edits {

using ast::FieldKind;
using ast::NodeId;
using ast::NodeKind;

bool is_statement(const ast::Tree& tree, NodeId id) {
  return id && ast::node_info(tree.kind(id)).category == "stmt";
}

void for_each_child(const ast::Tree& tree, NodeId id, const std::function<void(NodeId)>& f) {
  ast::for_each_child(tree, id, f);
}

StatementSlot find_statement_slot(const ast::Tree& tree, NodeId stmt, NodeId parent) {
  StatementSlot slot;
  std::vector<NodeId> stack{parent ? parent : tree.root()};
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    const auto fields = ast::fields_of(tree.kind(n));
    for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
      if (fields[i].kind != FieldKind::List) continue;
      auto items = tree.children(n, i);
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (items[k] == stmt) {
          slot.parent = n;
          slot.body = items;
          slot.index = k;
          return slot;
        }
      }
    }
    if (!parent) for_each_child(tree, n, [&](NodeId c) { stack.push_back(c); });
  }
  return slot;
}

NodeId enclosing_statement(const ast::Tree& tree, std::uint32_t offset) {
  // Statement ranges nest, so the innermost one containing `offset` is the
  // one with the smallest range.
  NodeId best{};
  std::uint32_t best_len = 0xffffffffu;
  std::vector<NodeId> stack{tree.root()};
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (is_statement(tree, n)) {
      const auto& node = tree.at(n);
      if (node.begin <= offset && (offset < node.end || offset == node.begin) &&
          node.end - node.begin < best_len) {
        best = n;
        best_len = node.end - node.begin;
      }
    }
    for_each_child(tree, n, [&](NodeId c) { stack.push_back(c); });
  }
  return best;
}

NodeId module_docstring(const ast::Tree& tree) {
  NodeId root = tree.root();
  if (!root || tree.kind(root) != NodeKind::Module) return {};
  auto body = tree.children(root, GM_F(Module, body));
  if (body.empty() || tree.kind(body[0]) != NodeKind::Expr) return {};
  NodeId value = tree.child(body[0], GM_F(Expr, value));
  if (tree.kind(value) != NodeKind::Constant) return {};
  const auto& cv = tree.constant_at(tree.field(value, GM_F(Constant, value)));
  return cv.kind == ast::ConstantValue::Kind::Str ? body[0] : NodeId{};
}

}  // namespace gm::edits

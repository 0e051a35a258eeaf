// Small structural queries over ast::Tree that edits and the lint engine
// need (the semantic model will offer richer ones).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "ast/tree.h"
#include "ast/visit.h"

namespace gm::edits {

bool is_statement(const ast::Tree& tree, ast::NodeId id);

// Calls f(child) for every direct child node (Node/OptNode/List/OptList
// fields), in field order. Not recursive; whole-subtree walks use
// ast::preorder / ast::walk (ast/visit.h), which do not use the C stack.
void for_each_child(const ast::Tree& tree, ast::NodeId id,
                    const std::function<void(ast::NodeId)>& f);

// Where a statement sits: the node owning the body list, the list, and the
// index in it. parent is NodeId{} when not found.
struct StatementSlot {
  ast::NodeId parent{};
  std::span<const ast::NodeId> body;
  std::size_t index = 0;
};
// `parent`, when the caller knows it (the semantic model does), is the only
// node searched; otherwise the whole tree is.
StatementSlot find_statement_slot(const ast::Tree& tree, ast::NodeId stmt, ast::NodeId parent = {});

// The innermost statement whose range contains `offset` (NodeId{} if none).
ast::NodeId enclosing_statement(const ast::Tree& tree, std::uint32_t offset);

// A module-level docstring statement, if the module starts with one.
ast::NodeId module_docstring(const ast::Tree& tree);

}  // namespace gm::edits

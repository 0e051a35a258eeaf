// Traversals of an ast::Tree that are not bounded by the C stack.
//
// Every walk over the tree (the rules, the semantic model, the edit queries)
// goes through these: an explicit stack instead of recursion, so a 20,000-term
// `x+x+...` or a 20,000-branch `elif` chain costs heap memory, not C frames,
// also in a thread with a small stack.
//
// Children are a node's Node/OptNode/List/OptList fields, in nodes.def field
// order (None entries skipped); every walk visits each node of the subtree
// once, in the same order a recursive pre-order walk would.
//
// The callbacks steer the walk by what they return:
//   void            descend into the node's children
//   bool            true: descend, false: skip the node's subtree
//   ast::Visit      Continue / SkipChildren / Stop (ends the whole walk)
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "ast/tree.h"

namespace gm::ast {

enum class Visit : std::uint8_t { Continue, SkipChildren, Stop };

// Calls f(child) for every direct child of `id`, in field order. Not
// recursive: the building block of the walks below.
template <typename F>
void for_each_child(const Tree& tree, NodeId id, F&& f) {
  if (!id) return;
  const auto fields = fields_of(tree.kind(id));
  for (int i = 0; i < static_cast<int>(fields.size()); ++i) {
    switch (fields[i].kind) {
      case FieldKind::Node:
      case FieldKind::OptNode:
        if (const NodeId c = tree.child(id, i)) f(c);
        break;
      case FieldKind::List:
      case FieldKind::OptList:
        for (const NodeId c : tree.children(id, i))
          if (c) f(c);
        break;
      default: break;
    }
  }
}

namespace detail {
template <typename R>
Visit as_visit(R&& r) {
  if constexpr (std::is_same_v<std::decay_t<R>, Visit>)
    return r;
  else
    return r ? Visit::Continue : Visit::SkipChildren;
}
template <typename F>
Visit call_visit(F& f, NodeId n) {
  if constexpr (std::is_void_v<std::invoke_result_t<F&, NodeId>>) {
    f(n);
    return Visit::Continue;
  } else {
    return as_visit(f(n));
  }
}
// Push the children of n so that they pop in field order.
inline void push_children(const Tree& tree, NodeId n, std::vector<NodeId>& stack) {
  const std::size_t mark = stack.size();
  for_each_child(tree, n, [&](NodeId c) { stack.push_back(c); });
  std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
}
}  // namespace detail

// Pre-order walk over `root` and everything under it (root included).
// Returns false if a callback said Stop.
template <typename F>
bool preorder(const Tree& tree, NodeId root, F&& f) {
  if (!root) return true;
  std::vector<NodeId> stack{root};
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    const Visit v = detail::call_visit(f, n);
    if (v == Visit::Stop) return false;
    if (v == Visit::Continue) detail::push_children(tree, n, stack);
  }
  return true;
}

// Pre-order over the children of `root` and below (root itself excluded).
template <typename F>
bool preorder_below(const Tree& tree, NodeId root, F&& f) {
  if (!root) return true;
  std::vector<NodeId> stack;
  detail::push_children(tree, root, stack);
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    const Visit v = detail::call_visit(f, n);
    if (v == Visit::Stop) return false;
    if (v == Visit::Continue) detail::push_children(tree, n, stack);
  }
  return true;
}

// Enter/leave walk: enter(n) in pre-order (its result steers as above),
// leave(n) after n's subtree, for every node whose enter did not skip or
// stop. The shape of a dispatching walk: one visit per node, both edges.
template <typename Enter, typename Leave>
bool walk(const Tree& tree, NodeId root, Enter&& enter, Leave&& leave) {
  if (!root) return true;
  struct Frame {
    NodeId node;
    bool leaving;
  };
  std::vector<Frame> stack{{root, false}};
  while (!stack.empty()) {
    const Frame fr = stack.back();
    stack.pop_back();
    if (fr.leaving) {
      leave(fr.node);
      continue;
    }
    const Visit v = detail::call_visit(enter, fr.node);
    if (v == Visit::Stop) return false;
    if (v == Visit::SkipChildren) continue;
    stack.push_back({fr.node, true});
    const std::size_t mark = stack.size();
    for_each_child(tree, fr.node, [&](NodeId c) { stack.push_back({c, false}); });
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
  }
  return true;
}

// Post-order walk: f(n) after all of n's children.
template <typename F>
void postorder(const Tree& tree, NodeId root, F&& f) {
  walk(tree, root, [](NodeId) {}, f);
}

}  // namespace gm::ast

namespace gm::ast {

// Bounds an analysis that is recursive by nature (it follows an expression's
// operands and combines their answers) so that it uses at most kMaxDepth C
// frames: past that it must give its "unknown" answer (no finding, no fix),
// never crash. The counter is the caller's, one per thread:
//   thread_local int depth = 0;
//   const ast::DepthGuard guard(depth);
//   if (guard.exceeded()) return /* unknown */;
class DepthGuard {
 public:
  // Deeper than any expression a person writes (CPython's own parser stops
  // nesting brackets at 200), shallow enough for a 256 KB thread stack.
  static constexpr int kMaxDepth = 100;
  explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool exceeded() const { return depth_ > kMaxDepth; }

 private:
  int& depth_;
};

}  // namespace gm::ast

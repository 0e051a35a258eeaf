#include "ast/tree.h"

namespace gm::ast {

Tree::Tree() {
  nodes_.emplace_back();  // NodeId{0} is None
}

void Tree::reserve_for_source(std::size_t source_bytes) {
  const std::size_t nodes = source_bytes / 12 + 16;
  nodes_.reserve(nodes);
  fields_.reserve(nodes * 2 + 16);
  lists_.reserve(nodes / 2 + 16);
  constants_.reserve(nodes / 8 + 16);
  strings_.reserve(source_bytes / 3 + 64);
}

Field Tree::list(std::span<const NodeId> items) {
  const auto offset = static_cast<std::uint32_t>(lists_.size());
  lists_.insert(lists_.end(), items.begin(), items.end());
  return {offset, static_cast<std::uint32_t>(items.size())};
}

Field Tree::op_list(std::span<const NodeKind> ops) {
  const auto offset = static_cast<std::uint32_t>(lists_.size());
  for (NodeKind k : ops) lists_.push_back(NodeId{static_cast<std::uint32_t>(k)});
  return {offset, static_cast<std::uint32_t>(ops.size())};
}

Field Tree::ident_list(std::span<const StrRef> names) {
  const auto offset = static_cast<std::uint32_t>(lists_.size());
  for (StrRef s : names) {
    lists_.push_back(NodeId{s.offset});
    lists_.push_back(NodeId{s.length});
  }
  return {offset, static_cast<std::uint32_t>(names.size())};
}

StrRef Tree::intern(std::string_view s) {
  const auto offset = static_cast<std::uint32_t>(strings_.size());
  strings_.append(s);
  return {offset, static_cast<std::uint32_t>(s.size())};
}

Field Tree::string(std::string_view s) {
  const StrRef r = intern(s);
  return {r.offset, r.length};
}

Field Tree::constant(const ConstantValue& v) {
  constants_.push_back(v);
  return {static_cast<std::uint32_t>(constants_.size() - 1), 0};
}

void Tree::set_field(NodeId id, int index, Field value) {
  fields_[nodes_[id.index].first_field + index] = value;
}

void Tree::set_position(NodeId id, std::uint32_t begin, std::uint32_t end,
                        const Position& pos) {
  auto& n = nodes_[id.index];
  n.begin = begin;
  n.end = end;
  n.pos = pos;
}

std::span<const NodeId> Tree::children(NodeId id, int index) const {
  const Field f = field(id, index);
  return {lists_.data() + f.a, f.b};
}

}  // namespace gm::ast

// The syntax tree: flat arrays with typed ids (Carbon/Zig style), no
// per-node heap allocation. Node kinds and fields come from nodes.def.
//
// Invariants:
//  - NodeId{0} is "no node" (None); real nodes start at 1.
//  - A node's fields are stored contiguously in `fields_`, in nodes.def order,
//    one Field per declared field (the union over 3.8–3.13).
//  - Lists live in `lists_` as runs of NodeId (node ids, 0 = None in OptList;
//    NodeKind values in OpList; two words per entry — offset, length — in
//    IdentList).
//  - Strings (identifiers, string constants, digits of big ints) live in the
//    `strings_` arena and are addressed by StrRef. When the tree is built
//    from source (reserve_for_source), the arena starts with a copy of the
//    source text, so a StrRef can also name source bytes by their offset:
//    ASCII identifiers, string bodies without escapes and plain decimal
//    digits are never copied again (the parser's hot path).
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ast/flat_array.h"

namespace gm::ast {

enum class NodeKind : std::uint8_t {
#define GM_NODE(kind, category, positions_since) kind,
#include "nodes.def"
  Count_
};
inline constexpr int kNodeKindCount = static_cast<int>(NodeKind::Count_);

enum class FieldKind : std::uint8_t {
  Node,
  OptNode,
  List,
  OptList,
  Ident,
  OptIdent,
  IdentList,
  Int,
  Constant,
  OptString,
  Op,
  OpList
};

struct FieldInfo {
  NodeKind node;
  std::string_view name;
  FieldKind kind;
  std::uint8_t since;  // minor version that introduced the field
};

inline constexpr FieldInfo kFieldTable[] = {
#define GM_FIELD(kind, field, field_kind, since) \
  {NodeKind::kind, #field, FieldKind::field_kind, since},
#include "nodes.def"
};

struct NodeInfo {
  std::string_view name;
  std::string_view category;
  std::uint8_t positions_since;  // 0: the node never has positions
  std::uint16_t first_field;     // index into kFieldTable
  std::uint8_t field_count;
};

namespace detail {
constexpr std::array<NodeInfo, kNodeKindCount> make_node_table() {
  std::array<NodeInfo, kNodeKindCount> t{};
  int i = 0;
#define GM_NODE(kind, category, positions_since) \
  t[i++] = NodeInfo { #kind, #category, positions_since, 0, 0 };
#include "nodes.def"
  for (auto& info : t) info.first_field = 0xffff;
  std::uint16_t f = 0;
  for (const auto& field : kFieldTable) {
    auto& info = t[static_cast<int>(field.node)];
    if (info.first_field == 0xffff) info.first_field = f;
    ++info.field_count;
    ++f;
  }
  for (auto& info : t)
    if (info.first_field == 0xffff) info.first_field = 0;
  return t;
}
}  // namespace detail

inline constexpr auto kNodeTable = detail::make_node_table();

constexpr const NodeInfo& node_info(NodeKind k) { return kNodeTable[static_cast<int>(k)]; }
constexpr std::span<const FieldInfo> fields_of(NodeKind k) {
  const auto& info = node_info(k);
  return {kFieldTable + info.first_field, info.field_count};
}
// Index of a field within its node, at compile time: field_index(NodeKind::If, "body").
consteval int field_index(NodeKind k, std::string_view name) {
  const auto fields = fields_of(k);
  for (int i = 0; i < static_cast<int>(fields.size()); ++i)
    if (fields[i].name == name) return i;
  throw "no such field";  // not a constant expression: compile error
}
// GM_F(If, body) -> the index of If.body
#define GM_F(kind, field) ::gm::ast::field_index(::gm::ast::NodeKind::kind, #field)

struct NodeId {
  std::uint32_t index = 0;
  constexpr explicit operator bool() const { return index != 0; }
  friend constexpr bool operator==(NodeId, NodeId) = default;
};

struct StrRef {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
};

// CPython's four position attributes; col offsets are UTF-8 byte offsets.
struct Position {
  std::int32_t lineno = 0;
  std::int32_t col_offset = 0;
  std::int32_t end_lineno = 0;
  std::int32_t end_col_offset = 0;
};

struct ConstantValue {
  enum class Kind : std::uint8_t { None, True, False, Ellipsis, Int, Float, Complex, Str, Bytes };
  Kind kind = Kind::None;
  // Int: decimal digits (no sign, no leading zeros except "0").
  // Str: the value as WTF-8 (UTF-8 that may encode lone surrogates).
  // Bytes: the raw bytes.
  StrRef text;
  // Float: the value; Complex: the imaginary part (the real part is 0).
  double number = 0.0;
};

struct Node {
  NodeKind kind{};
  std::uint32_t begin = 0;  // byte range in the source text
  std::uint32_t end = 0;
  Position pos;
  std::uint32_t first_field = 0;  // index into Tree::fields_
};

// One stored field. Meaning by FieldKind:
//   Node/OptNode: a = node index (0: None)
//   List/OptList/OpList: a = offset into lists_, b = count
//   IdentList: a = offset into lists_, b = count (2 words per entry)
//   Ident/OptIdent/OptString: a = offset into strings_, b = length;
//                             a == kNone for None
//   Int: a = the value as int32 bits
//   Constant: a = index into constants_
//   Op: a = NodeKind value
struct Field {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
};

class Tree {
 public:
  Tree();

  // ---- building (used by the parser)
  // Start the string arena with a copy of `source` (offsets in the arena are
  // then source offsets, see source_ref) and reserve room for the tree of its
  // `tokens` tokens, so that building almost never reallocates.
  void reserve_for_source(std::string_view source, std::size_t tokens);
  NodeId add(NodeKind kind, std::uint32_t begin, std::uint32_t end, const Position& pos,
             std::initializer_list<Field> fields) {
    assert(fields.size() == node_info(kind).field_count);
    const auto first = static_cast<std::uint32_t>(fields_.append(fields.begin(), fields.size()));
    nodes_.push_back(Node{kind, begin, end, pos, first});
    return NodeId{static_cast<std::uint32_t>(nodes_.size() - 1)};
  }
  // Make a field value.
  static Field node(NodeId id) { return {id.index, 0}; }
  static Field none() { return {0, 0}; }
  static Field none_string() { return {Field::kNone, 0}; }
  static Field integer(std::int32_t v) { return {static_cast<std::uint32_t>(v), 0}; }
  static Field op(NodeKind k) { return {static_cast<std::uint32_t>(k), 0}; }
  Field list(std::span<const NodeId> items) {
    return {static_cast<std::uint32_t>(lists_.append(items.data(), items.size())),
            static_cast<std::uint32_t>(items.size())};
  }
  Field op_list(std::span<const NodeKind> ops);
  Field ident_list(std::span<const StrRef> names);
  Field string(std::string_view s);  // Ident / OptIdent / OptString
  static Field string(StrRef s) { return {s.offset, s.length}; }
  Field constant(const ConstantValue& v) {
    constants_.push_back(v);
    return {static_cast<std::uint32_t>(constants_.size() - 1), 0};
  }
  StrRef intern(std::string_view s);
  // Bytes [begin, end) of the source given to reserve_for_source, without
  // copying them.
  StrRef source_ref(std::uint32_t begin, std::uint32_t end) const {
    assert(end >= begin && end <= source_size_);
    return {begin, end - begin};
  }
  // Append to the arena through `write(std::string&)` (which may only
  // append) and return what it appended: decoders write straight into the
  // arena instead of into a temporary.
  template <class Write>
  StrRef append_string(Write&& write) {
    const auto offset = static_cast<std::uint32_t>(strings_.size());
    write(strings_);
    return {offset, static_cast<std::uint32_t>(strings_.size() - offset)};
  }

  // Change a field after the node was built (contexts, positions of
  // parenthesised expressions, ...).
  void set_field(NodeId id, int index, Field value);
  void set_position(NodeId id, std::uint32_t begin, std::uint32_t end, const Position& pos);
  void set_root(NodeId id) { root_ = id; }

  // ---- reading
  NodeId root() const { return root_; }
  std::size_t node_count() const { return nodes_.size() - 1; }
  const Node& at(NodeId id) const { return nodes_[id.index]; }
  NodeKind kind(NodeId id) const { return nodes_[id.index].kind; }
  Field field(NodeId id, int index) const { return fields_[nodes_[id.index].first_field + index]; }
  NodeId child(NodeId id, int index) const { return {field(id, index).a}; }
  std::span<const NodeId> children(NodeId id, int index) const;
  // OpList entries hold NodeKind values, IdentList entries (offset, length)
  // pairs, in NodeId::index.
  std::span<const NodeId> raw_list(NodeId id, int index) const { return children(id, index); }
  std::string_view str(StrRef s) const {
    return std::string_view(strings_).substr(s.offset, s.length);
  }
  // Ident/OptIdent/OptString field as text; is_none tells None apart from "".
  std::string_view text(Field f) const { return str({f.a, f.b}); }
  static bool is_none_string(Field f) { return f.a == Field::kNone; }
  const ConstantValue& constant_at(Field f) const { return constants_[f.a]; }

 private:
  FlatArray<Node> nodes_;
  FlatArray<Field> fields_;
  FlatArray<NodeId> lists_;
  FlatArray<ConstantValue> constants_;
  std::string strings_;
  std::uint32_t source_size_ = 0;  // strings_[0, source_size_) is the source
  NodeId root_{};
};

}  // namespace gm::ast

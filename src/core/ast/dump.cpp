// ast.dump(node, include_attributes=True) as CPython 3.<minor> prints it.
//
// Per-version rules (Lib/ast.py of each version, checked against the
// interpreters by tests/differential):
//  - 3.8 prints every field, None included (kind=None, returns=None, ...),
//    and always prints the position attributes a node class has.
//  - 3.9+ omit a field whose value is None when the field is optional (`?`
//    in the ASDL: OptNode, OptIdent, OptString); Constant.value and
//    MatchSingleton.value are not optional, so `value=None` stays.
//  - 3.13 (show_empty=False) also omits fields whose value is an empty list;
//    a list holding None (kw_defaults=[None]) stays.
//  - Fields and position attributes appear from the version in nodes.def.
//  - 3.8's Subscript.slice is a `slice`: a plain Slice stays a Slice (which
//    in 3.8 has no positions), a Tuple holding a Slice becomes
//    ExtSlice(dims=[...]) with the non-Slice elements wrapped in Index, and
//    anything else becomes Index(value=...). Index and ExtSlice have no
//    positions.
//
// The walk is iterative (an explicit stack), so a deeply nested tree (a
// 100 000-term `a+a+...` chain is left-nested) cannot overflow the C stack.
#include "ast/dump.h"

#include <charconv>
#include <cstdint>
#include <vector>

#include "ast/repr.h"

namespace gm::ast {
namespace {

enum class Mode : std::uint8_t {
  Node,      // a node of the tree
  Index,     // 3.8: Index(value=<node>)
  ExtSlice,  // 3.8: ExtSlice(dims=[...]) over the elements of a Tuple
};

struct Frame {
  NodeId node;
  Mode mode = Mode::Node;
  bool in_list = false;  // inside the list of field `field`
  bool any_arg = false;  // an argument was printed: the next needs ", "
  bool opened = false;   // Mode::Index: the value was pushed
  std::uint16_t field = 0;
  std::uint32_t item = 0;
};

constexpr int kSubscriptSlice = GM_F(Subscript, slice);
constexpr int kTupleElts = GM_F(Tuple, elts);

class Dumper {
 public:
  Dumper(const Tree& tree, const DumpOptions& options, std::string& out)
      : tree_(tree), minor_(options.minor), attrs_(options.include_attributes), out_(out) {}

  void run(NodeId root) {
    if (!root) {
      out_ += "None";
      return;
    }
    push(root, Mode::Node);
    while (!stack_.empty()) step();
  }

 private:
  void push(NodeId id, Mode mode) {
    Frame f;
    f.node = id;
    f.mode = mode;
    stack_.push_back(f);
    switch (mode) {
      case Mode::Node:
        out_ += node_info(tree_.kind(id)).name;
        out_ += '(';
        break;
      case Mode::Index: out_ += "Index(value="; break;
      case Mode::ExtSlice: out_ += "ExtSlice(dims=["; break;
    }
  }

  // Push the value of a Subscript.slice for 3.8.
  void push_slice_38(NodeId slice) {
    const NodeKind k = tree_.kind(slice);
    if (k == NodeKind::Slice) return push(slice, Mode::Node);
    if (k == NodeKind::Tuple) {
      for (NodeId e : tree_.children(slice, kTupleElts))
        if (e && tree_.kind(e) == NodeKind::Slice) return push(slice, Mode::ExtSlice);
    }
    push(slice, Mode::Index);
  }

  void int_text(std::int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }

  void sep(Frame& f) {
    if (f.any_arg) out_ += ", ";
    f.any_arg = true;
  }

  bool has_positions(NodeKind k) const {
    const int since = node_info(k).positions_since;
    if (since == 0 || minor_ < since) return false;
    return true;
  }

  void step() {
    Frame& f = stack_.back();
    switch (f.mode) {
      case Mode::Index:
        if (!f.opened) {
          f.opened = true;
          push(f.node, Mode::Node);  // invalidates f
        } else {
          out_ += ')';
          stack_.pop_back();
        }
        return;
      case Mode::ExtSlice: {
        const auto elts = tree_.children(f.node, kTupleElts);
        if (f.item < elts.size()) {
          if (f.item) out_ += ", ";
          const NodeId e = elts[f.item++];
          push(e, tree_.kind(e) == NodeKind::Slice ? Mode::Node : Mode::Index);
        } else {
          out_ += "])";
          stack_.pop_back();
        }
        return;
      }
      case Mode::Node: break;
    }

    const NodeKind kind = tree_.kind(f.node);
    const auto fields = fields_of(kind);

    if (f.in_list) {
      const FieldKind fk = fields[f.field].kind;
      const auto items = tree_.raw_list(f.node, f.field);
      if (f.item < items.size()) {
        if (f.item) out_ += ", ";
        const std::uint32_t i = f.item++;
        switch (fk) {
          case FieldKind::OpList:
            out_ += node_info(static_cast<NodeKind>(items[i].index)).name;
            out_ += "()";
            return;
          case FieldKind::IdentList: {
            // two words per entry: (offset, length)
            const auto s = tree_.str({items[2 * i].index, items[2 * i + 1].index});
            out_ += repr_str(s, minor_);
            return;
          }
          default:
            if (!items[i])
              out_ += "None";
            else
              push(items[i], Mode::Node);  // invalidates f
            return;
        }
      }
      out_ += ']';
      f.in_list = false;
      ++f.field;
      return;
    }

    while (f.field < fields.size()) {
      const FieldInfo& info = fields[f.field];
      if (info.since > minor_) {
        ++f.field;
        continue;
      }
      const Field value = tree_.field(f.node, f.field);
      const bool omit_none = minor_ >= 9;
      const bool omit_empty = minor_ >= 13;
      switch (info.kind) {
        case FieldKind::Node:
        case FieldKind::OptNode: {
          const NodeId child{value.a};
          if (!child) {
            if (info.kind == FieldKind::OptNode && omit_none) {
              ++f.field;
              continue;
            }
            sep(f);
            out_ += info.name;
            out_ += "=None";
            ++f.field;
            continue;
          }
          sep(f);
          out_ += info.name;
          out_ += '=';
          ++f.field;
          if (minor_ < 9 && kind == NodeKind::Subscript && f.field - 1 == kSubscriptSlice)
            push_slice_38(child);  // invalidates f
          else
            push(child, Mode::Node);  // invalidates f
          return;
        }
        case FieldKind::List:
        case FieldKind::OptList:
        case FieldKind::IdentList:
        case FieldKind::OpList: {
          // CPython 3.13 skips `[]` except on Constant/MatchSingleton (which
          // have no list fields).
          if (value.b == 0 && omit_empty) {
            ++f.field;
            continue;
          }
          sep(f);
          out_ += info.name;
          if (value.b == 0) {
            out_ += "=[]";
            ++f.field;
            continue;
          }
          out_ += "=[";
          f.in_list = true;
          f.item = 0;
          return;
        }
        case FieldKind::Ident:
        case FieldKind::OptIdent:
        case FieldKind::OptString: {
          if (Tree::is_none_string(value)) {
            if (info.kind != FieldKind::Ident && omit_none) {
              ++f.field;
              continue;
            }
            sep(f);
            out_ += info.name;
            out_ += "=None";
          } else {
            sep(f);
            out_ += info.name;
            out_ += '=';
            out_ += repr_str(tree_.text(value), minor_);
          }
          ++f.field;
          continue;
        }
        case FieldKind::Int:
          sep(f);
          out_ += info.name;
          out_ += '=';
          int_text(static_cast<std::int32_t>(value.a));
          ++f.field;
          continue;
        case FieldKind::Constant:
          sep(f);
          out_ += info.name;
          out_ += '=';
          out_ += repr_constant(tree_, tree_.constant_at(value), minor_);
          ++f.field;
          continue;
        case FieldKind::Op:
          sep(f);
          out_ += info.name;
          out_ += '=';
          out_ += node_info(static_cast<NodeKind>(value.a)).name;
          out_ += "()";
          ++f.field;
          continue;
      }
    }

    if (attrs_ && has_positions(kind)) {
      const Position& p = tree_.at(f.node).pos;
      sep(f);
      out_ += "lineno=";
      int_text(p.lineno);
      out_ += ", col_offset=";
      int_text(p.col_offset);
      out_ += ", end_lineno=";
      int_text(p.end_lineno);
      out_ += ", end_col_offset=";
      int_text(p.end_col_offset);
    }
    out_ += ')';
    stack_.pop_back();
  }

  const Tree& tree_;
  int minor_;
  bool attrs_;
  std::string& out_;
  std::vector<Frame> stack_;
};

}  // namespace

std::string dump(const Tree& tree, NodeId node, const DumpOptions& options) {
  std::string out;
  Dumper(tree, options, out).run(node);
  return out;
}

}  // namespace gm::ast

#include "lint/unused_imports.h"

#include <set>
#include <string>
#include <string_view>

#include "edits/text.h"
#include "edits/tree_query.h"

namespace gm::lint {

using ast::NodeId;
using ast::NodeKind;

namespace {

// Every node of the tree (iteratively), in no particular order.
template <typename F>
void each_node(const ast::Tree& tree, const F& f) {
  if (!tree.root()) return;
  std::vector<NodeId> stack{tree.root()};
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    f(n);
    edits::for_each_child(tree, n, [&](NodeId c) { stack.push_back(c); });
  }
}

std::string_view name_of(const ast::Tree& tree, NodeId n) {
  return tree.text(tree.field(n, GM_F(Name, id)));
}

// Names mentioned anywhere (Name nodes of any context, def/class names,
// global/nonlocal names are Name-like strings handled by the caller), and
// the string constants.
struct Mentions {
  std::multiset<std::string> names;
  std::vector<std::string> strings;
  bool dynamic = false;  // __all__, __getattr__, globals(), eval(), ...
};

Mentions mentions(const ast::Tree& tree, std::string_view text) {
  static const std::set<std::string_view> kDynamic = {
      "__all__", "globals", "locals", "vars", "eval", "exec", "__import__", "__getattr__"};
  Mentions m;
  each_node(tree, [&](NodeId n) {
    switch (tree.kind(n)) {
      case NodeKind::Name: {
        const std::string_view id = name_of(tree, n);
        m.names.emplace(id);
        if (kDynamic.count(id)) m.dynamic = true;
        break;
      }
      case NodeKind::FunctionDef:
      case NodeKind::AsyncFunctionDef:
      case NodeKind::ClassDef: {
        const int f = tree.kind(n) == NodeKind::ClassDef      ? GM_F(ClassDef, name)
                      : tree.kind(n) == NodeKind::FunctionDef ? GM_F(FunctionDef, name)
                                                              : GM_F(AsyncFunctionDef, name);
        const std::string_view id = tree.text(tree.field(n, f));
        m.names.emplace(id);
        if (kDynamic.count(id)) m.dynamic = true;
        break;
      }
      case NodeKind::Global:
      case NodeKind::Nonlocal:
        m.dynamic = true;  // rare at module level; keep everything
        break;
      case NodeKind::Constant:
      case NodeKind::JoinedStr: {
        const auto& r = tree.at(n);
        m.strings.emplace_back(text.substr(r.begin, r.end - r.begin));
        break;
      }
      default: break;
    }
  });
  return m;
}

// The one name a module-level import statement binds, when it binds exactly
// one: `import X` (a plain module name, no dots, no `as`) or
// `from M import a [as b]` (not `*`, not from `__future__`); else "".
// `from_import` tells which.
std::string_view single_binding(const ast::Tree& tree, NodeId stmt, bool& from_import) {
  from_import = tree.kind(stmt) == NodeKind::ImportFrom;
  if (from_import) {
    const auto names = tree.children(stmt, GM_F(ImportFrom, names));
    if (names.size() != 1) return {};
    const auto mod = tree.field(stmt, GM_F(ImportFrom, module));
    if (!ast::Tree::is_none_string(mod) && tree.text(mod) == "__future__") return {};
    const auto as = tree.field(names[0], GM_F(alias, asname));
    const std::string_view bound = ast::Tree::is_none_string(as)
                                       ? tree.text(tree.field(names[0], GM_F(alias, name)))
                                       : tree.text(as);
    return bound == "*" ? std::string_view{} : bound;
  }
  if (tree.kind(stmt) != NodeKind::Import) return {};
  const auto names = tree.children(stmt, GM_F(Import, names));
  if (names.size() != 1) return {};
  const auto as = tree.field(names[0], GM_F(alias, asname));
  if (!ast::Tree::is_none_string(as)) return {};
  const std::string_view mod = tree.text(tree.field(names[0], GM_F(alias, name)));
  if (mod.find('.') != std::string_view::npos || mod == "__future__") return {};
  return mod;
}

// How many module-level statements (and aliases) bind `name` by import.
int import_bindings(const ast::Tree& tree, std::string_view name) {
  int count = 0;
  each_node(tree, [&](NodeId n) {
    const NodeKind k = tree.kind(n);
    if (k != NodeKind::Import && k != NodeKind::ImportFrom) return;
    const auto names = k == NodeKind::Import ? tree.children(n, GM_F(Import, names))
                                             : tree.children(n, GM_F(ImportFrom, names));
    for (NodeId a : names) {
      const auto as = tree.field(a, GM_F(alias, asname));
      std::string_view bound = ast::Tree::is_none_string(as)
                                   ? tree.text(tree.field(a, GM_F(alias, name)))
                                   : tree.text(as);
      if (k == NodeKind::Import && ast::Tree::is_none_string(as))
        bound = bound.substr(0, bound.find('.'));
      if (bound == name || bound == "*") ++count;
    }
  });
  return count;
}

// Whether another module-level import statement than `stmt` imports the
// module `stmt` imports from (same module, same level): removing `stmt` then
// leaves the module's own import, and its side effects, in place.
bool module_imported_elsewhere(const ast::Tree& tree, NodeId stmt) {
  const auto mod = tree.field(stmt, GM_F(ImportFrom, module));
  if (ast::Tree::is_none_string(mod)) return false;
  const std::string_view m = tree.text(mod);
  const std::uint32_t level = tree.field(stmt, GM_F(ImportFrom, level)).a;
  for (NodeId other : tree.children(tree.root(), GM_F(Module, body))) {
    if (other == stmt) continue;
    if (tree.kind(other) == NodeKind::ImportFrom) {
      const auto om = tree.field(other, GM_F(ImportFrom, module));
      if (!ast::Tree::is_none_string(om) && tree.text(om) == m &&
          tree.field(other, GM_F(ImportFrom, level)).a == level)
        return true;
    } else if (tree.kind(other) == NodeKind::Import && level == 0) {
      for (NodeId a : tree.children(other, GM_F(Import, names)))
        if (tree.text(tree.field(a, GM_F(alias, name))) == m) return true;
    }
  }
  return false;
}

}  // namespace

std::set<std::string> names_in(const ast::Tree& tree) {
  std::set<std::string> out;
  each_node(tree, [&](NodeId n) {
    if (tree.kind(n) == NodeKind::Name) out.emplace(name_of(tree, n));
  });
  return out;
}

std::vector<edits::Edit> imports_made_unused(const std::set<std::string>& read_before,
                                             const edits::FileView& current) {
  std::vector<edits::Edit> out;
  const ast::Tree& tree = current.tree;
  if (!tree.root()) return out;
  const Mentions now = mentions(tree, current.text);
  if (now.dynamic) return out;
  for (NodeId stmt : tree.children(tree.root(), GM_F(Module, body))) {
    bool from_import = false;
    const std::string_view bound = single_binding(tree, stmt, from_import);
    if (bound.empty() || (from_import && !module_imported_elsewhere(tree, stmt))) continue;
    const std::string name(bound);
    if (!read_before.count(name) || now.names.count(name)) continue;
    if (import_bindings(tree, name) != 1) continue;
    bool in_string = false;
    // `X.` in a string (an annotation, a doctest); a from-imported name
    // anywhere in one (`"Foo"` as an annotation).
    const std::string needle = from_import ? name : name + ".";
    for (const std::string& s : now.strings)
      in_string = in_string || s.find(needle) != std::string::npos;
    if (in_string) continue;
    // Its own whole line (and, when it was alone in its group of imports,
    // one of the blank lines around it); anything else is kept.
    const std::string_view text = current.text;
    const auto& r = tree.at(stmt);
    if (!edits::statement_indentation(text, r.begin) || !edits::only_trivia_after(text, r.end))
      continue;
    const std::uint32_t b = edits::line_start(text, r.begin);
    std::uint32_t e = edits::full_line_end(text, r.end);
    auto blank = [&](std::uint32_t at) {
      const std::string_view l = text.substr(at, edits::line_end(text, at) - at);
      return at < text.size() && l.find_first_not_of(" \t\f") == std::string_view::npos;
    };
    const bool prev_blank = b == 0 || blank(edits::line_start(text, b - 1));
    if (prev_blank && e < text.size() && blank(e)) e = edits::full_line_end(text, e);
    out.push_back(edits::Edit::remove(b, e));
  }
  return out;
}

}  // namespace gm::lint

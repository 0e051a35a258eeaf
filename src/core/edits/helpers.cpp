#include "edits/helpers.h"

#include <algorithm>

#include "edits/tree_query.h"

namespace gm::edits {

using ast::NodeId;
using ast::NodeKind;

std::string_view node_text(const FileView& file, NodeId id) {
  const auto& n = file.tree.at(id);
  return file.text.substr(n.begin, n.end - n.begin);
}

std::vector<std::string_view> comments_in(const FileView& file, std::uint32_t begin,
                                          std::uint32_t end) {
  std::vector<std::string_view> out;
  // Trivia are in source order: start at `begin` (a binary search), not at
  // the top of the file, so that a file's fixes are not quadratic in it.
  const auto& trivia = file.lexed.trivia;
  const auto first = std::lower_bound(trivia.begin(), trivia.end(), begin,
                                      [](const Trivia& t, std::uint32_t o) { return t.begin < o; });
  for (auto it = first; it != trivia.end(); ++it) {
    const Trivia& t = *it;
    if (t.begin >= end) break;
    if (t.kind != Trivia::Kind::Comment) continue;
    if (t.begin >= begin && t.end <= end) out.push_back(file.text.substr(t.begin, t.end - t.begin));
  }
  return out;
}

std::optional<Edit> replace_statement(const FileView& file, NodeId stmt,
                                      std::span<const std::string> lines, bool keep_comments) {
  const auto& node = file.tree.at(stmt);
  std::vector<std::string> all;
  if (keep_comments)
    for (std::string_view c : comments_in(file, node.begin, node.end)) all.emplace_back(c);
  all.insert(all.end(), lines.begin(), lines.end());
  const auto indent = statement_indentation(file.text, node.begin);
  if (!indent && all.size() > 1) return std::nullopt;
  return Edit::replace(node.begin, node.end,
                       render_lines(all, indent.value_or(std::string_view{}), file.style));
}

namespace {

// Index of the first token starting at or after `offset`.
std::size_t token_at_or_after(const LexResult& lexed, std::uint32_t offset) {
  auto it = std::lower_bound(lexed.tokens.begin(), lexed.tokens.end(), offset,
                             [](const Token& t, std::uint32_t o) { return t.begin < o; });
  return static_cast<std::size_t>(it - lexed.tokens.begin());
}

}  // namespace

Edit delete_statement(const FileView& file, NodeId stmt, NodeId parent) {
  const auto& node = file.tree.at(stmt);
  const auto& toks = file.lexed.tokens;
  const StatementSlot slot = find_statement_slot(file.tree, stmt, parent);
  if (slot.parent && slot.body.size() == 1 && file.tree.kind(slot.parent) != NodeKind::Module)
    return Edit::replace(node.begin, node.end, "pass");

  const bool starts_line = statement_indentation(file.text, node.begin).has_value();
  std::size_t after = token_at_or_after(file.lexed, node.end);
  // Skip zero-width layout tokens that may sit at node.end.
  if (after < toks.size() && toks[after].kind == Tok::Semi) {
    const std::size_t next = after + 1;
    const bool semi_ends_line =
        next >= toks.size() || toks[next].kind == Tok::Newline || toks[next].kind == Tok::EndMarker;
    if (!semi_ends_line) return Edit::remove(node.begin, toks[next].begin);
    if (starts_line)
      return Edit::remove(line_start(file.text, node.begin),
                          full_line_end(file.text, toks[after].end));
    return Edit::remove(node.begin, toks[after].end);
  }
  const std::size_t at = token_at_or_after(file.lexed, node.begin);
  if (at > 0 && toks[at - 1].kind == Tok::Semi) return Edit::remove(toks[at - 1].begin, node.end);
  if (starts_line && only_trivia_after(file.text, node.end))
    return Edit::remove(line_start(file.text, node.begin), full_line_end(file.text, node.end));
  return Edit::remove(node.begin, node.end);
}

std::string ImportSpec::statement() const {
  std::string s;
  if (name.empty())
    s = "import " + module;
  else
    s = "from " + module + " import " + name;
  if (!asname.empty()) s += " as " + asname;
  return s;
}

std::string ImportSpec::bound_name() const {
  if (!asname.empty()) return asname;
  if (!name.empty()) return name;
  return module.substr(0, module.find('.'));
}

namespace {

bool alias_matches(const ast::Tree& tree, NodeId alias, std::string_view name,
                   std::string_view asname) {
  const auto n = tree.text(tree.field(alias, GM_F(alias, name)));
  const auto af = tree.field(alias, GM_F(alias, asname));
  const std::string_view a = ast::Tree::is_none_string(af) ? std::string_view{} : tree.text(af);
  return n == name && a == asname;
}

bool is_future_import(const ast::Tree& tree, NodeId stmt) {
  if (tree.kind(stmt) != NodeKind::ImportFrom) return false;
  const auto m = tree.field(stmt, GM_F(ImportFrom, module));
  return !ast::Tree::is_none_string(m) && tree.text(m) == "__future__";
}

}  // namespace

bool has_import(const FileView& file, const ImportSpec& spec) {
  const ast::Tree& tree = file.tree;
  if (!tree.root()) return false;
  for (NodeId stmt : tree.children(tree.root(), GM_F(Module, body))) {
    if (spec.name.empty() && tree.kind(stmt) == NodeKind::Import) {
      for (NodeId a : tree.children(stmt, GM_F(Import, names)))
        if (alias_matches(tree, a, spec.module, spec.asname)) return true;
    } else if (!spec.name.empty() && tree.kind(stmt) == NodeKind::ImportFrom) {
      const auto m = tree.field(stmt, GM_F(ImportFrom, module));
      if (ast::Tree::is_none_string(m) || tree.text(m) != spec.module) continue;
      if (tree.field(stmt, GM_F(ImportFrom, level)).a != 0) continue;
      for (NodeId a : tree.children(stmt, GM_F(ImportFrom, names)))
        if (alias_matches(tree, a, spec.name, spec.asname)) return true;
    }
  }
  return false;
}

std::optional<Edit> insert_import(const FileView& file, const ImportSpec& spec,
                                  std::uint32_t before) {
  if (has_import(file, spec)) return std::nullopt;
  const ast::Tree& tree = file.tree;
  const std::string_view nl = file.style.newline_str();
  const std::string line = spec.statement();

  NodeId anchor = module_docstring(tree);
  if (tree.root()) {
    for (NodeId stmt : tree.children(tree.root(), GM_F(Module, body))) {
      const NodeKind k = tree.kind(stmt);
      if (is_future_import(tree, stmt) ||
          ((k == NodeKind::Import || k == NodeKind::ImportFrom) && tree.at(stmt).begin < before))
        anchor = stmt;
    }
  }
  if (anchor) {
    const std::uint32_t end = tree.at(anchor).end;
    const std::uint32_t eol = line_end(file.text, end);
    if (eol == file.text.size())  // last line, no line break: start one
      return Edit::insert(eol, std::string(nl) + line);
    return Edit::insert(full_line_end(file.text, end), line + std::string(nl));
  }
  // Top of the file: after a BOM, a shebang line and a coding cookie line.
  std::uint32_t at = 0;
  if (file.text.substr(0, 3) == "\xEF\xBB\xBF") at = 3;
  for (int n = 0; n < 2 && at < file.text.size(); ++n) {
    const std::uint32_t eol = line_end(file.text, at);
    const std::string_view l = file.text.substr(at, eol - at);
    const bool shebang = n == 0 && l.substr(0, 2) == "#!";
    const bool cookie = l.substr(0, 1) == "#" && l.find("coding") != std::string_view::npos;
    if (!shebang && !cookie) break;
    if (eol == file.text.size()) return Edit::insert(eol, std::string(nl) + line);
    at = full_line_end(file.text, at);
  }
  return Edit::insert(at, line + std::string(nl));
}

}  // namespace gm::edits

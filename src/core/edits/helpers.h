// Edit builders for rule authors. Each keeps the file's formatting: the
// statement's indentation, the file's indent unit, newline style and quotes,
// and comments that sit inside a replaced range.
//
// All offsets are into FileView::text (Source::text()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ast/tree.h"
#include "edits/edit.h"
#include "edits/text.h"
#include "syntax/lexer.h"

namespace gm::edits {

// What the helpers read: one parsed file.
struct FileView {
  std::string_view text;
  const ast::Tree& tree;
  const LexResult& lexed;
  const Stylist& style;
};

// Source text of a node.
std::string_view node_text(const FileView& file, ast::NodeId id);

// Comment texts ("# ...") that lie entirely inside [begin, end).
std::vector<std::string_view> comments_in(const FileView& file, std::uint32_t begin,
                                          std::uint32_t end);

// Replaces statement `stmt` ([begin, end): its trailing comment stays) with
// `lines`, written with 4 spaces per relative indent level; lines after the
// first get the statement's indentation, levels become the file's indent
// unit, lines are joined with the file's newline. With keep_comments, the
// comments inside the statement's range come first, each on its own line.
// nullopt when the result needs several lines but the statement does not
// start its line (`a = 1; b = 2`, `if x: b = 2`).
std::optional<Edit> replace_statement(const FileView& file, ast::NodeId stmt,
                                      std::span<const std::string> lines,
                                      bool keep_comments = true);

// Deletes a statement. On its own line(s): the whole lines, trailing comment
// and line break included. Beside others on a line: the statement and its
// `;`. The only statement of a block: replaced by `pass` (the block stays
// valid; a comment after it stays).
// `parent`: the statement's parent when known (find_statement_slot).
Edit delete_statement(const FileView& file, ast::NodeId stmt, ast::NodeId parent = {});

// `import module [as asname]` when name is empty, else
// `from module import name [as asname]`.
struct ImportSpec {
  std::string module;
  std::string name;
  std::string asname;

  static ImportSpec import_module(std::string module, std::string asname = {}) {
    return {std::move(module), {}, std::move(asname)};
  }
  static ImportSpec from_import(std::string module, std::string name, std::string asname = {}) {
    return {std::move(module), std::move(name), std::move(asname)};
  }
  std::string statement() const;  // the import statement's text
  // The name the import binds in the module namespace.
  std::string bound_name() const;
};

// Whether a module-level statement already makes exactly this import
// (`import a, torch` has `import torch`; `import torch as T` does not).
bool has_import(const FileView& file, const ImportSpec& spec);

// An edit that adds the import once: nullopt when has_import(). It goes on a
// new line after the last module-level import that starts before `before`;
// without one, after the module docstring (and any `from __future__`
// imports); without those, at the top of the file after a shebang line and a
// coding cookie line. Uses the file's newline; a file without a trailing
// newline keeps having none.
std::optional<Edit> insert_import(const FileView& file, const ImportSpec& spec,
                                  std::uint32_t before = 0xffffffffu);

}  // namespace gm::edits

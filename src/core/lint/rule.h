// What a rule is and what it sees.
//
// A rule is one class in one file (src/core/rules/gmNNN_<name>.cpp, listed in
// rules/rules.def): a stable code, a name, a one-line summary, markdown
// documentation, and check(). check() reports through the sink; a rule never
// edits text itself, it attaches an edits::Fix built with the context's
// helpers (which keep the file's indentation, newlines and quotes).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ast/tree.h"
#include "edits/helpers.h"
#include "edits/text.h"
#include "lint/diagnostic.h"
#include "parser/parse.h"
#include "syntax/lexer.h"
#include "syntax/source.h"

namespace gm::sema {
class Model;  // src/core/semantic: scopes, qualified names, compiled regions
}

namespace gm::lint {

// Everything a rule may read about one parsed file. Valid for one check()
// call; the tree has no syntax error.
class RuleContext {
 public:
  RuleContext(const Source& source, const ParseResult& parsed, const ParseOptions& options,
              const sema::Model* model);
  RuleContext(const RuleContext&) = delete;  // file_ points into style_
  RuleContext& operator=(const RuleContext&) = delete;

  std::string_view text() const { return source_.text(); }
  const Source& source() const { return source_; }
  const ast::Tree& tree() const { return parsed_.tree; }
  const LexResult& lexed() const { return parsed_.lexed; }
  const ParseOptions& options() const { return options_; }
  PythonVersion version() const { return options_.version; }
  // May be null (no semantic model built, e.g. in engine tests): a rule that
  // needs it must then report nothing rather than guess.
  const sema::Model* model() const { return model_; }
  const edits::Stylist& style() const { return style_; }
  const edits::FileView& file() const { return file_; }

  // ---- helpers (see edits/helpers.h)
  std::string_view text_of(ast::NodeId id) const { return edits::node_text(file_, id); }
  Location location(std::uint32_t begin, std::uint32_t end) const {
    return locate(text(), lexed().lines, begin, end);
  }
  std::optional<edits::Edit> replace_statement(ast::NodeId stmt, std::span<const std::string> lines,
                                               bool keep_comments = true) const {
    return edits::replace_statement(file_, stmt, lines, keep_comments);
  }
  edits::Edit delete_statement(ast::NodeId stmt) const;
  std::optional<edits::Edit> insert_import(const edits::ImportSpec& spec,
                                           std::uint32_t before = 0xffffffffu) const {
    return edits::insert_import(file_, spec, before);
  }
  std::string quote(std::string_view value) const { return edits::quote_string(value, style_); }

  // Per-file working memory of the rules: one T per context, built on first
  // use and dropped with the context (so nothing is shared between files or
  // kept by address). For indexes that make an analysis linear in the size
  // of a function instead of rescanning it per finding.
  template <typename T>
  T& scratch() const {
    static const char tag = 0;  // one address per T
    for (const auto& [key, value] : scratch_)
      if (key == &tag) return *static_cast<T*>(value.get());
    auto value = std::make_shared<T>();
    T& out = *value;
    scratch_.emplace_back(&tag, std::move(value));
    return out;
  }

 private:
  mutable std::vector<std::pair<const void*, std::shared_ptr<void>>> scratch_;
  const Source& source_;
  const ParseResult& parsed_;
  const ParseOptions& options_;
  const sema::Model* model_;
  edits::Stylist style_;
  edits::FileView file_;
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Stable once published: "GM101".
  virtual std::string_view code() const = 0;
  // kebab-case: "tensor-truthiness-in-if".
  virtual std::string_view name() const = 0;
  // One line, for listings.
  virtual std::string_view summary() const = 0;
  // Markdown, several paragraphs: what it detects, why Dynamo breaks there,
  // the rewrite, when it declines, an example (before / after).
  virtual std::string_view documentation() const = 0;
  virtual void check(const RuleContext& ctx, DiagnosticSink& sink) const = 0;
};

}  // namespace gm::lint

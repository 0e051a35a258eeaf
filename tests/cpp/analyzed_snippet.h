// A snippet of Python 3.11 parsed and analysed for a test, with a finder for
// its nodes by source text. Tests derive from Snippet to add their queries.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "parser/parse.h"
#include "semantic/model.h"

namespace gm::testing {

struct Snippet {
  std::string text;
  std::unique_ptr<Source> source;
  ParseResult parsed;
  sema::Model model;

  const ast::Tree& tree() const { return parsed.tree; }

  // The n-th (0-based) node of `kind` whose source text is exactly `snippet`.
  ast::NodeId find(ast::NodeKind kind, std::string_view snippet, int nth = 0) const {
    const auto& t = parsed.tree;
    const std::string_view src = source->text();
    for (std::uint32_t i = 1; i <= t.node_count(); ++i) {
      const ast::NodeId id{i};
      if (t.kind(id) != kind) continue;
      const auto& n = t.at(id);
      if (src.substr(n.begin, n.end - n.begin) == snippet && nth-- == 0) return id;
    }
    return {};
  }
};

// `text` parsed as Python 3.11 (a syntax error fails the test) and analysed.
template <class T = Snippet>
std::unique_ptr<T> analyze_snippet(std::string text, const sema::AnalyzeOptions& options = {}) {
  auto a = std::make_unique<T>();
  a->text = std::move(text);
  auto decoded = Source::from_utf8(a->text);
  EXPECT_TRUE(std::holds_alternative<Source>(decoded));
  a->source = std::make_unique<Source>(std::get<Source>(std::move(decoded)));
  ParseOptions parse;
  parse.version = {3, 11};
  a->parsed = parse_module(*a->source, parse);
  EXPECT_FALSE(a->parsed.error.has_value()) << a->parsed.error->message;
  a->model = sema::analyze(a->parsed.tree, *a->source, options);
  return a;
}

}  // namespace gm::testing

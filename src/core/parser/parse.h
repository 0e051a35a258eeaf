// Public entry points of the parser.
#pragma once

#include <optional>

#include "ast/tree.h"
#include "syntax/lexer.h"
#include "syntax/source.h"
#include "syntax/syntax_error.h"

namespace gm {

struct PythonVersion {
  int major = 3;
  int minor = 11;
  friend constexpr auto operator<=>(PythonVersion, PythonVersion) = default;
};

struct ParseOptions {
  // Accept exactly the syntax this CPython version accepts and build the tree
  // it builds (positions included).
  PythonVersion version{3, 11};
  // Bound on syntactic nesting; deeper input is a SyntaxError, never a stack
  // overflow.
  int max_depth = 1000;
};

struct ParseResult {
  ast::Tree tree;                    // root is a Module when error is empty
  LexResult lexed;                   // tokens and trivia, kept for edits
  std::optional<SyntaxError> error;  // the first error, as CPython reports it
};

ParseResult parse_module(const Source& source, const ParseOptions& options);

}  // namespace gm

// The recursive-descent parser (Pratt for binary operators). Internal to the
// parser folder; the public API is parse.h.
//
// The grammar areas live in separate files, all implementing this one class:
//   parser.cpp       token cursor, errors, depth guard, node helpers, entry
//   expressions.cpp  expressions, targets (ctx), calls, slices, comprehensions,
//                    lambda, strings and numbers -> Constant
//   fstrings.cpp     f-strings (PEP 701 tokens; pre-3.12 rules and positions)
//   statements.cpp   simple and compound statements, blocks, decorators
//   parameters.cpp   def / lambda parameter lists -> arguments
//   patterns.cpp     match statement patterns
//   type_params.cpp  PEP 695/696 type parameters and `type` aliases
//
// Error handling: the first error wins. fail() records it and throws
// ParseAbort, which parse_module() catches; no exception leaves the parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ast/tree.h"
#include "parser/parse.h"
#include "syntax/lexer.h"
#include "syntax/source.h"

namespace gm::detail {

struct ParseAbort {};

using ast::NodeId;
using ast::NodeKind;
using ast::Position;

class Parser {
 public:
  Parser(const Source& source, const LexResult& lexed, ast::Tree& tree,
         const ParseOptions& options);

  // file: [statements] ENDMARKER  -> Module
  NodeId parse_file();
  const std::optional<SyntaxError>& error() const { return error_; }

  // ======================================================================
  // Infrastructure (parser.cpp)
  // ======================================================================
  const Token& peek(int ahead = 0) const;
  Tok kind(int ahead = 0) const { return peek(ahead).kind; }
  bool at(Tok k) const { return kind() == k; }
  const Token& advance();                // consume and return the current token
  bool accept(Tok k);                    // consume if the current token is k
  const Token& expect(Tok k);            // consume k or fail with CPython's wording
  const Token& previous() const;         // the last consumed token
  std::size_t mark() const { return pos_; }
  void reset(std::size_t mark) { pos_ = mark; }
  // A NAME token spelled `word` (soft keywords: match, case, _, type).
  bool at_soft_keyword(std::string_view word, int ahead = 0) const;
  std::string_view text(const Token& t) const;

  bool version_at_least(int minor) const { return options_.version.minor >= minor; }
  int minor() const { return options_.version.minor; }

  // Errors. fail() never returns.
  [[noreturn]] void fail(const Token& at, std::string message,
                         std::string kind = "SyntaxError");
  [[noreturn]] void fail_range(std::uint32_t begin, std::uint32_t end,
                               std::string message);
  [[noreturn]] void fail_node(NodeId node, std::string message);
  // Reject syntax the selected version lacks, CPython-style:
  // "<what> is only supported in Python 3.<minor> and greater".
  void require_version(int minor, const Token& at, std::string_view what);

  // Nesting bound: construct one on entry to each recursive rule.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p);
    ~DepthGuard();
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // Positions. Columns are UTF-8 byte offsets from the start of the line.
  Position position_of(const Token& first, const Token& last) const;
  Position position_of(std::uint32_t begin, std::uint32_t end) const;
  std::uint32_t line_of(std::uint32_t offset) const { return lexed_.lines.line_of(offset); }
  std::uint32_t col_of(std::uint32_t offset) const;

  // Node builders: a node spanning tokens [first, last] or two nodes.
  NodeId make(NodeKind kind, const Token& first, const Token& last,
              std::initializer_list<ast::Field> fields);
  NodeId make(NodeKind kind, std::uint32_t begin, std::uint32_t end,
              std::initializer_list<ast::Field> fields);
  NodeId make_between(NodeKind kind, NodeId first, NodeId last,
                      std::initializer_list<ast::Field> fields);
  std::uint32_t begin_of(NodeId n) const { return tree_.at(n).begin; }
  std::uint32_t end_of(NodeId n) const { return tree_.at(n).end; }

  // Identifier text as CPython stores it (NFKC-normalised when non-ASCII).
  ast::Field identifier(const Token& name);

  // ======================================================================
  // Expressions (expressions.cpp)
  // ======================================================================
  NodeId expression();               // expression (incl. ternary, lambda)
  NodeId expressions();              // expression (',' expression)* [','] -> Tuple
  NodeId named_expression();         // NAME ':=' expression | expression
  NodeId star_expressions();         // for expression statements / return
  NodeId star_expression();
  NodeId star_named_expression();
  NodeId star_named_expressions_tuple();  // for `for ... in <here>` etc.
  NodeId disjunction();
  NodeId bitwise_or();               // used by patterns and star targets
  NodeId primary();                  // atom with trailers
  NodeId atom();
  NodeId lambda_expression();
  NodeId yield_expression();         // 'yield' ... | 'yield' 'from' ...
  NodeId slices();
  NodeId call_arguments(NodeId func);  // after '(' consumed? see .cpp
  NodeId strings();                  // adjacent STRING / f-string tokens
  NodeId number();
  // Comprehension clauses: for_if_clauses
  ast::Field comprehension_clauses();

  // Targets: convert a parsed expression to a Store/Del target, validating it
  // with CPython's messages ("cannot assign to ...").
  enum class TargetKind { Assign, AugAssign, AnnAssign, For, With, Comprehension, Del, NamedExpr };
  void set_context(NodeId expr, NodeKind ctx, TargetKind why);
  NodeId star_targets();             // for `for` targets and `with ... as`

  // ======================================================================
  // f-strings (fstrings.cpp)
  // ======================================================================
  // Parse one f-string starting at an FStringStart token; appends its parts
  // (Constant / FormattedValue) to `values` for string concatenation.
  void fstring(std::vector<NodeId>& values);

  // ======================================================================
  // Statements (statements.cpp), parameters.cpp, patterns.cpp, type_params.cpp
  // ======================================================================
  std::vector<NodeId> statements_until(Tok end);  // module body or block
  void statement(std::vector<NodeId>& out);        // one line may yield several
  void simple_statements(std::vector<NodeId>& out);
  NodeId simple_statement();
  NodeId compound_statement();
  std::vector<NodeId> block();                     // ':' already consumed
  NodeId function_def(std::vector<NodeId> decorators, const Token* async_tok,
                      const Token& first);
  NodeId class_def(std::vector<NodeId> decorators, const Token& first);
  NodeId parameters(bool is_lambda);               // -> arguments
  NodeId match_statement();
  NodeId pattern();
  ast::Field type_params_opt();                    // '[' ... ']' or empty list
  NodeId type_alias();

 private:
  const Source& source_;
  const LexResult& lexed_;
  ast::Tree& tree_;
  const ParseOptions& options_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::optional<SyntaxError> error_;

  friend class DepthGuard;
};

}  // namespace gm::detail

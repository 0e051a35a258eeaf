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
  // The token stream always ends with EndMarker (or Error) and pos_ never
  // moves past it, so tokens[pos_] is always valid; lookahead clamps.
  // (tokens_ / ntokens_ cache lexed_.tokens' data and size: the token vector
  // never changes while parsing, and the cursor is the hottest code here.)
  const Token& peek() const { return tokens_[pos_]; }
  const Token& peek(int ahead) const {
    const std::size_t i = pos_ + static_cast<std::size_t>(ahead);
    return tokens_[i < ntokens_ ? i : ntokens_ - 1];
  }
  Tok kind() const { return tokens_[pos_].kind; }
  Tok kind(int ahead) const { return peek(ahead).kind; }
  bool at(Tok k) const { return kind() == k; }
  // consume and return the current token (never steps past the last one)
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < ntokens_) ++pos_;
    return t;
  }
  // consume if the current token is k
  bool accept(Tok k) {
    if (tokens_[pos_].kind != k) return false;
    advance();
    return true;
  }
  const Token& expect(Tok k) {           // consume k or fail with CPython's wording
    if (kind() == k) return advance();
    expect_failed(k);
  }
  [[noreturn]] void expect_failed(Tok k);
  const Token& previous() const {        // the last consumed token
    return tokens_[pos_ == 0 ? 0 : pos_ - 1];
  }
  std::size_t mark() const { return pos_; }
  void reset(std::size_t mark) { pos_ = mark; }
  // A NAME token spelled `word` (soft keywords: match, case, _, type).
  bool at_soft_keyword(std::string_view word, int ahead = 0) const;
  std::string_view text(const Token& t) const {
    return source_.text().substr(t.begin, t.end - t.begin);
  }

  bool version_at_least(int minor) const { return options_.version.minor >= minor; }
  int minor() const { return options_.version.minor; }

  // Errors. fail() never returns.
  [[noreturn]] void fail(const Token& at, std::string message, std::string kind = "SyntaxError");
  [[noreturn]] void fail_range(std::uint32_t begin, std::uint32_t end, std::string message);
  [[noreturn]] void fail_node(NodeId node, std::string message);
  // Reject syntax the selected version lacks, CPython-style:
  // "<what> is only supported in Python 3.<minor> and greater".
  void require_version(int minor, const Token& at, std::string_view what);

  // Nesting bound: construct one on entry to each recursive rule.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > p_.options_.max_depth) p_.too_deep();
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // Positions. Columns are UTF-8 byte offsets from the start of the line.
  Position position_of(const Token& first, const Token& last) const {
    const std::uint32_t* starts = lexed_.lines.starts.data();
    Position p;
    p.lineno = static_cast<std::int32_t>(first.line);
    p.col_offset = static_cast<std::int32_t>(first.begin - starts[first.line - 1]);
    p.end_lineno = static_cast<std::int32_t>(last.end_line);
    p.end_col_offset = static_cast<std::int32_t>(last.end - starts[last.end_line - 1]);
    return p;
  }
  Position position_of(std::uint32_t begin, std::uint32_t end) const;
  // Line of a byte offset; nodes are built roughly in source order, so the
  // last answer is tried first before a binary search.
  std::uint32_t line_of(std::uint32_t offset) const;
  std::uint32_t col_of(std::uint32_t offset) const;

  // Node builders: a node spanning tokens [first, last] or two nodes.
  NodeId make(NodeKind kind, const Token& first, const Token& last,
              std::initializer_list<ast::Field> fields) {
    return tree_.add(kind, first.begin, last.end, position_of(first, last), fields);
  }
  NodeId make(NodeKind kind, std::uint32_t begin, std::uint32_t end,
              std::initializer_list<ast::Field> fields);
  NodeId make_between(NodeKind kind, NodeId first, NodeId last,
                      std::initializer_list<ast::Field> fields);
  std::uint32_t begin_of(NodeId n) const { return tree_.at(n).begin; }
  std::uint32_t end_of(NodeId n) const { return tree_.at(n).end; }

  // Identifier text as CPython stores it (NFKC-normalised when non-ASCII).
  // An ASCII name is its own source text: the field points at the source
  // copy in the tree's arena, nothing is copied.
  ast::Field identifier(const Token& name) {
    if (!(name.flags & kNonAscii)) return ast::Tree::string(tree_.source_ref(name.begin, name.end));
    return normalized_identifier(name);
  }
  ast::Field normalized_identifier(const Token& name);

  // More builders: spans token..node and node..token.
  NodeId make_from(NodeKind kind, const Token& first, NodeId last,
                   std::initializer_list<ast::Field> fields);
  NodeId make_to(NodeKind kind, NodeId first, const Token& last,
                 std::initializer_list<ast::Field> fields);
  Position position_between(NodeId first, NodeId last) const;
  Position position_from(const Token& first, NodeId last) const;
  Position position_to(NodeId first, const Token& last) const;
  // CPython's generic error at the current token: "invalid syntax", or the
  // lexer's error / "unexpected indent" / "unexpected unindent" where the
  // current token says so.
  [[noreturn]] void syntax_error_here();
  // Scratch stack for child lists: remember scratch_.size() as `base`, push
  // children, then scratch_list(base) stores them and pops them.
  std::vector<NodeId> scratch_;
  ast::Field scratch_list(std::size_t base);

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
  // At '(': parses through ')' and returns Call(func, args, keywords);
  // func may be NodeId{} (class bases: read the Call's args/keywords).
  NodeId call_arguments(NodeId func);
  NodeId strings();                  // adjacent STRING / f-string tokens
  NodeId single_string();            // strings() of one plain STRING token
  NodeId number();
  // Comprehension clauses: for_if_clauses
  ast::Field comprehension_clauses();

  // Targets: convert a parsed expression to a Store/Del target, validating it
  // with CPython's messages ("cannot assign to ...").
  enum class TargetKind { Assign, AugAssign, AnnAssign, For, With, Comprehension, Del, NamedExpr };
  void set_context(NodeId expr, NodeKind ctx, TargetKind why);
  NodeId star_targets();             // for `for` targets and `with ... as`

  // ---- expressions.cpp / targets.cpp helpers
  NodeId conjunction();
  NodeId inversion();
  NodeId comparison();
  bool at_compare_op(NodeKind& op) const;
  NodeId binary(int min_precedence);  // precedence climbing, | .. * / // % @
  NodeId factor();
  NodeId power();
  NodeId slice_item();
  // '(' args ')' after func; the Call spans `first` .. ')'. call_arguments()
  // above is the entry for class bases (func may be NodeId{}): current token
  // '(' , consumes through ')', returns a Call whose args/keywords are read.
  NodeId call(NodeId func, const Token& first, bool allow_genexp);
  void check_repeated_keyword(std::size_t base, const Token& name);
  [[noreturn]] void keyword_assignment_error(NodeId e);
  [[noreturn]] void syntax_error_after_argument(NodeId e, const char* message);
  NodeId parenthesized();
  NodeId list_display();
  NodeId brace_display();
  NodeId set_element();
  NodeId dict_rest(const Token& lbrace, std::size_t base);
  NodeId lambda_nocond();
  NodeId target_list(TargetKind why);
  NodeId star_target();
  std::string expr_name(NodeId e) const;
  NodeId invalid_target(NodeId e, NodeKind ctx) const;
  void apply_context(NodeId e, NodeKind ctx);
  void check_debug_target(NodeId e, NodeKind ctx);
  bool assignment_hint_applies(NodeId target);
  bool starts_value_bitwise_or() const;
  std::size_t first_token_index(NodeId e) const;
  void missing_comma_error(const Token& first, NodeId a);
  // Bracket nesting of the expression being parsed (for 3.10+'s "Perhaps you
  // forgot a comma?", which CPython only gives inside brackets).
  int bracket_depth_ = 0;
  struct BracketGuard {
    explicit BracketGuard(Parser& p) : p_(p) { ++p_.bracket_depth_; }
    ~BracketGuard() { --p_.bracket_depth_; }
    BracketGuard(const BracketGuard&) = delete;
    BracketGuard& operator=(const BracketGuard&) = delete;
    Parser& p_;
  };
  bool is_parenthesized(NodeId e) const;
  // A primary that expression() parsed ahead (its fast path), for the
  // precedence chain disjunction .. primary to start from: primary() returns
  // it (and clears it) instead of parsing, the rules above it skip their
  // prefix operators (`not`, unary +-~, `await`) and take their first token
  // from rule_first(). Set only right before expression() calls disjunction(),
  // so it is always consumed by that call's leftmost descent.
  NodeId pending_primary_{};
  std::size_t pending_first_ = 0;
  const Token& rule_first() const {
    return pending_primary_ ? tokens_[pending_first_] : tokens_[pos_];
  }

  // ======================================================================
  // f-strings (fstrings.cpp)
  // ======================================================================
  // Parse one f-string starting at an FStringStart token; appends its parts
  // (Constant / FormattedValue) to `values` for string concatenation.
  void fstring(std::vector<NodeId>& values);
  // Helpers (fstrings.cpp). FStringState/FStringPart are defined there.
  struct FStringState;
  struct FStringPart;
  void fstring_token(FStringState& st);
  void fstring_field(FStringState& st, std::vector<FStringPart>& out, int level);
  NodeId fstring_spec(FStringState& st, const Token& colon, int level);
  void fstring_check_expr_text(std::uint32_t begin, const Token& at);
  void fstring_remap(NodeId node, int line0, int col_delta, int line_delta);
  NodeId fstring_constant(std::string_view value, bool kind_u);

  // ======================================================================
  // Statements (statements.cpp), parameters.cpp, patterns.cpp, type_params.cpp
  // ======================================================================
  // Statement lists are built on scratch_: statement() and
  // simple_statements() push the statements they parse onto it.
  void statement();                 // one line (may push several) or compound
  void simple_statements();         // simple_stmt (';' simple_stmt)* [';'] NEWLINE
  NodeId simple_statement();
  NodeId compound_statement();
  // After ':': NEWLINE INDENT statements DEDENT | simple_stmts. `what`, `line`
  // name the owner for "expected an indented block after <what> on line N".
  ast::Field block(std::string_view what, std::uint32_t line);
  NodeId function_def(ast::Field decorators, const Token& first);  // at 'def'/'async'
  NodeId class_def(ast::Field decorators, const Token& first);     // at 'class'
  // Parameter list of a def (is_lambda=false; stops before ')') or a lambda
  // (stops before ':'); never consumes the closing token. -> arguments
  NodeId parameters(bool is_lambda);
  NodeId match_statement();
  NodeId pattern();
  ast::Field type_params_opt();                    // '[' ... ']' or empty list
  NodeId type_alias();

  // ---- statements.cpp helpers
  NodeId expression_statement();
  NodeId import_name();
  NodeId import_from();
  NodeId import_alias(bool dotted);
  NodeId if_statement();
  NodeId while_statement();
  NodeId for_statement();
  NodeId with_statement();
  NodeId with_item();
  bool parenthesized_with_items(std::size_t base);
  NodeId try_statement();
  NodeId decorated();
  // End of the compound statement just parsed (CPython 3.9+: its last
  // non-layout token; 3.8: its last block's last statement), and its line.
  std::uint32_t compound_end() const;
  struct EndPosition {
    std::uint32_t end;
    std::uint32_t line;
  };
  EndPosition compound_end_position() const;
  // A compound statement node from `first` to compound_end(), positioned
  // from token lines rather than line searches (its start is far behind).
  NodeId make_compound(NodeKind kind, const Token& first, std::initializer_list<ast::Field> fields);
  // ':' after a compound statement header. CPython 3.10+ says "expected ':'"
  // where its grammar forces the token (&&':') or a NEWLINE comes instead.
  void expect_colon(bool forced);
  bool at_match_statement() const;
  void check_38_decorator();
  std::uint32_t last_block_end_ = 0;  // 3.8: end of the last block's last statement
  // ---- parameters.cpp helpers
  NodeId parameter(bool is_lambda, bool allow_star_annotation);
  // ---- patterns.cpp helpers
  NodeId case_block();
  NodeId match_subject();
  void match_missing_colon(std::size_t start);
  NodeId patterns_top();             // open sequence or single pattern (case ... :)
  NodeId or_pattern();
  NodeId closed_pattern();
  NodeId maybe_star_pattern();
  NodeId literal_value_expr();       // signed number / complex / string / None...
  NodeId value_name_expr();          // NAME ('.' NAME)* -> Name/Attribute
  NodeId class_pattern_rest(NodeId cls, const Token& first);
  NodeId mapping_pattern();
  NodeId sequence_pattern();
  // ---- type_params.cpp helpers
  NodeId type_param();

 private:
  const Source& source_;
  const LexResult& lexed_;
  ast::Tree& tree_;
  const ParseOptions& options_;
  const Token* tokens_;
  std::size_t ntokens_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::optional<SyntaxError> error_;
  std::vector<NodeKind> ops_scratch_;  // Compare.ops under construction
  mutable std::uint32_t line_hint_ = 1;  // line_of() cache

  [[noreturn]] void abort_with(SyntaxError error);
  [[noreturn]] void too_deep();  // DepthGuard's MemoryError
  bool lexer_error_overrides(std::uint32_t error_line) const;

 public:
  SyntaxError lexer_error() const;  // the lexer's error as this version words it

 private:
  friend class DepthGuard;
};

}  // namespace gm::detail

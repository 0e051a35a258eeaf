// Running rules over a file (check) and fixing it to a fixpoint (fix).
//
// check: parse -> (semantic model, if a builder is given) -> every selected
//   rule -> drop suppressed diagnostics -> sort by position, then code.
// fix:   check -> apply the applicable fixes of all diagnostics in one splice
//   pass (overlapping ones wait for the next round, the innermost first) ->
//   re-parse -> repeat until no fix applies. Bounded by max_rounds plus the
//   number of findings of the input (nested fixes surface one level per
//   round). A round whose output does not parse is a bug in a rule: the
//   whole file is reverted and the fixes to blame are reported. A file that
//   cycles back to an earlier text is reverted too; one still changing at
//   the bound keeps the text of its last round that lowered the number of
//   findings (status Fixed, culprits: the fixes still pending), or is
//   reverted when no round did.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lint/diagnostic.h"
#include "lint/registry.h"
#include "lint/rule.h"
#include "lint/selection.h"
#include "lint/suppression.h"
#include "parser/parse.h"
#include "syntax/source.h"

namespace gm::lint {

using ModelBuilder =
    std::function<std::shared_ptr<const sema::Model>(const Source&, const ParseResult&)>;

struct LintOptions {
  ParseOptions parse;
  RuleSelection selection;  // default: ALL
  bool unsafe_fixes = false;  // also apply Applicability::Unsafe fixes
  int max_rounds = 10;
  bool report_unused_suppressions = true;
  // Builds the semantic model for each parsed text; empty: model() is null.
  ModelBuilder build_model;
};

// A rule that threw: its findings for this file are dropped, the other
// rules still run. Always a bug in the rule.
struct RuleError {
  std::string code;
  std::string message;
};

struct CheckResult {
  std::vector<Diagnostic> diagnostics;  // sorted by (begin, code); suppressed removed
  std::vector<RuleError> rule_errors;
  std::optional<SyntaxError> syntax_error;  // set: the file did not parse, no rule ran
  std::size_t suppressed = 0;
  std::vector<UnusedSuppression> unused_suppressions;
};

CheckResult check_source(const Source& source, const LintOptions& options,
                         std::span<const Rule* const> rules = lint::rules());

struct AppliedFix {
  std::string code;
  std::string description;
  int round = 0;  // 1-based
  std::uint32_t begin = 0;  // the fix's range in that round's text
  std::uint32_t end = 0;
};

struct FixResult {
  enum class Status {
    Unchanged,         // nothing to fix
    Fixed,             // text differs from the input
    InputSyntaxError,  // the input does not parse; untouched
    FixBrokeSyntax,    // a fix produced invalid code: reverted, see culprits
    NotConverged,      // cycling, or at the bound with no round that helped: reverted
  };
  Status status = Status::Unchanged;
  std::string text;  // the mended text; the input's text unless Fixed
  std::vector<AppliedFix> applied;  // empty unless Fixed
  // Diagnostics of `text` (the input's when reverted): what is left to do.
  std::vector<Diagnostic> remaining;
  std::optional<SyntaxError> syntax_error;  // InputSyntaxError / FixBrokeSyntax
  // FixBrokeSyntax: the fixes that broke the file (each fails alone; if none
  // fails alone, all of that round's fixes). NotConverged, and Fixed at the
  // round bound: the last round's (not applied).
  std::vector<AppliedFix> culprits;
  // Fixes that apply_fixes() rejected as malformed (a rule bug; skipped).
  std::vector<AppliedFix> invalid;
  // Rules that threw, in any round (a rule bug; their findings are dropped).
  std::vector<RuleError> rule_errors;
  int rounds = 0;  // rounds that applied fixes
  // Fixed: where each byte of `text` came from in the input (the edits of
  // every round, composed); empty otherwise.
  edits::SourceMap source_map;

  std::map<std::string, int> applied_per_code() const;
};

FixResult fix_to_fixpoint(const Source& source, const LintOptions& options,
                          std::span<const Rule* const> rules = lint::rules());

// A Source for edited text, decoded like `original` (same BOM handling;
// already-transcoded text is not transcoded again).
std::optional<Source> reparse_source(const Source& original, std::string text);

std::string_view status_name(FixResult::Status s);

}  // namespace gm::lint

#include "lint/engine.h"

#include <algorithm>
#include <exception>
#include <set>
#include <variant>

#include "edits/tree_query.h"
#include "lint/unused_imports.h"

namespace gm::lint {

std::optional<Source> reparse_source(const Source& original, std::string text) {
  auto r =
      original.had_bom() ? Source::decode(std::move(text)) : Source::from_utf8(std::move(text));
  if (auto* s = std::get_if<Source>(&r)) return std::move(*s);
  return std::nullopt;
}

std::string_view status_name(FixResult::Status s) {
  switch (s) {
    case FixResult::Status::Unchanged: return "unchanged";
    case FixResult::Status::Fixed: return "fixed";
    case FixResult::Status::InputSyntaxError: return "input-syntax-error";
    case FixResult::Status::FixBrokeSyntax: return "fix-broke-syntax";
    case FixResult::Status::NotConverged: return "not-converged";
  }
  return "?";
}

std::map<std::string, int> FixResult::applied_per_code() const {
  std::map<std::string, int> out;
  for (const auto& a : applied) ++out[a.code];
  return out;
}

namespace {

// Runs the selected rules over an already parsed, error-free file.
CheckResult run_rules(const Source& source, const ParseResult& parsed, const LintOptions& options,
                      std::span<const Rule* const> rules) {
  CheckResult out;
  std::shared_ptr<const sema::Model> model;
  if (options.build_model) model = options.build_model(source, parsed);
  const RuleContext ctx(source, parsed, options.parse, model.get());
  const std::string_view text = source.text();
  const auto size = static_cast<std::uint32_t>(text.size());

  Suppressions suppressions = Suppressions::parse(text, parsed.lexed);
  for (const Rule* rule : rules) {
    if (!options.selection.enabled(rule->code())) continue;
    DiagnosticSink sink;
    try {
      rule->check(ctx, sink);
    } catch (const std::exception& e) {
      out.rule_errors.push_back({std::string(rule->code()), e.what()});
      continue;
    } catch (...) {
      out.rule_errors.push_back({std::string(rule->code()), "unknown exception"});
      continue;
    }
    for (Diagnostic& d : sink.take()) {
      d.code = std::string(rule->code());
      d.end = std::min(d.end, size);
      d.begin = std::min(d.begin, d.end);
      d.loc = locate(text, parsed.lexed.lines, d.begin, d.end);
      bool suppressed = suppressions.suppresses(d.loc.line, d.code);
      if (!suppressed && !suppressions.items().empty()) {
        if (ast::NodeId stmt = edits::enclosing_statement(parsed.tree, d.begin)) {
          const std::uint32_t first = static_cast<std::uint32_t>(parsed.tree.at(stmt).pos.lineno);
          if (first != d.loc.line) suppressed = suppressions.suppresses(first, d.code);
        }
      }
      if (suppressed) {
        ++out.suppressed;
        continue;
      }
      out.diagnostics.push_back(std::move(d));
    }
  }
  std::stable_sort(out.diagnostics.begin(), out.diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.begin != b.begin) return a.begin < b.begin;
                     return a.code < b.code;
                   });
  if (options.report_unused_suppressions) out.unused_suppressions = suppressions.unused();
  return out;
}

bool applicable(const Diagnostic& d, bool unsafe) {
  if (!d.fix || d.fix->edits.empty()) return false;
  const auto a = d.fix->applicability;
  return a == edits::Applicability::Safe || (unsafe && a == edits::Applicability::Unsafe);
}

AppliedFix describe(const Diagnostic& d, int round) {
  return AppliedFix{d.code, d.fix->description, round, d.fix->begin(), d.fix->end()};
}

// The fixes left some imports unused (imports_made_unused): delete them and
// report what remains against the final text. Nothing changes when the
// result would not parse.
void drop_unused_imports(FixResult& out, const Source& cur, const ParseResult& parsed,
                         const std::set<std::string>& original_names, const LintOptions& options,
                         std::span<const Rule* const> rules) {
  const edits::Stylist style = edits::Stylist::detect(cur.text(), parsed.lexed);
  const edits::FileView view{cur.text(), parsed.tree, parsed.lexed, style};
  std::vector<edits::Edit> dels = imports_made_unused(original_names, view);
  if (dels.empty()) return;
  const edits::Fix fix =
      edits::Fix::safe("Remove the imports the fixes left unused", std::move(dels));
  const edits::ApplyResult res = edits::apply_fixes(cur.text(), std::span(&fix, 1));
  if (res.applied == 0) return;
  std::optional<Source> next = reparse_source(cur, res.text);
  if (!next) return;
  ParseResult next_parsed = parse_module(*next, options.parse);
  if (next_parsed.error) return;
  out.text = res.text;
  out.source_map = edits::SourceMap::compose(out.source_map, res.map);  // final text -> input
  out.remaining = run_rules(*next, next_parsed, options, rules).diagnostics;
}

}  // namespace

CheckResult check_source(const Source& source, const LintOptions& options,
                         std::span<const Rule* const> rules) {
  ParseResult parsed = parse_module(source, options.parse);
  if (parsed.error) {
    CheckResult out;
    out.syntax_error = parsed.error;
    return out;
  }
  return run_rules(source, parsed, options, rules);
}

FixResult fix_to_fixpoint(const Source& source, const LintOptions& options,
                          std::span<const Rule* const> rules) {
  FixResult out;
  out.text = std::string(source.text());

  std::optional<Source> cur = source;
  ParseResult parsed = parse_module(*cur, options.parse);
  if (parsed.error) {
    out.status = FixResult::Status::InputSyntaxError;
    out.syntax_error = parsed.error;
    return out;
  }
  std::vector<Diagnostic> original_diags;
  const std::set<std::string> original_names = names_in(parsed.tree);
  std::set<std::string> seen{std::string(source.text())};
  std::vector<AppliedFix> applied;
  edits::SourceMap source_map;  // cur -> source

  // The round bound. Fixes that nest (an `if` inside an `if`, a chain of
  // conditional expressions) are revealed one level per round, so a file
  // may need as many rounds as it has findings: the bound is max_rounds
  // more than that. When it is hit anyway, the file keeps the text of the
  // last round that lowered the number of findings (those fixes converged)
  // instead of being reverted; only when no round did is it reverted.
  int bound = options.max_rounds;
  struct Best {
    std::size_t findings = 0;
    std::optional<Source> source;  // empty: the input
    edits::SourceMap source_map;   // source -> the input
    std::size_t applied = 0;
    int rounds = 0;
    std::vector<Diagnostic> diagnostics;
  } best;

  const auto revert = [&](FixResult::Status status) {
    out.status = status;
    out.text = std::string(source.text());
    out.remaining = std::move(original_diags);
    return out;
  };

  for (int round = 1;; ++round) {
    CheckResult checked = run_rules(*cur, parsed, options, rules);
    if (round == 1) {
      original_diags = checked.diagnostics;
      bound = options.max_rounds + static_cast<int>(original_diags.size());
      best.findings = original_diags.size();
    } else if (checked.diagnostics.size() < best.findings) {
      best.findings = checked.diagnostics.size();
      best.source = cur;
      best.source_map = source_map;
      best.applied = applied.size();
      best.rounds = round - 1;
      best.diagnostics = checked.diagnostics;
    }
    out.rule_errors.insert(out.rule_errors.end(), checked.rule_errors.begin(),
                           checked.rule_errors.end());

    std::vector<edits::Fix> fixes;
    std::vector<const Diagnostic*> owners;
    for (const Diagnostic& d : checked.diagnostics) {
      if (!applicable(d, options.unsafe_fixes)) continue;
      fixes.push_back(*d.fix);
      owners.push_back(&d);
    }
    edits::ApplyResult res;
    if (!fixes.empty()) res = edits::apply_fixes(cur->text(), fixes);
    for (std::size_t i = 0; i < fixes.size(); ++i)
      if (res.status[i] == edits::FixStatus::Invalid)
        out.invalid.push_back(describe(*owners[i], round));

    if (res.applied == 0) {  // fixpoint
      out.applied = std::move(applied);
      out.status = out.applied.empty() ? FixResult::Status::Unchanged : FixResult::Status::Fixed;
      if (!out.applied.empty()) out.source_map = std::move(source_map);
      out.text = std::string(cur->text());
      out.remaining = std::move(checked.diagnostics);
      if (!out.applied.empty())
        drop_unused_imports(out, *cur, parsed, original_names, options, rules);
      return out;
    }
    std::vector<AppliedFix> this_round;
    std::vector<std::size_t> applied_idx;
    for (std::size_t i = 0; i < fixes.size(); ++i)
      if (res.status[i] == edits::FixStatus::Applied) {
        this_round.push_back(describe(*owners[i], round));
        applied_idx.push_back(i);
      }

    const bool cycle = !seen.insert(res.text).second;
    if (cycle || round > bound) {
      out.culprits = std::move(this_round);
      if (!cycle && best.source) {  // keep the fixes that converged
        applied.resize(best.applied);
        out.applied = std::move(applied);
        out.status = FixResult::Status::Fixed;
        out.text = std::string(best.source->text());
        out.source_map = std::move(best.source_map);
        out.remaining = std::move(best.diagnostics);
        out.rounds = best.rounds;
        return out;
      }
      out.rounds = round - 1;
      return revert(FixResult::Status::NotConverged);
    }

    std::optional<Source> next = reparse_source(*cur, res.text);
    ParseResult next_parsed;
    if (next) next_parsed = parse_module(*next, options.parse);
    if (!next || next_parsed.error) {
      // Find the fixes that break the file on their own.
      for (std::size_t k = 0; k < applied_idx.size(); ++k) {
        const auto alone = edits::apply_fixes(cur->text(), std::span(&fixes[applied_idx[k]], 1));
        auto src = reparse_source(*cur, alone.text);
        if (!src || parse_module(*src, options.parse).error) out.culprits.push_back(this_round[k]);
      }
      if (out.culprits.empty()) out.culprits = this_round;
      if (next)
        out.syntax_error = next_parsed.error;
      else
        out.syntax_error = SyntaxError{"SyntaxError", "fixed text is not valid source"};
      out.rounds = round;
      return revert(FixResult::Status::FixBrokeSyntax);
    }
    applied.insert(applied.end(), this_round.begin(), this_round.end());
    source_map = edits::SourceMap::compose(source_map, res.map);
    out.rounds = round;
    cur = std::move(next);
    parsed = std::move(next_parsed);
  }
}

}  // namespace gm::lint

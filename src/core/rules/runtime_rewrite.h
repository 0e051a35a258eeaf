// Rewriting to the runtime: the `_graphmend_rt` import a fix adds, calls
// found in regions, arguments whose reads are deferred or formatted lazily,
// and attaching the fix (deferred prints/logging/warnings, traps, where
// calls all go through graphmend.runtime; see docs/runtime.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ast/tree.h"
#include "edits/edit.h"
#include "lint/rule.h"
#include "rules/predication.h"
#include "semantic/model.h"

namespace gm::rules::runtime_rewrite {

// The alias every mended file uses: `import graphmend.runtime as _graphmend_rt`.
inline constexpr std::string_view kRuntimeAlias = "_graphmend_rt";
inline constexpr std::string_view kRuntimeModule = "graphmend.runtime";

// Calls f(call) for every Call node evaluated inside a compiled region.
// Nothing when the context has no semantic model.
void for_each_region_call(const lint::RuleContext& ctx,
                          const std::function<void(ast::NodeId call)>& f);

// Non-empty (a declined_reason) when `_graphmend_rt` is bound in the file to
// anything other than `import graphmend.runtime as _graphmend_rt`.
std::string runtime_alias_clash(const sema::Model& model);

// The import edit (nullopt when the file already has it).
std::optional<edits::Edit> runtime_import(const lint::RuleContext& ctx);

// The first offset in [i, stop) that is not whitespace, a comment or a line
// continuation (nor a `)` when `closing_parens`); `stop` if none.
std::uint32_t skip_blank(std::string_view text, std::uint32_t i, std::uint32_t stop,
                         bool closing_parens);

// Offset of the `(` that opens `call`'s argument list (after its callee,
// skipping whitespace, comments and line continuations); nullopt if the next
// significant character is not `(` (e.g. a parenthesised callee).
std::optional<std::uint32_t> open_paren(const lint::RuleContext& ctx, ast::NodeId call);

// The keyword node of `call` named `name`, or NodeId{}.
ast::NodeId keyword(const ast::Tree& tree, ast::NodeId call, std::string_view name);
// Whether `call` has a `**mapping` argument.
bool has_double_star(const ast::Tree& tree, ast::NodeId call);
// The value of a keyword is the literal False or None (or 0).
bool is_falsy_literal(const lint::RuleContext& ctx, ast::NodeId value);

// Deferred tensor reads. When `arg` (an argument a deferred call formats)
// reads tensor data, the edit that lets the runtime snapshot it and format it
// after the graph (docs/runtime.md, "Values read from tensors"):
//   t.item()                    -> _graphmend_rt.item(t)
//   int(t) / float(t) / bool(t) -> _graphmend_rt.item(t, int) / ...
//   f"a={t.item():.3f} {h!r}"   -> _graphmend_rt.fmt("a={:.3f} {!r}", _graphmend_rt.item(t), h)
//   "a={} {}".format(t, n)      -> _graphmend_rt.fmt("a={} {}", t, n)
//   "a=%.3f" % t.item()         -> _graphmend_rt.fmt_percent("a=%.3f", _graphmend_rt.item(t))
// Every expression is still evaluated once, at the call, in the original
// order. nullopt when `arg` is none of these forms, or nothing in it could
// be a tensor. An f-string with a field in its format spec (`{x:{w}}`) is
// left alone (`why_not` says so when given).
std::optional<edits::Edit> defer_reads(const lint::RuleContext& ctx, ast::NodeId arg,
                                       std::string* why_not = nullptr);
// The same rewritten argument as a Doc (the runtime call with its arguments),
// for fit_call to lay out.
std::optional<predication::Doc> deferred_doc(const lint::RuleContext& ctx, ast::NodeId arg);

// The edits of a call rewritten in place: its callee replaced by `callee`,
// `leading` arguments put before the original ones, and the arguments in
// `rewritten` replaced by their Docs, as the point edits `edits` write it.
// Those edits when the mended line fits the file's longest line
// (predication::wrap_of); else, for a one-line call that is a statement of
// its own, one edit writing the whole call the way black splits calls (all
// arguments on one indented line, else one per line), so a deferred call
// reads as if its author had wrapped it.
std::vector<edits::Edit> fit_call(
    const lint::RuleContext& ctx, ast::NodeId call, std::string callee,
    std::vector<predication::Doc> leading,
    const std::vector<std::pair<ast::NodeId, predication::Doc>>& rewritten,
    std::vector<edits::Edit> edits);

// A trap's exception argument built by formatting (an f-string with
// placeholders, `"...".format(a, b)`, `"..." % v`), as the runtime call that
// formats it only when the trap raises:
//   f"got {x.shape}, {n}"  -> _graphmend_rt.message("got {}, {}", x.shape, n)
//   "got %d" % n           -> _graphmend_rt.message_percent("got %d", n)
//   _graphmend_rt.fmt("t={}", _graphmend_rt.item(t))
//                          -> _graphmend_rt.message("t={}", _graphmend_rt.item(t))
// The value expressions are still evaluated at the call, now also when the
// check passes: they are appended to `values` for the caller to prove pure
// and total. nullopt for any other form, or when a value reads tensor data
// (`.item()`, `float(t)`: a read on every call) other than through the
// runtime's `item` that a `fmt` already holds.
struct FormatCall {
  std::string head;               // `_graphmend_rt.message(`
  std::vector<std::string> args;  // the template, then the values
  std::string text() const;       // head + args joined + `)`
};
std::optional<FormatCall> lazy_message(const lint::RuleContext& ctx, ast::NodeId arg,
                                       std::vector<ast::NodeId>& values);

// Builds the fix (safe, or unsafe when `unsafe`) from `edits` plus the
// import; sets declined_reason instead when the alias clashes.
void attach_fix(const lint::RuleContext& ctx, lint::Diagnostic& d, std::string description,
                std::vector<edits::Edit> edits, bool unsafe = false);

}  // namespace gm::rules::runtime_rewrite

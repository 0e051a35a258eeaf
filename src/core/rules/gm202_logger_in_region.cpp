// GM202: logger calls inside a compiled region ->
// `_graphmend_rt.log(logger, "method", ...)`.
#include <array>

#include "rules/rules.h"
#include "rules/runtime_rewrite.h"

namespace gm::rules {
namespace {

using ast::NodeId;
using ast::NodeKind;

constexpr std::string_view kDoc = R"md(# GM202 logger-call-in-compiled-region

## What it detects
A logging call evaluated inside a compiled region (the `forward` of an
`nn.Module` subclass, a `torch.compile`d function, or a function they call):

- `logger.debug/info/warning/warn/error/critical/fatal/log/exception(...)`
  and transformers' `logger.warning_once/info_once(...)`, where `logger` is
  proven a logger (bound to `logging.getLogger(...)`, `logging.Logger(...)` or
  transformers' `logging.get_logger(...)`);
- the module-level functions `logging.debug/info/warning/warn/error/critical/
  fatal/log/exception(...)` called through the `logging` module.

## Why Dynamo breaks there
A logging call is a Python side effect (handlers, I/O, global state) Dynamo
cannot put in a graph: it breaks the graph at the call and runs it eagerly.

## The rewrite
The callee becomes `_graphmend_rt.log` and the receiver and the method name
are passed first; the arguments are untouched, and the runtime import is
added once:

    logger.warning("x %s", x)   ->   _graphmend_rt.log(logger, "warning", "x %s", x)
    logger.log(lvl, "m")        ->   _graphmend_rt.log(logger, "log", lvl, "m")
    logging.info("m")           ->   _graphmend_rt.log(logging, "info", "m")

Eagerly the runtime calls the same method at once (with `stacklevel` offset
so records name the original call site); under compilation it records the
call and emits it after the graph, in order, as a record with the original
call's pathname, lineno and funcName (docs/runtime.md).

The message and its %-arguments that read tensor data are deferred as in
GM201: `logger.info("loss %.3f", loss.item())` ->
`_graphmend_rt.log(logger, "info", "loss %.3f", _graphmend_rt.item(loss))`
(the record's `args` hold the same number), f-strings and `str.format`
become `_graphmend_rt.fmt(...)`, a tensor argument prints as the original.

## When it declines
- `exception(...)`, or `exc_info=` / `stack_info=` that is not literally
  False/None: the deferred record would be emitted when no exception is being
  handled and from another stack (docs/runtime.md: not guaranteed).
- `**kwargs` in the call: it may carry `exc_info=`.
- The receiver is itself a call (`logging.getLogger("x").info(...)`): Dynamo
  breaks on `getLogger` too (measured on torch 2.13), so the rewrite alone
  would not remove the break; bind the logger to a module global first.
- The `(` of the call does not follow the callee directly (a parenthesised
  callee), so the receiver cannot be inserted as the first argument.
- `_graphmend_rt` is already bound to something else in the file.

Known gap: for the module-level `logging.*` functions the eager record names
the runtime's frame (the runtime only offsets `stacklevel` for Logger and
LoggerAdapter receivers); text, level and order are the same.

## Example
Before:

    logger = logging.getLogger(__name__)

    class M(nn.Module):
        def forward(self, x):
            logger.warning("shape %s", x.shape)
            return x + 1

After:

    import graphmend.runtime as _graphmend_rt

    logger = logging.getLogger(__name__)

    class M(nn.Module):
        def forward(self, x):
            _graphmend_rt.log(logger, "warning", "shape %s", x.shape)
            return x + 1
)md";

constexpr std::array<std::string_view, 11> kLoggerMethods = {
    "debug", "info", "warning",   "warn",         "error",    "critical",
    "fatal", "log",  "exception", "warning_once", "info_once"};
constexpr std::array<std::string_view, 9> kModuleFunctions = {
    "debug", "info", "warning", "warn", "error", "critical", "fatal", "log", "exception"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& a, std::string_view s) {
  for (auto x : a)
    if (x == s) return true;
  return false;
}

class LoggerInRegion final : public lint::Rule {
 public:
  std::string_view code() const override { return "GM202"; }
  std::string_view name() const override { return "logger-call-in-compiled-region"; }
  std::string_view summary() const override {
    return "logging call (`logger.info`, `logging.warning`, ...) inside a compiled region";
  }
  std::string_view documentation() const override { return kDoc; }

  void check(const lint::RuleContext& ctx, lint::DiagnosticSink& sink) const override {
    const auto& tree = ctx.tree();
    const sema::Model* model = ctx.model();
    runtime_rewrite::for_each_region_call(ctx, [&](NodeId call) {
      const NodeId func = tree.child(call, GM_F(Call, func));
      if (tree.kind(func) != NodeKind::Attribute) return;
      const NodeId recv = tree.child(func, GM_F(Attribute, value));
      const std::string_view method = tree.text(tree.field(func, GM_F(Attribute, attr)));
      bool match = false;
      if (contains(kLoggerMethods, method) && model->is_logger(recv)) {
        match = true;
      } else if (contains(kModuleFunctions, method)) {
        const auto rq = model->qualified_name(recv);
        match = rq && *rq == "logging";
      }
      if (!match) return;
      auto& d = sink.report(
          tree.at(call).begin, tree.at(call).end,
          "`" + std::string(ctx.text_of(func)) + "` in a compiled region breaks the graph");
      d.why =
          "a logging call is a Python side effect Dynamo cannot put in a graph: it breaks the "
          "graph and runs the call eagerly";
      if (method == "exception") {
        d.declined_reason =
            "`exception()` logs the exception being handled, which a deferred record cannot see";
        return;
      }
      for (std::string_view kw : {std::string_view("exc_info"), std::string_view("stack_info")}) {
        if (NodeId k = runtime_rewrite::keyword(tree, call, kw)) {
          if (!runtime_rewrite::is_falsy_literal(ctx, tree.child(k, GM_F(keyword, value)))) {
            d.declined_reason =
                "`" + std::string(kw) + "=` would describe the drain's context, not the call's";
            return;
          }
        }
      }
      if (tree.kind(recv) == NodeKind::Call) {
        d.declined_reason =
            "the logger is created by a call in the region (Dynamo breaks on "
            "`getLogger` itself): bind it to a module global first";
        return;
      }
      if (runtime_rewrite::has_double_star(tree, call)) {
        d.declined_reason = "`**kwargs` may pass `exc_info=`";
        return;
      }
      const auto paren = runtime_rewrite::open_paren(ctx, call);
      if (!paren) {
        d.declined_reason = "the call's `(` does not follow the callee (parenthesised callee)";
        return;
      }
      const bool has_args = !tree.children(call, GM_F(Call, args)).empty() ||
                            !tree.children(call, GM_F(Call, keywords)).empty();
      std::string head = std::string(ctx.text_of(recv)) + ", " + ctx.quote(method);
      if (has_args) {
        head += ",";
        const char next = ctx.text()[*paren + 1];
        if (next != ' ' && next != '\t' && next != '\r' && next != '\n') head += " ";
      }
      const std::string callee = std::string(runtime_rewrite::kRuntimeAlias) + ".log";
      std::vector<edits::Edit> edits{
          edits::Edit::replace(tree.at(func).begin, tree.at(func).end, callee),
          edits::Edit::insert(*paren + 1, std::move(head))};
      std::vector<predication::Doc> leading{predication::source_doc(ctx, recv),
                                            predication::Doc::atom(ctx.quote(method))};
      std::vector<std::pair<NodeId, predication::Doc>> rewritten;
      const auto args = tree.children(call, GM_F(Call, args));
      // The message and its %-arguments (after `log`'s level).
      for (std::size_t i = method == "log" ? 1 : 0; i < args.size(); ++i)
        if (auto e = runtime_rewrite::defer_reads(ctx, args[i])) {
          edits.push_back(std::move(*e));
          rewritten.emplace_back(args[i], *runtime_rewrite::deferred_doc(ctx, args[i]));
        }
      runtime_rewrite::attach_fix(ctx, d, "Defer the logging call with `_graphmend_rt.log`",
                                  runtime_rewrite::fit_call(ctx, call, callee, std::move(leading),
                                                            rewritten, std::move(edits)));
    });
  }
};

}  // namespace

const lint::Rule& gm202_logger_in_region() {
  static const LoggerInRegion rule;
  return rule;
}

}  // namespace gm::rules

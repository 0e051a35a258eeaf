// The Python extension: a thin door into the C++ core. Work happens with the
// GIL released so callers can parse files on several threads.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <string>
#include <utility>
#include <variant>

#include "ast/dump.h"
#include "parser/parse.h"
#include "syntax/source.h"

namespace nb = nanobind;

namespace {

// (ok, text, error_kind, line, col): on success text is the dump; on failure
// text is the message.
using DumpResult = std::tuple<bool, std::string, std::string, int, int>;

DumpResult dump_ast(nb::bytes data, int minor) {
  std::string bytes(data.c_str(), data.size());
  nb::gil_scoped_release release;
  auto decoded = gm::Source::decode(std::move(bytes));
  if (auto* err = std::get_if<gm::SyntaxError>(&decoded))
    return {false, err->message, err->kind, static_cast<int>(err->line),
            static_cast<int>(err->col)};
  const auto& source = std::get<gm::Source>(decoded);
  gm::ParseOptions options;
  options.version = {3, minor};
  auto result = gm::parse_module(source, options);
  if (result.error)
    return {false, result.error->message, result.error->kind,
            static_cast<int>(result.error->line),
            static_cast<int>(result.error->col)};
  gm::ast::DumpOptions dump_options;
  dump_options.minor = minor;
  return {true, gm::ast::dump(result.tree, result.tree.root(), dump_options), "", 0, 0};
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "graphmend's C++ core";
  m.def("dump_ast", &dump_ast, nb::arg("data"), nb::arg("minor"),
        "Parse source bytes as CPython 3.<minor> would and return "
        "(ok, dump_or_message, error_kind, line, col).");
}

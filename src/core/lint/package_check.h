// Checking the files of a package together: the package analysis
// (semantic/package.h) and, per file, the rules under the regions it gives,
// in one call that reads each file's bytes once.
//
// What each file gets is exactly what check_source gives it alone with
// AnalyzeOptions::extra_roots set to its package roots, so a file's
// diagnostics depend on the others only through those names. The rules
// parse the file again rather than keep its tree and model from the summary:
// kept, they cost about twenty times the source in memory, and measured over
// transformers that made the whole run slower, not faster.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lint/engine.h"
#include "lint/selection.h"
#include "parser/parse.h"
#include "syntax/source.h"
#include "syntax/syntax_error.h"

namespace gm::lint {

struct PackageFile {
  std::string module;       // absolute dotted name
  bool is_package = false;  // a package's __init__.py
  // decoded per PEP 263 (BOM, coding cookie, UTF-8); must outlive the call
  std::string_view bytes;
  // Set: the rules run over this file too, with this selection.
  std::optional<RuleSelection> check;
};

struct PackageFileResult {
  // Functions of this file that compiled code elsewhere in the package
  // reaches beyond its own regions (sema::package_roots).
  std::vector<std::string> roots;
  // Whether the file holds any compiled region, its own or one from
  // `roots`; unset when it does not decode or parse.
  std::optional<bool> regions;
  std::optional<SyntaxError> decode_error;  // the bytes do not decode
};

// Called for each file with `check` set whose bytes decode, on the thread
// that checked it (several at once, each with its own index): the decoded
// file and what check_source gives it with its roots as extra roots (empty,
// without running a rule, for a file with no region and no `graphmend`
// comment: every rule looks only inside regions).
using OnChecked = std::function<void(std::size_t index, const Source&, CheckResult)>;

struct PackageOptions {
  ParseOptions parse;
  int jobs = 1;              // threads
  bool include_own = false;  // roots: every function compiled code reaches
};

std::vector<PackageFileResult> check_package(const std::vector<PackageFile>& files,
                                             const PackageOptions& options,
                                             const OnChecked& on_checked = {});

}  // namespace gm::lint

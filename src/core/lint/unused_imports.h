// Imports the applied fixes left unused (GM203 rewrites the only
// `warnings.warn` of a module to `_graphmend_rt.warn`: `import warnings` is
// then dead code a linter flags as F401).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "edits/edit.h"
#include "edits/helpers.h"
#include "parser/parse.h"

namespace gm::lint {

// Deletions of the module-level `import X` statements (one plain name, no
// dots, no `as`) and `from M import a [as b]` statements (one name, not `*`,
// not `__future__`) whose name the original module read (`original_names`)
// and `current` (the same module
// after the fixes) mentions nowhere, provided nothing else could still reach
// the module through that name: no `__all__`, no module `__getattr__`, no
// `globals`/`locals`/`vars`/`eval`/`exec`/`__import__`, no string containing
// `X.` (a string annotation or a doctest), no other binding of `X`. Anything
// else is kept.
std::vector<edits::Edit> imports_made_unused(const std::set<std::string>& original_names,
                                             const edits::FileView& current);

// The names (Name nodes) of a tree: `original_names` above.
std::set<std::string> names_in(const ast::Tree& tree);

}  // namespace gm::lint

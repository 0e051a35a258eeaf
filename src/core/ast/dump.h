// ast.dump(tree, include_attributes=True) exactly as CPython 3.<minor> prints
// it: field order, omitted None/empty fields (3.9+/3.13+), 3.8's
// Index/ExtSlice and kind=None, which nodes carry positions in which version,
// and the repr of every constant.
#pragma once

#include <string>

#include "ast/tree.h"

namespace gm::ast {

struct DumpOptions {
  int minor = 11;                 // CPython 3.<minor>
  bool include_attributes = true;
};

std::string dump(const Tree& tree, NodeId node, const DumpOptions& options);

}  // namespace gm::ast

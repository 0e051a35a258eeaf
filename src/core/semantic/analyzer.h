// Internal: the passes that build a Model (scopes.cpp, regions.cpp,
// facts.cpp) and small helpers shared by them.
#pragma once

#include <string_view>

#include "semantic/model.h"
#include "semantic/package.h"

namespace gm::sema {

class Analyzer {
 public:
  static void build_scopes(Model& m);   // pass 1: tree walk, scopes, bindings
  static void build_classes(Model& m);  // nn.Module-ness, self.<attr> facts
  // compiled regions; extra_roots: AnalyzeOptions::extra_roots
  static void build_regions(Model& m, std::span<const std::string> extra_roots);
  static void add_library_regions(Model& m);  // AnalyzeOptions::all_functions
  static void index_region_nodes(Model& m);   // Model::region_nodes
  static void build_facts(Model& m);    // tensor facts (fixpoint)
  // package.cpp: the package analysis' view of one model
  static ModuleSummary summarize(const Model& m, std::string module, bool is_package);
  static std::string definition_path(const Model& m, NodeId def);
};

namespace detail {

using ast::NodeKind;

inline bool is_function_def(NodeKind k) {
  return k == NodeKind::FunctionDef || k == NodeKind::AsyncFunctionDef;
}
inline bool is_comprehension_expr(NodeKind k) {
  return k == NodeKind::ListComp || k == NodeKind::SetComp || k == NodeKind::DictComp ||
         k == NodeKind::GeneratorExp;
}
bool starts_with(std::string_view s, std::string_view p);
bool ends_with(std::string_view s, std::string_view p);
// Sorted-table membership.
bool is_python_builtin(std::string_view name);

}  // namespace detail
}  // namespace gm::sema

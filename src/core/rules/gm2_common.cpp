#include "rules/gm2_common.h"

#include "edits/helpers.h"
#include "edits/tree_query.h"

namespace gm::rules::gm2 {

using ast::NodeId;
using ast::NodeKind;

void for_each_region_call(const lint::RuleContext& ctx,
                          const std::function<void(NodeId call)>& f) {
  const sema::Model* model = ctx.model();
  if (model == nullptr) return;
  const auto& tree = ctx.tree();
  ast::preorder(tree, tree.root(), [&](NodeId n) {
    if (tree.kind(n) == NodeKind::Call && model->is_in_region(n)) f(n);
  });
}

std::string runtime_alias_clash(const sema::Model& model) {
  for (const auto& b : model.bindings()) {
    if (b.name != kRuntimeAlias) continue;
    if (b.kind == sema::BindingKind::Import && b.qualified == kRuntimeModule) continue;
    return "`_graphmend_rt` is already bound to something else in this file";
  }
  return {};
}

std::optional<edits::Edit> runtime_import(const lint::RuleContext& ctx) {
  return ctx.insert_import(
      edits::ImportSpec::import_module(std::string(kRuntimeModule), std::string(kRuntimeAlias)));
}

std::optional<std::uint32_t> open_paren(const lint::RuleContext& ctx, NodeId call) {
  const auto& tree = ctx.tree();
  const std::string_view text = ctx.text();
  std::uint32_t i = tree.at(tree.child(call, GM_F(Call, func))).end;
  const std::uint32_t stop = tree.at(call).end;
  while (i < stop) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\\') {
      ++i;
    } else if (c == '#') {
      while (i < stop && text[i] != '\n' && text[i] != '\r') ++i;
    } else {
      break;
    }
  }
  if (i < stop && text[i] == '(') return i;
  return std::nullopt;
}

NodeId keyword(const ast::Tree& tree, NodeId call, std::string_view name) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords))) {
    const auto f = tree.field(k, GM_F(keyword, arg));
    if (!ast::Tree::is_none_string(f) && tree.text(f) == name) return k;
  }
  return {};
}

bool has_double_star(const ast::Tree& tree, NodeId call) {
  for (NodeId k : tree.children(call, GM_F(Call, keywords)))
    if (ast::Tree::is_none_string(tree.field(k, GM_F(keyword, arg)))) return true;
  return false;
}

bool is_falsy_literal(const lint::RuleContext& ctx, NodeId value) {
  if (ctx.tree().kind(value) != NodeKind::Constant) return false;
  const auto t = ctx.text_of(value);
  return t == "False" || t == "None" || t == "0";
}

namespace {
// The same for every fix of a file: computed once per file (a scan of every
// binding, and of the imports), not once per fix.
struct RuntimeImportMemo {
  bool done = false;
  std::string clash;
  std::optional<edits::Edit> import;
};
const RuntimeImportMemo& runtime_import_memo(const lint::RuleContext& ctx) {
  auto& m = ctx.scratch<RuntimeImportMemo>();
  if (!m.done) {
    m.clash = runtime_alias_clash(*ctx.model());
    if (m.clash.empty()) m.import = runtime_import(ctx);
    m.done = true;
  }
  return m;
}
}  // namespace

void attach_fix(const lint::RuleContext& ctx, lint::Diagnostic& d, std::string description,
                std::vector<edits::Edit> edits) {
  const RuntimeImportMemo& memo = runtime_import_memo(ctx);
  if (!memo.clash.empty()) {
    d.declined_reason = memo.clash;
    return;
  }
  if (memo.import) edits.push_back(*memo.import);
  d.fix = edits::Fix::safe(std::move(description), std::move(edits));
}

}  // namespace gm::rules::gm2

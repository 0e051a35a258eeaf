#include "lint/rule.h"

#include "semantic/model.h"

namespace gm::lint {

RuleContext::RuleContext(const Source& source, const ParseResult& parsed,
                         const ParseOptions& options, const sema::Model* model)
    : source_(source),
      parsed_(parsed),
      options_(options),
      model_(model),
      style_(edits::Stylist::detect(source.text(), parsed.lexed)),
      file_{source.text(), parsed.tree, parsed.lexed, style_} {}

edits::Edit RuleContext::delete_statement(ast::NodeId stmt) const {
  return edits::delete_statement(file_, stmt, model_ ? model_->parent(stmt) : ast::NodeId{});
}

}  // namespace gm::lint

// Classes (nn.Module-ness, what self.<attr> holds), static call resolution
// and compiled regions.
#include <algorithm>
#include <optional>
#include <span>
#include <unordered_set>

#include "ast/visit.h"
#include "semantic/analyzer.h"
#include "semantic/tables.h"

namespace gm::sema {

using ast::NodeKind;
using ast::Tree;
using namespace detail;

namespace {

ModuleConfidence base_confidence(std::string_view q) {
  if (is_torch_nn_module_class(q)) return ModuleConfidence::Known;
  // Known library base classes that are nn.Modules.
  const bool lib = starts_with(q, "transformers.") || starts_with(q, ".");
  if (lib &&
      (ends_with(q, "modeling_utils.PreTrainedModel") || q == "transformers.PreTrainedModel" ||
       ends_with(q, "modeling_layers.GradientCheckpointingLayer") ||
       q == "transformers.GradientCheckpointingLayer"))
    return ModuleConfidence::Known;
  const auto dot = q.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? q : q.substr(dot + 1);
  if (starts_with(q, "builtins.")) return ModuleConfidence::None;
  if (ends_with(last, "Module") || ends_with(last, "Layer") || ends_with(last, "PreTrainedModel"))
    return ModuleConfidence::Name;
  return ModuleConfidence::None;
}

}  // namespace

std::uint32_t Model::class_of_def(NodeId class_def) const {
  auto it = class_index_.find(class_def.index);
  return it == class_index_.end() ? kNone : it->second;
}

std::uint32_t Model::method_class(NodeId fn) const {
  if (!fn || fn.index >= parent_.size()) return kNone;
  const NodeId p{parent_[fn.index]};
  if (!p || tree_->kind(p) != NodeKind::ClassDef || slot_[fn.index] != GM_F(ClassDef, body))
    return kNone;
  return class_of_def(p);
}

// The class whose instance `expr` is when it is the `self` parameter of a
// method (also seen from closures inside the method).
std::uint32_t Model::self_class(NodeId expr) const {
  if (!expr || tree_->kind(expr) != NodeKind::Name) return kNone;
  const Binding* b = resolve(expr);
  if (!b || b->kind != BindingKind::Parameter) return kNone;
  const NodeId fn = scopes_[b->scope].node;
  if (!fn || !is_function_def(tree_->kind(fn))) return kNone;
  const std::uint32_t cls = method_class(fn);
  if (cls == kNone) return kNone;
  for (NodeId d : tree_->children(fn, GM_F(FunctionDef, decorator_list))) {
    if (tree_->kind(d) != NodeKind::Name) continue;
    const auto n = name_text(d);
    if (n == "staticmethod" || n == "classmethod") return kNone;
  }
  const NodeId args = tree_->child(fn, GM_F(FunctionDef, args));
  auto po = tree_->children(args, GM_F(arguments, posonlyargs));
  auto pa = tree_->children(args, GM_F(arguments, args));
  const NodeId first = !po.empty() ? po[0] : (!pa.empty() ? pa[0] : NodeId{});
  return first == b->node ? cls : kNone;
}

// A method `name` of `cls` or its in-file bases (depth-first, left to right).
NodeId Model::find_method(std::uint32_t cls, std::string_view name, bool skip_self) const {
  // What class c itself binds `name` to: nullopt when nothing (or a bare
  // annotation), so the search goes on to its bases; else its method, or
  // none when another binding hides the bases' methods.
  auto own = [&](std::uint32_t c) -> std::optional<NodeId> {
    const Symbol* sym = find_symbol(classes_[c].scope, name);
    if (!sym) return std::nullopt;
    const Binding& b = bindings_[sym->last];
    if (b.kind == BindingKind::FunctionDef) return b.node;
    if (b.kind != BindingKind::Declaration) return NodeId{};
    return std::nullopt;
  };
  // Most classes have at most one in-file base: follow that chain without
  // the search's two vectors. A cycle back to `cls` ends it as the search
  // does (a seen class is not looked at again); one elsewhere only repeats
  // lookups that found nothing, until the step bound. At a class with two
  // bases the search below starts over.
  {
    std::uint32_t c = cls;
    bool first = true;
    for (std::size_t step = 0;; ++step) {
      if (step > classes_.size() || (!first && c == cls)) return {};
      if (!(first && skip_self))
        if (const auto found = own(c)) return *found;
      first = false;
      const auto& bases = classes_[c].bases;
      if (bases.empty()) return {};
      if (bases.size() > 1) break;
      c = bases[0];
    }
  }
  std::vector<std::uint32_t> stack{cls};
  std::vector<std::uint32_t> seen;
  bool first = true;
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    if (!(first && skip_self))
      if (const auto found = own(c)) return *found;
    first = false;
    const auto& bases = classes_[c].bases;
    for (auto it = bases.rbegin(); it != bases.rend(); ++it) stack.push_back(*it);
  }
  return {};
}

NodeId Model::function_of_binding(const Binding* b, int depth) const {
  if (!b || depth > 6) return {};
  if (b->kind == BindingKind::FunctionDef) return b->node;
  if ((b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign) && b->value &&
      tree_->kind(b->value) == NodeKind::Name)
    return function_of_binding(resolve(b->value), depth + 1);
  return {};
}

NodeId Model::function_referenced(NodeId e) const {
  switch (tree_->kind(e)) {
    case NodeKind::Name: return function_of_binding(resolve(e), 0);
    case NodeKind::Attribute: {
      const std::uint32_t c = self_class(tree_->child(e, GM_F(Attribute, value)));
      if (c == kNone) return {};
      return find_method(c, tree_->text(tree_->field(e, GM_F(Attribute, attr))), false);
    }
    default: return {};
  }
}

void Model::stored_callables(std::uint32_t cls, std::string_view attr,
                             std::vector<NodeId>& out) const {
  const ast::Tree& t = *tree_;
  auto leaves = [&](auto& self, NodeId e, int depth) -> void {
    if (!e || depth > 8) return;
    switch (t.kind(e)) {
      case NodeKind::Name:
      case NodeKind::Attribute: out.push_back(e); return;
      case NodeKind::IfExp:
        self(self, t.child(e, GM_F(IfExp, body)), depth + 1);
        self(self, t.child(e, GM_F(IfExp, orelse)), depth + 1);
        return;
      case NodeKind::BoolOp:
        for (NodeId v : t.children(e, GM_F(BoolOp, values))) self(self, v, depth + 1);
        return;
      case NodeKind::NamedExpr: self(self, t.child(e, GM_F(NamedExpr, value)), depth + 1); return;
      case NodeKind::Call: {
        const auto args = t.children(e, GM_F(Call, args));
        const auto q = qualified_name(t.child(e, GM_F(Call, func)));
        if (q && *q == "functools.partial" && !args.empty()) self(self, args[0], depth + 1);
        return;
      }
      default: return;
    }
  };
  for_each_attr_of(cls, attr, [&](std::uint32_t i) {
    const AttrInfo& a = attrs_[i];
    if (!a.container && !a.tensor && a.value_class == kNone) leaves(leaves, a.value, 0);
  });
}

void Model::instance_classes(NodeId expr, std::vector<std::uint32_t>& out, bool* nn_layer,
                             int depth) const {
  if (!expr || depth > 6) return;
  auto add = [&](std::uint32_t c) {
    if (c != kNone && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  auto attr_of = [&](NodeId self_expr, std::string_view attr, bool want_container) {
    const std::uint32_t c = self_class(self_expr);
    if (c == kNone) return;
    for_each_attr_of(c, attr, [&](std::uint32_t i) {
      const AttrInfo& a = attrs_[i];
      if (a.container != want_container) return;
      add(a.value_class);
      if (a.nn_layer && nn_layer) *nn_layer = true;
    });
  };
  switch (tree_->kind(expr)) {
    case NodeKind::Call: {
      const NodeId f = tree_->child(expr, GM_F(Call, func));
      if (tree_->kind(f) == NodeKind::Name) {
        const Binding* b = resolve(f);
        if (b && b->kind == BindingKind::ClassDef) add(class_of_def(b->node));
      }
      if (nn_layer) {
        const auto q = qualified_name(f);
        if (q && nn_layer_returns_tensor(*q)) *nn_layer = true;
      }
      return;
    }
    case NodeKind::Attribute: {
      const NodeId v = tree_->child(expr, GM_F(Attribute, value));
      attr_of(v, tree_->text(tree_->field(expr, GM_F(Attribute, attr))), false);
      return;
    }
    case NodeKind::Subscript: {
      const NodeId v = tree_->child(expr, GM_F(Subscript, value));
      if (tree_->kind(v) == NodeKind::Attribute)
        attr_of(tree_->child(v, GM_F(Attribute, value)),
                tree_->text(tree_->field(v, GM_F(Attribute, attr))), true);
      return;
    }
    case NodeKind::Name: {
      const Binding* b = resolve(expr);
      if (!b) return;
      if (b->value && (b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign ||
                       b->kind == BindingKind::NamedExpr)) {
        instance_classes(b->value, out, nn_layer, depth + 1);
        return;
      }
      if ((b->kind == BindingKind::For || b->kind == BindingKind::Comprehension) && b->source) {
        NodeId src = b->source;
        const NodeId p{parent_[b->node.index]};
        if (p == b->binder || (p && tree_->kind(p) == NodeKind::comprehension)) {
          // for layer in self.layers
        } else if (p && tree_->kind(p) == NodeKind::Tuple && tree_->kind(src) == NodeKind::Call) {
          // for i, layer in enumerate(self.layers) / zip(self.a, self.b)
          const auto q = qualified_name(tree_->child(src, GM_F(Call, func)));
          auto elts = tree_->children(p, GM_F(Tuple, elts));
          auto args = tree_->children(src, GM_F(Call, args));
          std::size_t idx = 0;
          while (idx < elts.size() && elts[idx] != b->node) ++idx;
          if (q && *q == "builtins.enumerate" && idx == 1 && !args.empty())
            src = args[0];
          else if (q && *q == "builtins.zip" && idx < args.size())
            src = args[idx];
          else
            return;
        } else {
          return;
        }
        // a slice of a ModuleList is a ModuleList: self.layers[:n]
        if (tree_->kind(src) == NodeKind::Subscript &&
            tree_->kind(tree_->child(src, GM_F(Subscript, slice))) == NodeKind::Slice)
          src = tree_->child(src, GM_F(Subscript, value));
        if (tree_->kind(src) == NodeKind::Attribute)
          attr_of(tree_->child(src, GM_F(Attribute, value)),
                  tree_->text(tree_->field(src, GM_F(Attribute, attr))), true);
      }
      return;
    }
    default: return;
  }
}

void Model::callees_impl(NodeId call, std::vector<NodeId>& out, std::vector<std::uint32_t>* classes,
                         bool* nn_layer) const {
  auto add = [&](NodeId f) {
    if (f && std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  const NodeId func = tree_->child(call, GM_F(Call, func));
  std::vector<std::uint32_t> inst;
  switch (tree_->kind(func)) {
    case NodeKind::Name: {
      const Binding* b = resolve(func);
      if (b) {
        // every binding of the name in its scope (may-call)
        for (const Binding* o : bindings_of(b->scope, b->name)) add(function_of_binding(o, 0));
      }
      instance_classes(func, inst, nn_layer, 0);
      break;
    }
    case NodeKind::Attribute: {
      const NodeId obj = tree_->child(func, GM_F(Attribute, value));
      const std::string_view m = tree_->text(tree_->field(func, GM_F(Attribute, attr)));
      const std::uint32_t sc = self_class(obj);
      if (sc != kNone) {
        const NodeId meth = find_method(sc, m, false);
        if (meth) {
          add(meth);
          break;
        }
        instance_classes(func, inst, nn_layer, 0);
        // `self.fn = helper` (or `a if c else b`, `partial(helper, ...)`)
        // in some method: calling self.fn calls helper.
        std::vector<NodeId> held;
        stored_callables(sc, m, held);
        for (NodeId e : held) add(function_referenced(e));
        break;
      }
      if (tree_->kind(obj) == NodeKind::Call) {
        const NodeId sf = tree_->child(obj, GM_F(Call, func));
        if (tree_->kind(sf) == NodeKind::Name && name_text(sf) == "super" && is_builtin(sf)) {
          // super().m(...): the enclosing method's class, bases only.
          const ScopeId s = node_scope_[call.index];
          const NodeId owner{s == kNone ? 0u : scope_owner_def_[s]};
          const std::uint32_t c = method_class(owner);
          if (c != kNone) add(find_method(c, m, true));
          break;
        }
      }
      if (tree_->kind(obj) == NodeKind::Name) {
        const Binding* b = resolve(obj);
        if (b && b->kind == BindingKind::ClassDef) {
          const std::uint32_t c = class_of_def(b->node);
          if (c != kNone) add(find_method(c, m, false));
          break;
        }
      }
      // obj is an instance of an in-file class: its method
      std::vector<std::uint32_t> objs;
      instance_classes(obj, objs, nullptr, 0);
      for (std::uint32_t c : objs) add(find_method(c, m, false));
      break;
    }
    default: instance_classes(func, inst, nn_layer, 0); break;
  }
  for (std::uint32_t c : inst) {
    add(find_method(c, "forward", false));
    if (classes) classes->push_back(c);
  }
}

std::vector<NodeId> Model::callees(NodeId call) const {
  std::vector<NodeId> out;
  if (!call || call.index >= parent_.size() || tree_->kind(call) != NodeKind::Call) return out;
  callees_impl(call, out, nullptr, nullptr);
  return out;
}

ModuleConfidence Model::module_confidence(NodeId class_def) const {
  const std::uint32_t c = class_of_def(class_def);
  return c == kNone ? ModuleConfidence::None : classes_[c].confidence;
}

bool Model::derives_from(NodeId cls, NodeId base) const {
  const std::uint32_t target = class_of_def(base);
  const std::uint32_t start = class_of_def(cls);
  if (target == kNone || start == kNone) return false;
  std::vector<std::uint32_t> stack(classes_[start].bases), seen;
  while (!stack.empty()) {
    const std::uint32_t c = stack.back();
    stack.pop_back();
    if (c == target) return true;
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    stack.insert(stack.end(), classes_[c].bases.begin(), classes_[c].bases.end());
  }
  return false;
}

const RegionFunction* Model::region_of(NodeId fn) const {
  auto it = region_index_.find(fn.index);
  return it == region_index_.end() ? nullptr : &regions_[it->second];
}

bool Model::is_in_region(NodeId node) const {
  if (!node || node.index >= node_scope_.size()) return false;
  const ScopeId s = node_scope_[node.index];
  if (s == kNone) return false;
  const std::uint32_t owner = scope_owner_def_[s];
  return owner != 0 && region_index_.count(owner) != 0;
}

// ------------------------------------------------------------------ passes

void Analyzer::build_classes(Model& m) {
  const Tree& t = *m.tree_;
  // Source order (reverse postorder would not be): walk bindings instead.
  for (const Binding& b : m.bindings_) {
    if (b.kind != BindingKind::ClassDef) continue;
    Model::ClassInfo ci;
    ci.node = b.node;
    ci.scope = m.opened_scope_[b.node.index];
    m.class_index_[b.node.index] = static_cast<std::uint32_t>(m.classes_.size());
    m.classes_.push_back(std::move(ci));
  }
  std::vector<ModuleConfidence> own(m.classes_.size(), ModuleConfidence::None);
  for (std::uint32_t c = 0; c < m.classes_.size(); ++c) {
    auto& ci = m.classes_[c];
    for (NodeId base : t.children(ci.node, GM_F(ClassDef, bases))) {
      if (t.kind(base) == NodeKind::Name) {
        const Binding* b = m.resolve(base);
        if (b && b->kind == BindingKind::ClassDef) {
          const std::uint32_t bc = m.class_of_def(b->node);
          if (bc != kNone && bc != c) ci.bases.push_back(bc);
          continue;
        }
      }
      const auto q = m.qualified_name(base);
      if (!q) {
        ci.unresolved_base = true;
        continue;
      }
      own[c] = std::max(own[c], base_confidence(*q));
    }
    ci.confidence = own[c];
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& ci : m.classes_)
      for (std::uint32_t b : ci.bases)
        if (m.classes_[b].confidence > ci.confidence) {
          ci.confidence = m.classes_[b].confidence;
          changed = true;
        }
  }

  // self.<attr> = ...  (any method of an in-file class)
  auto record = [&](NodeId target, NodeId value) {
    if (t.kind(target) != NodeKind::Attribute) return;
    const NodeId obj = t.child(target, GM_F(Attribute, value));
    const std::uint32_t c = m.self_class(obj);
    if (c == kNone) return;
    const std::string_view attr = t.text(t.field(target, GM_F(Attribute, attr)));
    Model::AttrInfo base{c, attr, kNone, false, false, false, value};
    if (value && t.kind(value) == NodeKind::Call) {
      const NodeId f = t.child(value, GM_F(Call, func));
      const auto q = m.qualified_name(f);
      auto args = t.children(value, GM_F(Call, args));
      if (q && (*q == "torch.nn.ModuleList" || *q == "torch.nn.Sequential" ||
                *q == "torch.nn.ModuleDict")) {
        std::vector<NodeId> elems;
        for (NodeId a : args) {
          switch (t.kind(a)) {
            case NodeKind::List:
            case NodeKind::Tuple:
              for (NodeId e : t.children(a, GM_F(List, elts))) elems.push_back(e);
              break;
            case NodeKind::ListComp:
            case NodeKind::GeneratorExp: elems.push_back(t.child(a, GM_F(ListComp, elt))); break;
            case NodeKind::Dict:
              for (NodeId e : t.children(a, GM_F(Dict, values))) elems.push_back(e);
              break;
            default: elems.push_back(a); break;
          }
        }
        for (NodeId e : elems) {
          Model::AttrInfo a = base;
          a.container = true;
          std::vector<std::uint32_t> cls;
          bool layer = false;
          m.instance_classes(e, cls, &layer, 0);
          a.nn_layer = layer;
          if (cls.empty()) m.add_attr(a);
          for (std::uint32_t k : cls) {
            a.value_class = k;
            m.add_attr(a);
          }
        }
        // Also as a callable (Sequential): the whole container.
        m.add_attr(base);
        return;
      }
      if (q && (*q == "torch.nn.Parameter" || *q == "torch.nn.parameter.Parameter" ||
                *q == "torch.nn.Buffer")) {
        base.tensor = true;
        m.add_attr(base);
        return;
      }
      std::vector<std::uint32_t> cls;
      bool layer = false;
      m.instance_classes(value, cls, &layer, 0);
      base.nn_layer = layer;
      if (cls.empty()) m.add_attr(base);
      for (std::uint32_t k : cls) {
        base.value_class = k;
        m.add_attr(base);
      }
      return;
    }
    m.add_attr(base);
  };
  for (NodeId n : m.postorder_) {
    switch (t.kind(n)) {
      case NodeKind::Attribute: {
        // Any store to self.<attr> (assignment, augmented, for/with targets,
        // unpacking): assigns_self_attr.
        const NodeId v = t.child(n, GM_F(Attribute, value));
        if (static_cast<NodeKind>(t.field(n, GM_F(Attribute, ctx)).a) == NodeKind::Store &&
            t.kind(v) == NodeKind::Name && t.text(t.field(v, GM_F(Name, id))) == "self")
          m.self_stores_.push_back(t.text(t.field(n, GM_F(Attribute, attr))));
        break;
      }
      case NodeKind::Assign:
        for (NodeId tg : t.children(n, GM_F(Assign, targets)))
          record(tg, t.child(n, GM_F(Assign, value)));
        break;
      case NodeKind::AnnAssign:
        if (t.child(n, GM_F(AnnAssign, value)))
          record(t.child(n, GM_F(AnnAssign, target)), t.child(n, GM_F(AnnAssign, value)));
        break;
      case NodeKind::Call: {
        // self.register_buffer("name", value)
        const NodeId f = t.child(n, GM_F(Call, func));
        if (t.kind(f) != NodeKind::Attribute) break;
        const std::string_view meth = t.text(t.field(f, GM_F(Attribute, attr)));
        auto args = t.children(n, GM_F(Call, args));
        if ((meth == "register_buffer" || meth == "register_parameter" || meth == "add_module") &&
            !args.empty() && t.kind(args[0]) == NodeKind::Constant) {
          const auto& name = t.constant_at(t.field(args[0], GM_F(Constant, value)));
          if (name.kind == ast::ConstantValue::Kind::Str)
            m.self_stores_.push_back(t.str(name.text));
        }
        if (meth != "register_buffer") break;
        if (args.size() < 2 || t.kind(args[0]) != NodeKind::Constant) break;
        const auto& cv = t.constant_at(t.field(args[0], GM_F(Constant, value)));
        if (cv.kind != ast::ConstantValue::Kind::Str) break;
        const std::uint32_t c = m.self_class(t.child(f, GM_F(Attribute, value)));
        if (c == kNone) break;
        Model::AttrInfo a{c, t.str(cv.text), kNone, false, false, false, args[1]};
        a.tensor = true;  // refined by the facts pass (None buffers)
        m.add_attr(a);
        break;
      }
      default: break;
    }
  }
  std::sort(m.self_stores_.begin(), m.self_stores_.end());
  m.self_stores_.erase(std::unique(m.self_stores_.begin(), m.self_stores_.end()),
                       m.self_stores_.end());
}

bool Model::assigns_self_attr(std::string_view attr) const {
  return std::binary_search(self_stores_.begin(), self_stores_.end(), attr);
}

std::vector<std::uint32_t> Model::with_in_file_bases(std::uint32_t cls) const {
  std::vector<std::uint32_t> owners{cls};
  for (std::size_t i = 0; i < owners.size() && i < 64; ++i)
    for (std::uint32_t b : classes_[owners[i]].bases)
      if (std::find(owners.begin(), owners.end(), b) == owners.end()) owners.push_back(b);
  return owners;
}

std::vector<std::uint32_t> Model::attrs_in(const std::vector<std::uint32_t>& owners,
                                           std::string_view attr) const {
  std::vector<std::uint32_t> out;
  const SymbolKey key = SymbolKey::of(0, attr);
  for (std::size_t k = 0; k < owners.size(); ++k) {
    if (std::find(owners.begin(), owners.begin() + k, owners[k]) != owners.begin() + k) continue;
    if (const auto* ids = attrs_by_class_.find(key.in(owners[k])))
      out.insert(out.end(), ids->begin(), ids->end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Analyzer::build_regions(Model& m, std::span<const std::string> extra_roots) {
  const Tree& t = *m.tree_;
  // Calls and nested defs per owning function: (owner, node) pairs in
  // postorder, then grouped by owner (stable: postorder within a group).
  std::vector<std::pair<std::uint32_t, NodeId>> calls, nested;
  std::vector<NodeId> compile_calls;
  for (NodeId n : m.postorder_) {
    const NodeKind k = t.kind(n);
    if (k != NodeKind::Call && !is_function_def(k)) continue;
    const ScopeId s = m.node_scope_[n.index];
    if (s == kNone) continue;
    const std::uint32_t owner = m.scope_owner_def_[s];
    if (k == NodeKind::Call) {
      if (owner) calls.emplace_back(owner, n);
      // `x.compile(...)` is torch.compile only when x is torch (the
      // attribute is checked first: most calls are not, and their
      // qualified names need not be built).
      const NodeId func = t.child(n, GM_F(Call, func));
      if (t.kind(func) == NodeKind::Attribute &&
          t.text(t.field(func, GM_F(Attribute, attr))) != "compile")
        continue;
      const auto q = m.qualified_name(func);
      if (q && (*q == "torch.compile")) compile_calls.push_back(n);
    } else if (owner) {
      nested.emplace_back(owner, n);
    }
  }
  auto by_owner = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(calls.begin(), calls.end(), by_owner);
  std::stable_sort(nested.begin(), nested.end(), by_owner);
  auto of_owner = [&](const std::vector<std::pair<std::uint32_t, NodeId>>& v, std::uint32_t f) {
    const auto r =
        std::equal_range(v.begin(), v.end(), std::pair<std::uint32_t, NodeId>{f, {}}, by_owner);
    return std::span(r.first, r.second);
  };
  std::vector<std::uint32_t> work;
  auto add = [&](NodeId fn, RegionReason why, NodeId via, NodeId site, ModuleConfidence conf) {
    if (!fn || m.region_index_.count(fn.index)) return;
    m.region_index_[fn.index] = static_cast<std::uint32_t>(m.regions_.size());
    m.regions_.push_back(RegionFunction{fn, why, via, site, conf});
    work.push_back(fn.index);
  };
  for (const auto& ci : m.classes_) {
    if (ci.confidence == ModuleConfidence::None) continue;
    const Model::Symbol* sym = m.find_symbol(ci.scope, "forward");
    if (!sym) continue;
    const Binding& b = m.bindings_[sym->last];
    if (b.kind == BindingKind::FunctionDef)
      add(b.node, RegionReason::ModuleForward, {}, ci.node, ci.confidence);
  }
  auto is_compile = [&](NodeId e) {
    const auto q = m.qualified_name(e);
    return q && (*q == "torch.compile" || *q == "torch._dynamo.optimize");
  };
  for (const Binding& b : m.bindings_) {
    if (b.kind != BindingKind::FunctionDef) continue;
    for (NodeId d : t.children(b.node, GM_F(FunctionDef, decorator_list))) {
      const NodeId e = t.kind(d) == NodeKind::Call ? t.child(d, GM_F(Call, func)) : d;
      if (is_compile(e))
        add(b.node, RegionReason::CompileDecorator, {}, d, ModuleConfidence::Known);
    }
  }
  for (NodeId c : compile_calls) {
    auto args = t.children(c, GM_F(Call, args));
    NodeId target = args.empty() ? NodeId{} : args[0];
    for (NodeId kw : t.children(c, GM_F(Call, keywords)))
      if (!Tree::is_none_string(t.field(kw, GM_F(keyword, arg))) &&
          t.text(t.field(kw, GM_F(keyword, arg))) == "model")
        target = t.child(kw, GM_F(keyword, value));
    if (!target) continue;
    if (t.kind(target) == NodeKind::Name)
      add(m.function_of_binding(m.resolve(target), 0), RegionReason::CompileCall, {}, c,
          ModuleConfidence::Known);
    std::vector<std::uint32_t> cls;
    m.instance_classes(target, cls, nullptr, 0);
    for (std::uint32_t k : cls)
      add(m.find_method(k, "forward", false), RegionReason::CompileCall, {}, c,
          ModuleConfidence::Known);
    if (t.kind(target) == NodeKind::Attribute) {
      // torch.compile(model.forward) / torch.compile(self.method)
      const NodeId obj = t.child(target, GM_F(Attribute, value));
      const auto attr = t.text(t.field(target, GM_F(Attribute, attr)));
      std::vector<std::uint32_t> oc;
      const std::uint32_t sc = m.self_class(obj);
      if (sc != kNone) oc.push_back(sc);
      m.instance_classes(obj, oc, nullptr, 0);
      for (std::uint32_t k : oc)
        add(m.find_method(k, attr, false), RegionReason::CompileCall, {}, c,
            ModuleConfidence::Known);
    }
  }
  if (!extra_roots.empty()) {
    const std::unordered_set<std::string_view> roots(extra_roots.begin(), extra_roots.end());
    for (const Binding& b : m.bindings_)
      if (b.kind == BindingKind::FunctionDef && roots.count(definition_path(m, b.node)))
        add(b.node, RegionReason::Package, {}, b.node, ModuleConfidence::Known);
  }
  std::vector<NodeId> out;
  while (!work.empty()) {
    const std::uint32_t f = work.back();
    work.pop_back();
    const ModuleConfidence conf = m.regions_[m.region_index_[f]].confidence;
    for (const auto& [owner, g] : of_owner(nested, f))
      add(g, RegionReason::Nested, NodeId{f}, g, conf);
    for (const auto& [owner, c] : of_owner(calls, f)) {
      out.clear();
      m.callees_impl(c, out, nullptr, nullptr);
      for (NodeId g : out) add(g, RegionReason::Called, NodeId{f}, c, conf);
      // Functions passed as arguments are called by what receives them.
      auto refer = [&](NodeId a) {
        if (a) add(m.function_referenced(a), RegionReason::Referenced, NodeId{f}, a, conf);
      };
      for (NodeId a : t.children(c, GM_F(Call, args)))
        refer(t.kind(a) == NodeKind::Starred ? NodeId{} : a);
      for (NodeId kw : t.children(c, GM_F(Call, keywords)))
        refer(t.child(kw, GM_F(keyword, value)));
    }
  }
}

void Analyzer::index_region_nodes(Model& m) {
  const Tree& t = *m.tree_;
  // Per scope, once: is its owning function a region (a hash lookup per
  // scope instead of one per node).
  std::vector<char> in_region(m.scopes_.size(), 0);
  for (ScopeId s = 0; s < m.scopes_.size(); ++s) {
    const std::uint32_t owner = m.scope_owner_def_[s];
    in_region[s] = owner != 0 && m.region_index_.count(owner) != 0;
  }
  ast::preorder(t, t.root(), [&](NodeId n) {
    const ScopeId s = n.index < m.node_scope_.size() ? m.node_scope_[n.index] : kNone;
    if (s != kNone && in_region[s]) m.region_nodes_.push_back(n);
  });
}

void Analyzer::add_library_regions(Model& m) {
  const Tree& t = *m.tree_;
  for (NodeId n : m.postorder_) {
    if (!is_function_def(t.kind(n)) || m.region_index_.count(n.index)) continue;
    m.region_index_[n.index] = static_cast<std::uint32_t>(m.regions_.size());
    m.regions_.push_back(RegionFunction{n, RegionReason::Library, {}, n, ModuleConfidence::None});
  }
}

}  // namespace gm::sema

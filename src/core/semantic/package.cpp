// Package-wide compiled regions: per-module summaries and one worklist over
// them (see package.h).
#include "semantic/package.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "semantic/analyzer.h"
#include "semantic/tables.h"

namespace gm::sema {

using ast::NodeKind;
using ast::Tree;
using namespace detail;

namespace {

// ".x.y" seen from `module` -> "pkg.x.y"; absolute names pass through.
std::string absolute(std::string_view q, std::string_view module, bool is_package) {
  if (q.empty() || q[0] != '.') return std::string(q);
  std::size_t level = 0;
  while (level < q.size() && q[level] == '.') ++level;
  std::string_view base = module;
  for (std::size_t i = is_package ? 1 : 0; i < level; ++i) {
    const auto dot = base.rfind('.');
    base = dot == std::string_view::npos ? std::string_view() : base.substr(0, dot);
  }
  const std::string_view rest = q.substr(level);
  if (rest.empty() || base.empty()) return std::string(rest.empty() ? base : rest);
  std::string out;
  out.reserve(base.size() + 1 + rest.size());
  out.append(base).append(1, '.').append(rest);
  return out;
}

// Names no package module can define: under builtins, torch, typing or
// collections (and torch itself). `extended`: q is only the head of a longer
// dotted name (q + ".<more>"), so typing, collections and builtins count too.
bool outside_packages(std::string_view q, bool extended) {
  for (std::string_view top : {"builtins", "torch", "typing", "collections"})
    if (starts_with(q, top) &&
        (q.size() == top.size() ? extended || top == "torch" : q[top.size()] == '.'))
      return true;
  return false;
}

bool worth_following(std::string_view q) { return !q.empty() && !outside_packages(q, false); }

template <class T>
void push_unique(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(std::move(x));
}

}  // namespace

std::string Analyzer::definition_path(const Model& m, NodeId def) {
  const Tree& t = *m.tree_;
  std::vector<std::string_view> parts;
  NodeId n = def;
  for (int guard = 0; n && guard < 256; ++guard) {
    const NodeKind k = t.kind(n);
    std::string_view name;
    if (is_function_def(k))
      name = t.text(t.field(n, GM_F(FunctionDef, name)));
    else if (k == NodeKind::ClassDef)
      name = t.text(t.field(n, GM_F(ClassDef, name)));
    else
      return {};
    parts.push_back(name);
    const ScopeId s = n.index < m.node_scope_.size() ? m.node_scope_[n.index] : kNone;
    if (s == kNone) return {};
    if (m.scopes_[s].kind == ScopeKind::Module) break;
    if (m.scopes_[s].kind != ScopeKind::Class && m.scopes_[s].kind != ScopeKind::Function)
      return {};
    n = m.scopes_[s].node;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += *it;
  }
  return out;
}

ModuleSummary Analyzer::summarize(const Model& m, std::string module, bool is_package) {
  const Tree& t = *m.tree_;
  ModuleSummary out;
  out.module = std::move(module);
  auto abs = [&](std::string_view q) { return absolute(q, out.module, is_package); };

  // Functions and classes in source order (their bindings are).
  std::vector<std::uint32_t> fn_id(t.node_count() + 1, kNone);  // def node -> id
  for (const Binding& b : m.bindings_) {
    if (b.kind != BindingKind::FunctionDef || b.node.index >= fn_id.size() ||
        fn_id[b.node.index] != kNone)
      continue;
    fn_id[b.node.index] = static_cast<std::uint32_t>(out.functions.size());
    FunctionSummary f;
    f.name = definition_path(m, b.node);
    f.region = m.region_index_.count(b.node.index) != 0;
    for (NodeId d : t.children(b.node, GM_F(FunctionDef, decorator_list))) {
      const NodeKind dk = t.kind(d);
      const std::string_view last = dk == NodeKind::Name ? t.text(t.field(d, GM_F(Name, id)))
                                    : dk == NodeKind::Attribute
                                        ? t.text(t.field(d, GM_F(Attribute, attr)))
                                        : std::string_view();
      if (last == "property" || last == "cached_property" || last == "setter" || last == "getter" ||
          last == "deleter")
        f.property = true;
    }
    out.functions.push_back(std::move(f));
  }
  auto function_of = [&](NodeId def) -> std::uint32_t {
    return def.index < fn_id.size() ? fn_id[def.index] : kNone;
  };
  for (const auto& ci : m.classes_) {
    ClassSummary c;
    c.name = definition_path(m, ci.node);
    c.module_like = ci.confidence != ModuleConfidence::None;
    c.bases = ci.bases;
    for (NodeId base : t.children(ci.node, GM_F(ClassDef, bases))) {
      if (t.kind(base) == NodeKind::Name) {
        const Binding* b = m.resolve(base);
        if (b && b->kind == BindingKind::ClassDef) continue;  // in-file: in `bases`
      }
      if (auto q = m.qualified_name(base); q && worth_following(*q))
        c.external_bases.push_back(abs(*q));
    }
    out.classes.push_back(std::move(c));
  }
  {
    std::unordered_map<ScopeId, std::uint32_t> class_of_scope;
    for (std::uint32_t c = 0; c < m.classes_.size(); ++c) class_of_scope[m.classes_[c].scope] = c;
    for (const Binding& b : m.bindings_)
      if (b.kind == BindingKind::FunctionDef)
        if (auto it = class_of_scope.find(b.scope); it != class_of_scope.end())
          out.classes[it->second].methods.emplace_back(std::string(b.name), function_of(b.node));
  }

  // Module-level bindings: imports (aliases) and values.
  std::unordered_map<std::string_view, std::uint32_t> global_id;
  auto global = [&](std::string_view name) -> GlobalSummary& {
    auto [it, fresh] = global_id.try_emplace(name, static_cast<std::uint32_t>(out.globals.size()));
    if (fresh) out.globals.push_back(GlobalSummary{std::string(name), {}, {}, {}, {}});
    return out.globals[it->second];
  };
  auto module_level = [&](const Binding& b) {
    return b.scope == 0 && m.scopes_[0].kind == ScopeKind::Module;
  };
  for (const Binding& b : m.bindings_) {
    if (!module_level(b)) continue;
    if ((b.kind == BindingKind::Import || b.kind == BindingKind::ImportFrom) &&
        !b.qualified.empty())
      global(b.name).alias = abs(b.qualified);
  }

  // What a load refers to, recorded into one of three kinds of sinks.
  struct Sink {
    std::vector<std::uint32_t>* functions;
    std::vector<std::uint32_t>* classes;
    std::vector<std::string>* external;
    std::vector<std::string>* globals;  // null: module-level globals not tracked
  };
  // Whether the absolute name of `e` (an attribute chain, or a name bound
  // by an import) is surely absent or not worth following, known from the
  // binding of the chain's root without building the name (as
  // Model::qualified_name would): a builtin, unbound or local root that is
  // no alias, or an import of torch, typing, collections or builtins (the
  // whole name then starts "torch.", ...; a bare name also when "torch").
  auto surely_not_followed = [&](NodeId e) {
    const bool chain = t.kind(e) == NodeKind::Attribute;
    while (t.kind(e) == NodeKind::Attribute) e = t.child(e, GM_F(Attribute, value));
    if (t.kind(e) != NodeKind::Name) return false;
    const Binding* b = m.resolve(e);
    if (!b) return true;  // "builtins.<name>" or no name at all
    if (b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign)  // maybe an alias
      return !b->value || b->node == e ||
             (t.kind(b->value) != NodeKind::Name && t.kind(b->value) != NodeKind::Attribute);
    if (b->kind != BindingKind::Import && b->kind != BindingKind::ImportFrom)
      return true;  // a parameter, def, loop variable...: no absolute name
    return outside_packages(b->qualified, chain);
  };
  auto record_load = [&](NodeId e, const Sink& sink) {
    const NodeKind k = t.kind(e);
    if (k == NodeKind::Attribute) {
      // the whole chain only (a.b.c, not a.b)
      const NodeId p = m.parent(e);
      if (p && t.kind(p) == NodeKind::Attribute && t.child(p, GM_F(Attribute, value)) == e) return;
      if (surely_not_followed(e)) return;
      if (auto q = m.qualified_name(e); q && worth_following(*q))
        push_unique(*sink.external, abs(*q));
      return;
    }
    if (k != NodeKind::Name) return;
    const Binding* b = m.resolve(e);
    if (!b) return;
    switch (b->kind) {
      case BindingKind::FunctionDef:
        if (auto f = function_of(b->node); f != kNone) push_unique(*sink.functions, f);
        return;
      case BindingKind::ClassDef:
        if (auto c = m.class_of_def(b->node); c != kNone) push_unique(*sink.classes, c);
        return;
      case BindingKind::Import:
      case BindingKind::ImportFrom:
        if (surely_not_followed(e)) return;
        if (auto q = m.qualified_name(e); q && worth_following(*q))
          push_unique(*sink.external, abs(*q));
        return;
      default:
        if (sink.globals && module_level(*b)) push_unique(*sink.globals, std::string(b->name));
        if (auto f = m.function_of_binding(b, 0); f)
          if (auto id = function_of(f); id != kNone) push_unique(*sink.functions, id);
        return;
    }
  };

  // `isinstance(x, C)`, `issubclass(k, (A, B))`: the class operand is only
  // compared against, never constructed or called, so it reaches nothing
  // (a forward's `isinstance(fn, QUANTIZE_CLASSES)` does not run every
  // quantizer's __init__).
  auto type_test_operand = [&](NodeId e) {
    NodeId arg = e;
    NodeId p = m.parent(arg);
    if (p && t.kind(p) == NodeKind::Tuple) {
      arg = p;
      p = m.parent(arg);
    }
    if (!p || t.kind(p) != NodeKind::Call) return false;
    const auto args = t.children(p, GM_F(Call, args));
    if (args.size() != 2 || args[1] != arg) return false;
    const NodeId func = t.child(p, GM_F(Call, func));
    if (t.kind(func) == NodeKind::Attribute) {  // builtins.isinstance: no other name needed
      const auto attr = t.text(t.field(func, GM_F(Attribute, attr)));
      if (attr != "isinstance" && attr != "issubclass") return false;
    }
    const auto q = m.qualified_name(func);
    return q && (*q == "builtins.isinstance" || *q == "builtins.issubclass");
  };

  // The top-level assignment a module-level node belongs to, with its targets.
  auto top_statement = [&](NodeId n) {
    NodeId s = n;
    for (int guard = 0; s && guard < 100000; ++guard) {
      const NodeId p = m.parent(s);
      if (!p || t.kind(p) == NodeKind::Module) return s;
      s = p;
    }
    return NodeId{};
  };

  // What `self.<attr>` holds when a method stores a function or an
  // imported name there (`self.sample_fn = helper if c else other`).
  std::vector<NodeId> held;
  auto record_stored = [&](std::uint32_t sc, std::string_view attr, FunctionSummary& fs) {
    held.clear();
    m.stored_callables(sc, attr, held);
    for (NodeId e : held) record_load(e, Sink{&fs.next, &fs.classes, &fs.external, &fs.globals});
  };

  // `x.a` not called: a property of x's class runs (or a descriptor's
  // __get__/__set__, reached with the special methods).
  auto attribute_use = [&](NodeId n, FunctionSummary& fs) {
    const NodeId p = m.parent(n);
    if (p && t.kind(p) == NodeKind::Call && t.child(p, GM_F(Call, func)) == n) return;
    const NodeId obj = t.child(n, GM_F(Attribute, value));
    std::string attr(t.text(t.field(n, GM_F(Attribute, attr))));
    if (const std::uint32_t sc = m.self_class(obj); sc != kNone) {
      if (const NodeId meth = m.find_method(sc, attr, false)) {
        if (auto id = function_of(meth); id != kNone) push_unique(fs.next, id);
      } else {
        record_stored(sc, attr, fs);
        push_unique(fs.self_calls, FunctionSummary::SelfCall{sc, std::move(attr), false});
      }
    } else if (!m.qualified_name(obj) && tensor_attribute(attr).ret == Ret::Unknown &&
               tensor_method(attr).ret == Ret::Unknown) {
      push_unique(fs.attributes, std::move(attr));
    }
  };

  // `self.x` whose every value in the class (and its in-file bases) is a
  // call of a name from another file, `Cls(...)`: those names, absolute;
  // empty when any store is something else (an unpacking, `+=`, a value
  // that is not such a call) or x is never set.
  SymbolTable<std::uint32_t> self_stores;  // stores to self.<attr>, by (class, attr)
  bool counted_stores = false;
  auto constructed_elsewhere = [&](NodeId obj) -> std::vector<std::string> {
    if (t.kind(obj) != NodeKind::Attribute) return {};
    const std::uint32_t c = m.self_class(t.child(obj, GM_F(Attribute, value)));
    if (c == kNone) return {};
    if (!counted_stores) {
      counted_stores = true;
      for (NodeId n : m.postorder_)
        if (t.kind(n) == NodeKind::Attribute &&
            static_cast<NodeKind>(t.field(n, GM_F(Attribute, ctx)).a) == NodeKind::Store)
          if (const std::uint32_t sc = m.self_class(t.child(n, GM_F(Attribute, value)));
              sc != kNone)
            ++self_stores[SymbolKey::of(sc, t.text(t.field(n, GM_F(Attribute, attr))))];
    }
    const std::string_view attr = t.text(t.field(obj, GM_F(Attribute, attr)));
    const std::vector<std::uint32_t> owners = m.with_in_file_bases(c);
    std::size_t stores = 0;
    for (std::uint32_t o : owners)
      if (const std::uint32_t* k = self_stores.find(SymbolKey::of(o, attr))) stores += *k;
    const auto infos = m.attrs_in(owners, attr);
    if (infos.empty() || infos.size() != stores) return {};
    std::vector<std::string> out;
    for (std::uint32_t i : infos) {
      const Model::AttrInfo& a = m.attrs_[i];
      if (a.container || a.tensor || a.value_class != kNone || !a.value ||
          t.kind(a.value) != NodeKind::Call)
        return {};
      const auto q = m.qualified_name(t.child(a.value, GM_F(Call, func)));
      if (!q || !worth_following(*q)) return {};
      push_unique(out, abs(*q));
    }
    return out;
  };

  std::vector<NodeId> callees;
  for (NodeId n : m.postorder_) {
    const NodeKind k = t.kind(n);
    const bool load_name = k == NodeKind::Name || k == NodeKind::Attribute;
    if (!load_name && k != NodeKind::Call && !is_function_def(k)) continue;
    const ScopeId s = n.index < m.node_scope_.size() ? m.node_scope_[n.index] : kNone;
    if (s == kNone) continue;
    const std::uint32_t owner_def = m.scope_owner_def_[s];
    if (owner_def) {
      const std::uint32_t f = function_of(NodeId{owner_def});
      if (f == kNone) continue;
      FunctionSummary& fs = out.functions[f];
      const Sink sink{&fs.next, &fs.classes, &fs.external, &fs.globals};
      if (load_name) {
        if (!type_test_operand(n)) record_load(n, sink);
        if (k == NodeKind::Attribute) attribute_use(n, fs);
      } else if (is_function_def(k)) {
        if (auto g = function_of(n); g != kNone) push_unique(fs.next, g);  // nested
      } else {
        callees.clear();
        m.callees_impl(n, callees, nullptr, nullptr);
        for (NodeId g : callees)
          if (auto id = function_of(g); id != kNone) push_unique(fs.next, id);
        const NodeId func = t.child(n, GM_F(Call, func));
        if (t.kind(func) != NodeKind::Attribute) continue;
        const NodeId obj = t.child(func, GM_F(Attribute, value));
        std::string method(t.text(t.field(func, GM_F(Attribute, attr))));
        const std::uint32_t sc = m.self_class(obj);
        if (sc != kNone && !m.find_method(sc, method, false)) record_stored(sc, method, fs);
        if (!callees.empty()) continue;
        if (sc != kNone) {
          push_unique(fs.self_calls, FunctionSummary::SelfCall{sc, std::move(method), false});
        } else if (t.kind(obj) == NodeKind::Call &&
                   t.kind(t.child(obj, GM_F(Call, func))) == NodeKind::Name &&
                   m.name_text(t.child(obj, GM_F(Call, func))) == "super") {
          const std::uint32_t c = m.method_class(NodeId{owner_def});
          if (c != kNone)
            push_unique(fs.self_calls, FunctionSummary::SelfCall{c, std::move(method), true});
        } else if (auto classes = constructed_elsewhere(obj); !classes.empty()) {
          push_unique(fs.typed_calls,
                      FunctionSummary::TypedCall{std::move(classes), std::move(method)});
        } else if (!m.qualified_name(obj) && tensor_method(method).ret == Ret::Unknown) {
          push_unique(fs.methods, std::move(method));
        }
      }
      continue;
    }
    if (!load_name) continue;
    // Class bodies and module-level code.
    if (m.scopes_[s].kind == ScopeKind::Class) {
      const std::uint32_t c = m.class_of_def(m.scopes_[s].node);
      if (c == kNone) continue;
      ClassSummary& cs = out.classes[c];
      record_load(n, Sink{&cs.body_functions, &cs.body_classes, &cs.body_external, nullptr});
    } else if (m.scopes_[s].kind == ScopeKind::Module) {
      const NodeId stmt = top_statement(n);
      if (!stmt) continue;
      if (t.kind(stmt) == NodeKind::Assign && t.kind(n) == NodeKind::Name &&
          t.child(stmt, GM_F(Assign, value)) == n) {
        const Binding* b = m.resolve(n);
        const std::uint32_t f =
            b && b->kind == BindingKind::FunctionDef ? function_of(b->node) : kNone;
        for (NodeId tg : t.children(stmt, GM_F(Assign, targets)))
          if (f != kNone && t.kind(tg) == NodeKind::Attribute)
            out.installed_methods.emplace_back(
                std::string(t.text(t.field(tg, GM_F(Attribute, attr)))), f);
      }
      std::vector<NodeId> targets;
      if (t.kind(stmt) == NodeKind::Assign)
        for (NodeId tg : t.children(stmt, GM_F(Assign, targets))) targets.push_back(tg);
      else if (t.kind(stmt) == NodeKind::AnnAssign)
        targets.push_back(t.child(stmt, GM_F(AnnAssign, target)));
      for (NodeId tg : targets) {
        if (t.kind(tg) != NodeKind::Name || tg == n) continue;
        GlobalSummary& g = global(m.name_text(tg));
        record_load(n, Sink{&g.functions, &g.classes, &g.external, nullptr});
      }
    }
  }

  // `Name.method` where Name is a class of this file or an imported name:
  // the name's absolute name and the method (whether it names a class and
  // its method is decided package-wide, by the walk).
  auto registry_method = [&](NodeId e) -> std::optional<std::pair<std::string, std::string>> {
    if (t.kind(e) != NodeKind::Attribute) return std::nullopt;
    const NodeId recv = t.child(e, GM_F(Attribute, value));
    if (t.kind(recv) != NodeKind::Name) return std::nullopt;
    const Binding* rb = m.resolve(recv);
    if (!rb) return std::nullopt;
    std::string cls;
    if (rb->kind == BindingKind::ClassDef && module_level(*rb))
      cls = out.module + "." + std::string(rb->name);
    else if ((rb->kind == BindingKind::Import || rb->kind == BindingKind::ImportFrom) &&
             !rb->qualified.empty())
      cls = abs(rb->qualified);
    else
      return std::nullopt;
    return std::pair{cls, std::string(t.text(t.field(e, GM_F(Attribute, attr))))};
  };

  // Decorators: reaching a decorated function reaches what the decorator
  // returns (its wrapper is nested in the decorator, or a factory's result).
  for (const Binding& b : m.bindings_) {
    if (b.kind != BindingKind::FunctionDef) continue;
    const std::uint32_t f = function_of(b.node);
    if (f == kNone) continue;
    FunctionSummary& fs = out.functions[f];
    std::vector<std::uint32_t> ignored_classes;
    for (NodeId d : t.children(b.node, GM_F(FunctionDef, decorator_list))) {
      const NodeId e = t.kind(d) == NodeKind::Call ? t.child(d, GM_F(Call, func)) : d;
      record_load(e, Sink{&fs.next, &ignored_classes, &fs.external, nullptr});
      if (auto q = registry_method(e)) {
        // an in-file class's method, which record_load does not name
        push_unique(fs.external, q->first + "." + q->second);
        out.registrations.push_back({std::move(q->first), std::move(q->second), f});
      }
    }
  }
  return out;
}

std::string definition_path(const Model& model, std::uint32_t def_node) {
  return Analyzer::definition_path(model, NodeId{def_node});
}

ModuleSummary summarize(const Model& model, std::string module, bool is_package) {
  return Analyzer::summarize(model, std::move(module), is_package);
}

// ------------------------------------------------------------ the worklist

namespace {

class PackageWalk {
 public:
  explicit PackageWalk(std::span<const ModuleSummary> mods) : mods_(mods) {
    reached_.resize(mods.size());
    class_reached_.resize(mods.size());
    specials_reached_.resize(mods.size());
    global_reached_.resize(mods.size());
    registered_.resize(mods.size());
    index_.resize(mods.size());
    for (std::uint32_t i = 0; i < mods.size(); ++i) {
      module_id_[mods[i].module] = i;
      reached_[i].assign(mods[i].functions.size(), false);
      class_reached_[i].assign(mods[i].classes.size(), false);
      specials_reached_[i].assign(mods[i].classes.size(), false);
      registered_[i].resize(mods[i].classes.size());
      global_reached_[i].assign(mods[i].globals.size(), false);
      auto& ix = index_[i];
      for (std::uint32_t f = 0; f < mods[i].functions.size(); ++f)
        ix.function[mods[i].functions[f].name] = f;
      for (std::uint32_t c = 0; c < mods[i].classes.size(); ++c) {
        ix.cls[mods[i].classes[c].name] = c;
        // methods by name, for calls on receivers nothing resolves
        for (const auto& [name, f] : mods[i].classes[c].methods) {
          by_method_[name].push_back({i, f});
          if (mods[i].functions[f].property) by_property_[name].push_back({i, f});
        }
      }
      for (const auto& [name, f] : mods[i].installed_methods) by_method_[name].push_back({i, f});
      for (std::uint32_t g = 0; g < mods[i].globals.size(); ++g)
        ix.global[mods[i].globals[g].name] = g;
    }
  }

  std::vector<std::vector<std::string>> run(bool include_own) {
    // A decorator `@R.m(...)` files the function in class R when m is R's
    // method (its own or a base's); anything else decorates only.
    for (std::uint32_t i = 0; i < mods_.size(); ++i)
      for (const auto& r : mods_[i].registrations)
        if (const Target t = resolve(r.cls, 0);
            whole_class(t) && find_method(t.module, t.id, r.method, false, 0))
          registered_[t.module][t.id].push_back({i, r.function});
    for (std::uint32_t i = 0; i < mods_.size(); ++i)
      for (std::uint32_t f = 0; f < mods_[i].functions.size(); ++f)
        if (mods_[i].functions[f].region) reach(i, f);
    // Classes that are nn.Modules only through a base in another file.
    for (std::uint32_t i = 0; i < mods_.size(); ++i)
      for (std::uint32_t c = 0; c < mods_[i].classes.size(); ++c)
        if (!mods_[i].classes[c].module_like && module_like(i, c, 0))
          inherited(i, c, "forward", false, 0);
    // Special methods run on operators over the objects compiled code
    // handles: those it creates or loads (their classes are reached, see
    // reach_class) and those an nn.Module holds or is given without
    // compiled code naming their class: what the module's methods make
    // (`self.processor = AttnProcessor()` in its __init__) and what its body
    // names (`config_class = BartConfig`, the `config: BartConfig` of a
    // signature, `_default_processor_cls = AttnProcessor`). Those objects'
    // `__call__` is reached too; a class no compiled code can see keeps its
    // special methods out (a dataset's __getitem__, a sampler's __iter__).
    auto held = [&](std::uint32_t m, std::uint32_t c) {
      inherited(m, c, "__call__", false, 0);
      reach_specials(m, c, 0);
    };
    auto held_name = [&](const std::string& q) {
      if (const Target t = resolve(q, 0); whole_class(t)) held(t.module, t.id);
    };
    for (std::uint32_t i = 0; i < mods_.size(); ++i)
      for (std::uint32_t c = 0; c < mods_[i].classes.size(); ++c) {
        if (!module_like(i, c, 0)) continue;
        const ClassSummary& cs = mods_[i].classes[c];
        for (std::uint32_t named : cs.body_classes) held(i, named);
        for (const auto& q : cs.body_external) held_name(q);
        for (const auto& [name, f] : cs.methods) {
          const FunctionSummary& fs = mods_[i].functions[f];
          for (std::uint32_t made : fs.classes) held(i, made);
          for (const auto& q : fs.external) held_name(q);
        }
      }
    drain();
    std::vector<std::vector<std::string>> out(mods_.size());
    for (std::uint32_t i = 0; i < mods_.size(); ++i) {
      for (std::uint32_t f = 0; f < mods_[i].functions.size(); ++f)
        if (reached_[i][f] && (include_own || !mods_[i].functions[f].region) &&
            !mods_[i].functions[f].name.empty())
          out[i].push_back(mods_[i].functions[f].name);
      std::sort(out[i].begin(), out[i].end());
    }
    return out;
  }

 private:
  enum class Kind { None, Function, Class, Global };
  struct Target {
    Kind kind = Kind::None;
    std::uint32_t module = 0, id = 0;
    std::string method;  // Kind::Class with a method name still to look up
  };
  struct Index {
    std::unordered_map<std::string, std::uint32_t> function, cls, global;
  };

  void reach(std::uint32_t m, std::uint32_t f) {
    if (reached_[m][f]) return;
    reached_[m][f] = true;
    work_.push_back({m, f});
  }

  void drain() {
    while (!work_.empty()) {
      const auto [m, f] = work_.back();
      work_.pop_back();
      const FunctionSummary& fs = mods_[m].functions[f];
      for (std::uint32_t g : fs.next) reach(m, g);
      for (std::uint32_t c : fs.classes) reach_class(m, c);
      for (const auto& name : fs.globals)
        if (auto it = index_[m].global.find(name); it != index_[m].global.end())
          reach_global(m, it->second);
      for (const auto& q : fs.external) reach_target(resolve(q, 0));
      for (const auto& sc : fs.self_calls) inherited(m, sc.cls, sc.method, sc.skip_self, 0);
      for (const auto& name : fs.methods) reach_by_name(name);
      for (const auto& tc : fs.typed_calls) {
        // Each class found in the package: its own method (or a base's);
        // a name that is not a package class: any method of that name.
        const bool all_classes = std::all_of(tc.classes.begin(), tc.classes.end(),
                                             [&](auto& q) { return whole_class(resolve(q, 0)); });
        if (!all_classes) {
          reach_by_name(tc.method);
          continue;
        }
        for (const auto& q : tc.classes) {
          const Target t = resolve(q, 0);
          inherited(t.module, t.id, tc.method, false, 0);
        }
      }
      for (const auto& name : fs.attributes)
        if (auto it = by_property_.find(name); it != by_property_.end())
          for (const auto& [mm, ff] : it->second) reach(mm, ff);
    }
  }

  void reach_by_name(const std::string& method) {
    if (auto it = by_method_.find(method); it != by_method_.end())
      for (const auto& [mm, ff] : it->second) reach(mm, ff);
  }

  void reach_target(const Target& t) {
    switch (t.kind) {
      case Kind::Function: reach(t.module, t.id); break;
      case Kind::Class:
        if (t.method.empty())
          reach_class(t.module, t.id);
        else
          inherited(t.module, t.id, t.method, false, 0);
        break;
      case Kind::Global: reach_global(t.module, t.id); break;
      case Kind::None: break;
    }
  }

  // A class used by compiled code: what constructing or calling it runs,
  // and the functions its body (or a base's) refers to.
  void reach_class(std::uint32_t m, std::uint32_t c) {
    if (class_reached_[m][c]) return;
    class_reached_[m][c] = true;
    reach_specials(m, c, 0);
    for (const char* meth : {"__init__", "__post_init__", "__new__", "__call__", "forward"})
      inherited(m, c, meth, false, 0);
    const ClassSummary& cs = mods_[m].classes[c];
    for (std::uint32_t f : cs.body_functions) reach(m, f);
    for (const auto& q : cs.body_external) reach_target(resolve(q, 0));
    for (std::uint32_t b : cs.bases) reach_class(m, b);
    for (const auto& q : cs.external_bases)
      if (const Target t = resolve(q, 0); whole_class(t)) reach_class(t.module, t.id);
    for (const auto& [mm, f] : registered_[m][c]) reach(mm, f);
  }

  // The special methods of class c and of its bases.
  void reach_specials(std::uint32_t m, std::uint32_t c, int depth) {
    if (depth > 32 || specials_reached_[m][c]) return;
    specials_reached_[m][c] = true;
    const ClassSummary& cs = mods_[m].classes[c];
    for (const auto& [name, f] : cs.methods)
      if (special_at_run_time(name)) reach(m, f);
    for (std::uint32_t b : cs.bases) reach_specials(m, b, depth + 1);
    for (const auto& q : cs.external_bases)
      if (const Target t = resolve(q, 0); whole_class(t)) reach_specials(t.module, t.id, depth + 1);
  }

  void reach_global(std::uint32_t m, std::uint32_t g) {
    if (global_reached_[m][g]) return;
    global_reached_[m][g] = true;
    const GlobalSummary& gs = mods_[m].globals[g];
    for (std::uint32_t f : gs.functions) reach(m, f);
    for (std::uint32_t c : gs.classes) reach_class(m, c);
    for (const auto& q : gs.external) reach_target(resolve(q, 0));
    if (!gs.alias.empty()) reach_target(resolve(gs.alias, 0));
  }

  // The first definition of `method` in class c and its bases (left to
  // right, depth first; in-file and across files), reached.
  void inherited(std::uint32_t m, std::uint32_t c, const std::string& method, bool skip_self,
                 int depth) {
    if (auto found = find_method(m, c, method, skip_self, depth))
      reach(found->first, found->second);
  }

  std::optional<std::pair<std::uint32_t, std::uint32_t>> find_method(std::uint32_t m,
                                                                     std::uint32_t c,
                                                                     const std::string& method,
                                                                     bool skip_self, int depth) {
    if (depth > 32) return std::nullopt;
    const ClassSummary& cs = mods_[m].classes[c];
    if (!skip_self)
      for (const auto& [name, f] : cs.methods)
        if (name == method) return std::pair{m, f};
    for (std::uint32_t b : cs.bases)
      if (auto found = find_method(m, b, method, false, depth + 1)) return found;
    for (const auto& q : cs.external_bases)
      if (const Target t = resolve(q, 0); whole_class(t))
        if (auto found = find_method(t.module, t.id, method, false, depth + 1)) return found;
    return std::nullopt;
  }

  static bool whole_class(const Target& t) { return t.kind == Kind::Class && t.method.empty(); }

  bool module_like(std::uint32_t m, std::uint32_t c, int depth) {
    if (depth > 32) return false;
    const ClassSummary& cs = mods_[m].classes[c];
    if (cs.module_like) return true;
    for (std::uint32_t b : cs.bases)
      if (module_like(m, b, depth + 1)) return true;
    for (const auto& q : cs.external_bases)
      if (const Target t = resolve(q, 0); whole_class(t) && module_like(t.module, t.id, depth + 1))
        return true;
    return false;
  }

  // An absolute dotted name -> what it names in the package (following
  // re-exports such as `from .modeling_bart import BartModel` in __init__).
  Target resolve(const std::string& q, int depth) {
    if (depth > 16) return {};
    if (auto it = memo_.find(q); it != memo_.end() && depth == 0) return it->second;
    Target found;
    // the longest prefix that is a module of the package
    for (std::size_t cut = q.size();;) {
      if (auto mod = module_id_.find(q.substr(0, cut)); mod != module_id_.end()) {
        if (cut < q.size()) found = lookup(mod->second, q.substr(cut + 1), depth);
        break;
      }
      const auto dot = cut == 0 ? std::string::npos : q.rfind('.', cut - 1);
      if (dot == std::string::npos) break;
      cut = dot;
    }
    if (depth == 0) memo_[q] = found;
    return found;
  }

  Target lookup(std::uint32_t m, const std::string& rest, int depth) {
    const Index& ix = index_[m];
    if (auto it = ix.function.find(rest); it != ix.function.end())
      return {Kind::Function, m, it->second, {}};
    const auto dot = rest.find('.');
    const std::string head = rest.substr(0, dot);
    const std::string tail = dot == std::string::npos ? std::string() : rest.substr(dot + 1);
    if (auto it = ix.cls.find(head); it != ix.cls.end()) {
      if (tail.empty()) return {Kind::Class, m, it->second, {}};
      if (tail.find('.') == std::string::npos) return {Kind::Class, m, it->second, tail};
      return {};
    }
    if (auto it = ix.global.find(head); it != ix.global.end()) {
      const GlobalSummary& g = mods_[m].globals[it->second];
      if (!g.alias.empty())
        return resolve(tail.empty() ? g.alias : g.alias + "." + tail, depth + 1);
      if (tail.empty()) return {Kind::Global, m, it->second, {}};
    }
    return {};
  }

  std::span<const ModuleSummary> mods_;
  std::unordered_map<std::string, std::uint32_t> module_id_;
  std::vector<Index> index_;
  static bool special_at_run_time(std::string_view name) {
    if (name.size() < 5 || !starts_with(name, "__") || !ends_with(name, "__")) return false;
    // Class creation, construction (reached with the class), pickling, and
    // calling (see run()).
    for (std::string_view no :
         {"__init__", "__new__", "__init_subclass__", "__set_name__", "__class_getitem__",
          "__del__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__",
          "__getnewargs__", "__getnewargs_ex__", "__post_init__", "__call__"})
      if (name == no) return false;
    return true;
  }

  std::unordered_map<std::string, std::vector<std::pair<std::uint32_t, std::uint32_t>>> by_method_,
      by_property_;
  std::vector<std::vector<bool>> reached_, class_reached_, specials_reached_, global_reached_;
  // per class: the functions its methods decorate (module, function id)
  std::vector<std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>> registered_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work_;
  std::unordered_map<std::string, Target> memo_;
};

}  // namespace

std::vector<std::vector<std::string>> package_roots(std::span<const ModuleSummary> modules,
                                                    bool include_own) {
  return PackageWalk(modules).run(include_own);
}

}  // namespace gm::sema

// Pass 1 (one iterative walk of the tree: parents, scopes, bindings,
// global/nonlocal), name resolution and qualified names.
#include <algorithm>
#include <iterator>

#include "semantic/analyzer.h"

namespace gm::sema {

using ast::NodeKind;
using ast::Tree;

namespace detail {

bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

namespace {
// Python 3.13's builtins module (functions, types, constants, exceptions).
constexpr std::string_view kBuiltins[] = {
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "PythonFinalizationError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__file__",
    "__builtins__",
    "__dict__",
    "__qualname__",
    "__module__",
    "__annotations__",
    "__class__",
    "__path__",
    "__cached__",
    "__version__",
    "reveal_type",
    "__all__",
};
}  // namespace

bool is_python_builtin(std::string_view name) {
  static const auto sorted = [] {
    std::vector<std::string_view> a(std::begin(kBuiltins), std::end(kBuiltins));
    std::sort(a.begin(), a.end());
    return a;
  }();
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

}  // namespace detail

using namespace detail;

namespace {

struct Frame {
  std::uint32_t node;
  std::uint32_t scope;
  std::uint32_t parent;
  std::uint8_t slot;
  bool post;
};

struct Decl {
  ScopeId scope;
  std::string_view name;
  std::uint8_t what;  // 1 global, 2 nonlocal
};

class Pass1 {
 public:
  Pass1(const Tree& t, std::vector<Binding>& b, std::vector<Scope>& s)
      : t_(t), bindings_(b), scopes_(s) {}

  // Everything that needs Model's private state goes through these.
  std::vector<std::uint32_t>* parent;
  std::vector<std::uint32_t>* node_scope;
  std::vector<std::uint32_t>* opened;
  std::vector<std::uint8_t>* slot;
  std::vector<NodeId>* postorder;
  std::vector<Decl> decls;

  void run(NodeId root) {
    const std::size_t n = t_.node_count() + 1;
    scopes_.push_back(Scope{ScopeKind::Module, root, kNone, {}});
    if (!root) return;
    std::vector<Frame> stack;
    stack.push_back({root.index, 0, 0, 0, false});
    while (!stack.empty()) {
      const Frame f = stack.back();
      stack.pop_back();
      if (f.node == 0 || f.node >= n) continue;
      if (f.post) {
        postorder->push_back(NodeId{f.node});
        continue;
      }
      (*parent)[f.node] = f.parent;
      (*node_scope)[f.node] = f.scope;
      (*slot)[f.node] = f.slot;
      stack.push_back({f.node, f.scope, f.parent, f.slot, true});
      visit(NodeId{f.node}, f.scope, stack);  // pushes the children, last first
    }
  }

 private:
  ScopeId new_scope(ScopeKind k, NodeId node, ScopeId parent_scope, std::string_view name) {
    scopes_.push_back(Scope{k, node, parent_scope, name});
    const auto id = static_cast<ScopeId>(scopes_.size() - 1);
    (*opened)[node.index] = id;
    return id;
  }

  void add_binding(std::string_view name, BindingKind kind, ScopeId scope, NodeId node,
                   NodeId binder, NodeId value, NodeId source, std::uint32_t effective,
                   std::string qualified = {}) {
    Binding b;
    b.name = name;
    b.kind = kind;
    b.scope = scope;
    b.node = node;
    b.binder = binder;
    b.value = value;
    b.source = source;
    b.effective = effective;
    b.qualified = std::move(qualified);
    bindings_.push_back(std::move(b));
  }

  // Push every child of `node` with scope `s`, except where `pick` says,
  // onto the walk's stack, last child first (so the first is visited first).
  template <typename Pick>
  void children(NodeId node, std::vector<Frame>& stack, Pick pick) {
    const auto fields = ast::fields_of(t_.kind(node));
    for (int i = static_cast<int>(fields.size()) - 1; i >= 0; --i) {
      const auto fk = fields[i].kind;
      if (fk == ast::FieldKind::Node || fk == ast::FieldKind::OptNode) {
        const NodeId c = t_.child(node, i);
        if (c)
          stack.push_back({c.index, pick(i, c), node.index, static_cast<std::uint8_t>(i), false});
      } else if (fk == ast::FieldKind::List || fk == ast::FieldKind::OptList) {
        const auto list = t_.children(node, i);
        for (auto it = list.rbegin(); it != list.rend(); ++it)
          if (*it)
            stack.push_back(
                {it->index, pick(i, *it), node.index, static_cast<std::uint8_t>(i), false});
      }
    }
  }

  std::string_view ident(NodeId node, int field) const { return t_.text(t_.field(node, field)); }
  bool has_ident(NodeId node, int field) const {
    return !Tree::is_none_string(t_.field(node, field));
  }

  void bind_name_node(NodeId name, ScopeId s) {
    const auto ctx = static_cast<NodeKind>(t_.field(name, GM_F(Name, ctx)).a);
    if (ctx != NodeKind::Store && ctx != NodeKind::Del) return;
    // Climb through unpacking to the binder.
    NodeId cur = name;
    NodeId p{(*parent)[name.index]};
    int depth = 0;
    while (p && (t_.kind(p) == NodeKind::Tuple || t_.kind(p) == NodeKind::List ||
                 t_.kind(p) == NodeKind::Starred)) {
      cur = p;
      p = NodeId{(*parent)[p.index]};
      ++depth;
    }
    const NodeId binder = p;
    const std::string_view id = ident(name, GM_F(Name, id));
    if (!binder) return;
    const auto& bn = t_.at(binder);
    NodeId value{}, source{};
    BindingKind kind = BindingKind::Assign;
    std::uint32_t eff = bn.end;
    ScopeId owner = s;
    switch (t_.kind(binder)) {
      case NodeKind::Assign: source = t_.child(binder, GM_F(Assign, value)); break;
      case NodeKind::AugAssign:
        kind = BindingKind::AugAssign;
        source = t_.child(binder, GM_F(AugAssign, value));
        break;
      case NodeKind::AnnAssign:
        source = t_.child(binder, GM_F(AnnAssign, value));
        kind = source ? BindingKind::AnnAssign : BindingKind::Declaration;
        break;
      case NodeKind::For:
      case NodeKind::AsyncFor:
        kind = BindingKind::For;
        source = t_.child(binder, GM_F(For, iter));
        eff = t_.at(source).end;
        break;
      case NodeKind::withitem:
        kind = BindingKind::With;
        source = t_.child(binder, GM_F(withitem, context_expr));
        eff = t_.at(source).end;
        break;
      case NodeKind::comprehension:
        kind = BindingKind::Comprehension;
        source = t_.child(binder, GM_F(comprehension, iter));
        eff = t_.at(scopes_[s].node).begin;
        break;
      case NodeKind::NamedExpr:
        kind = BindingKind::NamedExpr;
        source = t_.child(binder, GM_F(NamedExpr, value));
        while (owner != 0 && scopes_[owner].kind == ScopeKind::Comprehension)
          owner = scopes_[owner].parent;
        break;
      case NodeKind::Delete: kind = BindingKind::Delete; break;
      case NodeKind::TypeAlias: kind = BindingKind::TypeParam; break;
      default: break;
    }
    if (ctx == NodeKind::Del) kind = BindingKind::Delete;
    if (depth == 0 && kind != BindingKind::AugAssign && kind != BindingKind::For &&
        kind != BindingKind::With && kind != BindingKind::Comprehension)
      value = source;
    if (depth == 1 && t_.kind(binder) == NodeKind::Assign && source &&
        (t_.kind(source) == NodeKind::Tuple || t_.kind(source) == NodeKind::List)) {
      // a, b = x, y: match elements when no starred item is involved.
      const NodeId tgt = cur;
      const int ef = t_.kind(tgt) == NodeKind::Tuple ? GM_F(Tuple, elts) : GM_F(List, elts);
      const int sf = t_.kind(source) == NodeKind::Tuple ? GM_F(Tuple, elts) : GM_F(List, elts);
      if (t_.kind(tgt) != NodeKind::Starred) {
        auto te = t_.children(tgt, ef);
        auto se = t_.children(source, sf);
        bool starred = false;
        for (NodeId e : se) starred |= t_.kind(e) == NodeKind::Starred;
        for (NodeId e : te) starred |= t_.kind(e) == NodeKind::Starred;
        if (!starred && te.size() == se.size())
          for (std::size_t i = 0; i < te.size(); ++i)
            if (te[i] == name) value = se[i];
      }
    }
    add_binding(id, kind, owner, name, binder, value, source, eff);
  }

  void visit(NodeId node, ScopeId s, std::vector<Frame>& stack) {
    const NodeKind k = t_.kind(node);
    const auto& nd = t_.at(node);
    switch (k) {
      case NodeKind::FunctionDef:
      case NodeKind::AsyncFunctionDef: {
        const std::string_view name = ident(node, GM_F(FunctionDef, name));
        add_binding(name, BindingKind::FunctionDef, s, node, node, {}, {}, nd.end);
        const ScopeId f = new_scope(ScopeKind::Function, node, s, name);
        children(node, stack, [&](int i, NodeId) { return i == GM_F(FunctionDef, body) ? f : s; });
        return;
      }
      case NodeKind::Lambda: {
        const ScopeId f = new_scope(ScopeKind::Lambda, node, s, {});
        children(node, stack, [&](int i, NodeId) { return i == GM_F(Lambda, body) ? f : s; });
        return;
      }
      case NodeKind::ClassDef: {
        const std::string_view name = ident(node, GM_F(ClassDef, name));
        add_binding(name, BindingKind::ClassDef, s, node, node, {}, {}, nd.end);
        const ScopeId c = new_scope(ScopeKind::Class, node, s, name);
        children(node, stack, [&](int i, NodeId) { return i == GM_F(ClassDef, body) ? c : s; });
        return;
      }
      case NodeKind::ListComp:
      case NodeKind::SetComp:
      case NodeKind::DictComp:
      case NodeKind::GeneratorExp: {
        const ScopeId q = new_scope(ScopeKind::Comprehension, node, s, {});
        children(node, stack, [&](int, NodeId) { return q; });
        return;
      }
      case NodeKind::comprehension: {
        // The first generator's iterable is evaluated in the enclosing scope.
        const NodeId comp{(*parent)[node.index]};
        bool first = false;
        if (comp && is_comprehension_expr(t_.kind(comp))) {
          const int gf = t_.kind(comp) == NodeKind::DictComp ? GM_F(DictComp, generators)
                                                             : GM_F(ListComp, generators);
          auto gens = t_.children(comp, gf);
          first = !gens.empty() && gens[0] == node;
        }
        const ScopeId outer = first && scopes_[s].parent != kNone ? scopes_[s].parent : s;
        children(node, stack,
                 [&](int i, NodeId) { return i == GM_F(comprehension, iter) ? outer : s; });
        return;
      }
      case NodeKind::arguments: {
        const NodeId owner{(*parent)[node.index]};
        ScopeId ps = s;
        if (owner && (is_function_def(t_.kind(owner)) || t_.kind(owner) == NodeKind::Lambda) &&
            (*opened)[owner.index] != kNone)
          ps = (*opened)[owner.index];
        children(node, stack, [&](int i, NodeId) {
          return (i == GM_F(arguments, defaults) || i == GM_F(arguments, kw_defaults)) ? s : ps;
        });
        return;
      }
      case NodeKind::arg: {
        // Bound in the function's scope; the annotation runs outside.
        const NodeId args{(*parent)[node.index]};
        const ScopeId outer = args ? (*node_scope)[args.index] : s;
        std::uint32_t eff = nd.begin;
        if (scopes_[s].node) eff = t_.at(scopes_[s].node).begin;
        add_binding(ident(node, GM_F(arg, arg)), BindingKind::Parameter, s, node, node, {}, {},
                    eff);
        children(node, stack, [&](int, NodeId) { return outer; });
        return;
      }
      case NodeKind::Name: bind_name_node(node, s); break;
      case NodeKind::ExceptHandler:
        if (has_ident(node, GM_F(ExceptHandler, name)))
          add_binding(ident(node, GM_F(ExceptHandler, name)), BindingKind::ExceptAs, s, node, node,
                      {}, {}, nd.begin);
        break;
      case NodeKind::Import:
        for (NodeId a : t_.children(node, GM_F(Import, names))) {
          const std::string_view full = ident(a, GM_F(alias, name));
          if (has_ident(a, GM_F(alias, asname))) {
            add_binding(ident(a, GM_F(alias, asname)), BindingKind::Import, s, a, node, {}, {},
                        nd.end, std::string(full));
          } else {
            const auto dot = full.find('.');
            const std::string_view top = full.substr(0, dot);
            add_binding(top, BindingKind::Import, s, a, node, {}, {}, nd.end, std::string(top));
          }
        }
        break;
      case NodeKind::ImportFrom: {
        std::string prefix(static_cast<std::size_t>(static_cast<std::int32_t>(
                               t_.field(node, GM_F(ImportFrom, level)).a)),
                           '.');
        if (prefix.size() > 64) prefix.resize(64);
        if (has_ident(node, GM_F(ImportFrom, module)))
          prefix += std::string(ident(node, GM_F(ImportFrom, module))) + ".";
        for (NodeId a : t_.children(node, GM_F(ImportFrom, names))) {
          const std::string_view nm = ident(a, GM_F(alias, name));
          if (nm == "*") continue;
          const std::string_view bound =
              has_ident(a, GM_F(alias, asname)) ? ident(a, GM_F(alias, asname)) : nm;
          add_binding(bound, BindingKind::ImportFrom, s, a, node, {}, {}, nd.end,
                      prefix + std::string(nm));
        }
        break;
      }
      case NodeKind::Global:
      case NodeKind::Nonlocal: {
        const int f = k == NodeKind::Global ? GM_F(Global, names) : GM_F(Nonlocal, names);
        const ast::Field fl = t_.field(node, f);
        const auto raw = t_.children(node, f);
        for (std::uint32_t i = 0; i < fl.b; ++i) {
          const NodeId off = raw.data()[2 * i], len = raw.data()[2 * i + 1];
          decls.push_back({s, t_.str({off.index, len.index}),
                           static_cast<std::uint8_t>(k == NodeKind::Global ? 1 : 2)});
        }
        break;
      }
      case NodeKind::MatchAs:
        if (has_ident(node, GM_F(MatchAs, name)))
          add_binding(ident(node, GM_F(MatchAs, name)), BindingKind::MatchCapture, s, node, node,
                      {}, {}, nd.begin);
        break;
      case NodeKind::MatchStar:
        if (has_ident(node, GM_F(MatchStar, name)))
          add_binding(ident(node, GM_F(MatchStar, name)), BindingKind::MatchCapture, s, node, node,
                      {}, {}, nd.begin);
        break;
      case NodeKind::MatchMapping:
        if (has_ident(node, GM_F(MatchMapping, rest)))
          add_binding(ident(node, GM_F(MatchMapping, rest)), BindingKind::MatchCapture, s, node,
                      node, {}, {}, nd.begin);
        break;
      case NodeKind::TypeVar:
      case NodeKind::ParamSpec:
      case NodeKind::TypeVarTuple:
        add_binding(ident(node, 0), BindingKind::TypeParam, s, node, node, {}, {}, nd.begin);
        break;
      default: break;
    }
    children(node, stack, [&](int, NodeId) { return s; });
  }

  const Tree& t_;
  std::vector<Binding>& bindings_;
  std::vector<Scope>& scopes_;
};

}  // namespace

void Analyzer::build_scopes(Model& m) {
  const Tree& t = *m.tree_;
  const std::size_t n = t.node_count() + 1;
  m.parent_.assign(n, 0);
  m.node_scope_.assign(n, kNone);
  m.opened_scope_.assign(n, kNone);
  m.name_binding_.assign(n, kNone);
  m.slot_.assign(n, 0);
  m.postorder_.reserve(n);
  Pass1 p(t, m.bindings_, m.scopes_);
  p.parent = &m.parent_;
  p.node_scope = &m.node_scope_;
  p.opened = &m.opened_scope_;
  p.slot = &m.slot_;
  p.postorder = &m.postorder_;
  NodeId root = t.root();
  if (root.index >= n) root = {};
  p.run(root);

  for (const Decl& d : p.decls) {
    auto& v = m.decls_[Model::SymbolKey::of(d.scope, d.name)];
    v = static_cast<std::uint8_t>(v | d.what);
  }
  // Names bound syntactically per scope (for nonlocal targets).
  SymbolTable<bool> local;
  bool any_nonlocal = false;
  for (const Decl& d : p.decls) any_nonlocal |= (d.what & 2) != 0;
  if (any_nonlocal)
    for (const Binding& b : m.bindings_) local[Model::SymbolKey::of(b.scope, b.name)] = true;
  auto declared = [&](ScopeId s, std::string_view name) -> std::uint8_t {
    const std::uint8_t* d = m.decls_.find(Model::SymbolKey::of(s, name));
    return d ? *d : std::uint8_t{0};
  };
  // Most modules declare nothing global or nonlocal: no binding moves.
  for (Binding& b : p.decls.empty() ? std::span<Binding>{} : std::span<Binding>{m.bindings_}) {
    const std::uint8_t d = declared(b.scope, b.name);
    if (d & 1) {
      b.scope = 0;
    } else if (d & 2) {
      ScopeId s = m.scopes_[b.scope].parent;
      while (s != kNone && s != 0) {
        if (m.scopes_[s].kind != ScopeKind::Class) {
          const std::uint8_t ds = declared(s, b.name);
          if (ds & 1) {
            s = 0;
            break;
          }
          if (!(ds & 2) && local.contains(Model::SymbolKey::of(s, b.name))) break;
        }
        s = m.scopes_[s].parent;
      }
      if (s != kNone) b.scope = s;
    }
  }
  m.symbols_.reserve(m.bindings_.size());
  for (BindingId i = 0; i < m.bindings_.size(); ++i) {
    Binding& b = m.bindings_[i];
    auto& sym = m.symbols_[Model::SymbolKey::of(b.scope, b.name)];
    if (sym.last == kNone)
      sym.first = i;
    else
      m.bindings_[sym.last].next_in_symbol = i;
    sym.last = i;
    if (b.node.index < n) m.name_binding_[b.node.index] = i;
  }
  m.by_effective_.clear();
  m.by_effective_.reserve(m.bindings_.size());
  for (auto& [key, sym] : m.symbols_) {
    sym.order_begin = static_cast<std::uint32_t>(m.by_effective_.size());
    for (BindingId b = sym.first; b != kNone; b = m.bindings_[b].next_in_symbol) {
      if (m.bindings_[b].kind == BindingKind::Declaration) continue;
      m.by_effective_.push_back(b);
      sym.last_value = b;
      const NodeId at = m.bindings_[b].node;
      if (at.index < n && m.node_scope_[at.index] != key.scope) sym.foreign = true;
    }
    sym.order_count = static_cast<std::uint32_t>(m.by_effective_.size()) - sym.order_begin;
    // Binding ids grow in chain order, so ties keep it (stable). Most
    // symbols have a few bindings: an insertion sort, which is stable and,
    // unlike stable_sort, allocates no buffer.
    const auto first = m.by_effective_.begin() + sym.order_begin, last = m.by_effective_.end();
    auto earlier = [&](BindingId a, BindingId c) {
      return m.bindings_[a].effective < m.bindings_[c].effective;
    };
    if (sym.order_count > 16) {
      std::stable_sort(first, last, earlier);
      continue;
    }
    for (auto i = first; i != last; ++i)
      for (auto j = i; j != first && earlier(*j, *(j - 1)); --j) std::iter_swap(j, j - 1);
  }
  // Every loaded name resolved once: the rules and the fact sweeps ask again
  // and again, and each lookup walks the scope chain through hash tables.
  m.load_binding_.assign(n, kNone);
  for (NodeId id : m.postorder_) {
    if (t.kind(id) != NodeKind::Name || m.name_binding_[id.index] != kNone ||
        static_cast<NodeKind>(t.field(id, GM_F(Name, ctx)).a) != NodeKind::Load)
      continue;
    const ScopeId s = m.node_scope_[id.index];
    if (s == kNone) continue;
    ScopeId owner = kNone;
    const Model::Symbol* sym = m.lookup_symbol(s, Model::SymbolKey::of(0, m.name_text(id)), owner);
    if (owner == kNone) continue;
    const Binding* b = sym ? m.pick_binding(*sym, t.at(id).begin, owner == s) : nullptr;
    m.load_binding_[id.index] =
        b ? static_cast<std::uint32_t>(b - m.bindings_.data()) : Model::kBoundWithoutValue;
  }
  m.scope_owner_def_.assign(m.scopes_.size(), 0);
  for (ScopeId s = 0; s < m.scopes_.size(); ++s) {
    const Scope& sc = m.scopes_[s];
    if (sc.kind == ScopeKind::Function)
      m.scope_owner_def_[s] = sc.node.index;
    else if ((sc.kind == ScopeKind::Lambda || sc.kind == ScopeKind::Comprehension) &&
             sc.parent != kNone)
      m.scope_owner_def_[s] = m.scope_owner_def_[sc.parent];  // parents come first
  }
}

// ------------------------------------------------------------------ Model

ScopeId Model::scope_of(NodeId node) const {
  return node.index < node_scope_.size() ? node_scope_[node.index] : kNone;
}

ScopeId Model::scope_opened_by(NodeId node) const {
  return node.index < opened_scope_.size() ? opened_scope_[node.index] : kNone;
}

const Model::Symbol* Model::find_symbol(ScopeId scope, std::string_view name) const {
  return find_symbol(SymbolKey::of(scope, name));
}

const Model::Symbol* Model::find_symbol(const SymbolKey& key) const { return symbols_.find(key); }

std::vector<const Binding*> Model::bindings_of(ScopeId scope, std::string_view name) const {
  std::vector<const Binding*> out;
  if (const Symbol* s = find_symbol(scope, name))
    for (BindingId b = s->first; b != kNone; b = bindings_[b].next_in_symbol)
      out.push_back(&bindings_[b]);
  return out;
}

std::string_view Model::name_text(NodeId name) const {
  return tree_->text(tree_->field(name, GM_F(Name, id)));
}

// The scope that owns `name` as seen from `from` (kNone: not found).
std::uint32_t Model::lookup_scope(ScopeId from, std::string_view name,
                                  bool /*skip_first_class*/) const {
  return lookup_scope(from, SymbolKey::of(0, name));
}

ScopeId Model::lookup_scope(ScopeId from, const SymbolKey& key) const {
  ScopeId owner = kNone;
  lookup_symbol(from, key, owner);
  return owner;
}

const Model::Symbol* Model::lookup_symbol(ScopeId from, const SymbolKey& key,
                                          ScopeId& owner) const {
  ScopeId cur = from;
  bool first = true;
  owner = kNone;
  while (cur != kNone) {
    const Scope& sc = scopes_[cur];
    if (!first && sc.kind == ScopeKind::Class) {  // not visible from nested scopes
      cur = sc.parent;
      continue;
    }
    const std::uint8_t* d = decls_.find(key.in(cur));
    if (d) {
      if (*d & 1) {
        const Symbol* sym = find_symbol(key.in(0));
        if (sym) owner = 0;
        return sym;
      }
      // nonlocal: continue outwards (the owner is an enclosing function)
    } else if (const Symbol* sym = find_symbol(key.in(cur))) {
      owner = cur;
      return sym;
    }
    first = false;
    cur = sc.parent;
  }
  return nullptr;
}

// The binding in effect at `use` (the latest-effective one at or before it,
// the later-bound on ties) when `use` is in the owning scope, else the last
// one bound (a nested scope runs later).
const Binding* Model::pick_binding(const Symbol& sym, std::uint32_t use, bool same_scope) const {
  if (sym.last_value == kNone) return nullptr;
  if (same_scope)
    if (const Binding* b = effective_at(sym, use)) return b;
  return &bindings_[sym.last_value];
}

const Binding* Model::effective_at(const Symbol& sym, std::uint32_t use) const {
  const auto first = by_effective_.begin() + sym.order_begin;
  const auto it =
      std::upper_bound(first, first + sym.order_count, use,
                       [&](std::uint32_t u, BindingId b) { return u < bindings_[b].effective; });
  return it == first ? nullptr : &bindings_[*(it - 1)];
}

ScopeId Model::load_owner(NodeId name) const {
  const std::uint32_t b = load_binding_[name.index];
  if (b == kNone) return kNone;
  if (b != kBoundWithoutValue) return bindings_[b].scope;  // its symbol's scope
  return lookup_scope(node_scope_[name.index], name_text(name), false);
}

const Binding* Model::resolve(NodeId name) const {
  if (!name || name.index >= parent_.size()) return nullptr;
  const NodeKind k = tree_->kind(name);
  if (name_binding_[name.index] != kNone) return &bindings_[name_binding_[name.index]];
  if (k != NodeKind::Name) return nullptr;
  if (static_cast<NodeKind>(tree_->field(name, GM_F(Name, ctx)).a) == NodeKind::Load) {
    const std::uint32_t b = load_binding_[name.index];
    return b < kBoundWithoutValue ? &bindings_[b] : nullptr;
  }
  const ScopeId s = node_scope_[name.index];
  if (s == kNone) return nullptr;
  const std::string_view id = name_text(name);
  const ScopeId owner = lookup_scope(s, id, false);
  if (owner == kNone) return nullptr;
  const Symbol* sym = find_symbol(owner, id);
  if (!sym) return nullptr;
  return pick_binding(*sym, tree_->at(name).begin, owner == s);
}

NodeId Model::sole_value_at(NodeId use) const {
  const Tree& t = *tree_;
  if (!use || use.index >= parent_.size() || t.kind(use) != NodeKind::Name ||
      static_cast<NodeKind>(t.field(use, GM_F(Name, ctx)).a) != NodeKind::Load)
    return {};
  const Binding* r = resolve(use);
  if (!r) return {};
  const Symbol* sym = find_symbol(r->scope, r->name);
  if (!sym) return {};
  if (sym->first == sym->last)  // bound once
    return r->kind == BindingKind::Assign ? r->value : NodeId{};
  if (sym->foreign || node_scope_[use.index] != r->scope) return {};
  // The use's ancestors, up to and including the node of its scope.
  std::vector<NodeId> path;
  for (NodeId cur = use; cur; cur = parent(cur)) {
    path.push_back(cur);
    const NodeKind k = t.kind(cur);
    if (cur != use && (is_function_def(k) || k == NodeKind::Lambda || k == NodeKind::ClassDef ||
                       k == NodeKind::Module))
      break;
  }
  // Where a binding's node meets the path (its index there) and the child
  // it comes from; 0 when it does not (another scope's node).
  auto meet = [&](NodeId n, NodeId* side) -> std::size_t {
    for (NodeId cur = n; cur; *side = cur, cur = parent(cur))
      if (const auto it = std::find(path.begin(), path.end(), cur); it != path.end())
        return static_cast<std::size_t>(it - path.begin());
    return 0;
  };
  // The bindings in effect order (ties keep binding order): walk back from
  // the use to the nearest that runs on every path to it (a statement before
  // the use's ancestor in that ancestor's block); each one passed on the way
  // lies in the other arm of an `if` the use is in.
  const auto order =
      std::span<const BindingId>(by_effective_).subspan(sym->order_begin, sym->order_count);
  const std::uint32_t at_use = t.at(use).begin;
  auto split =
      std::upper_bound(order.begin(), order.end(), at_use,
                       [&](std::uint32_t u, BindingId b) { return u < bindings_[b].effective; });
  const Binding* b = nullptr;
  std::size_t block = 0;
  for (auto it = split; it != order.begin();) {
    const Binding& ob = bindings_[*--it];
    NodeId side = ob.node;
    const std::size_t at = meet(ob.node, &side);
    if (at == 0) return {};
    const NodeId below = path[at - 1];
    if (ob.binder && parent(ob.binder) == path[at] &&
        field_in_parent(ob.binder) == field_in_parent(below) &&
        t.at(ob.binder).end <= t.at(below).begin) {
      b = &ob;
      block = at;
      break;
    }
    const int fo = field_in_parent(side), fu = field_in_parent(below);
    const bool other_arm = t.kind(path[at]) == NodeKind::If && fo != fu &&
                           (fo == GM_F(If, body) || fo == GM_F(If, orelse)) &&
                           (fu == GM_F(If, body) || fu == GM_F(If, orelse));
    if (!other_arm) return {};
  }
  if (!b || b->kind != BindingKind::Assign || !b->value) return {};
  // A loop between the assignment's block and the use carries the value of
  // any binding inside it to the next pass: none may be there, neither the
  // ones passed above nor those after the use. The outermost such loop holds
  // the others.
  NodeId loop;
  for (std::size_t i = 1; i < block; ++i) {
    const NodeKind k = t.kind(path[i]);
    if (k == NodeKind::For || k == NodeKind::AsyncFor || k == NodeKind::While) loop = path[i];
  }
  if (!loop) return b->value;
  for (BindingId o : order) {
    const std::uint32_t pos = t.at(bindings_[o].node).begin;
    if (&bindings_[o] != b && pos >= t.at(loop).begin && pos < t.at(loop).end) return {};
  }
  return b->value;
}

bool Model::is_builtin(NodeId name) const {
  if (!name || name.index >= parent_.size() || tree_->kind(name) != NodeKind::Name) return false;
  const ScopeId s = node_scope_[name.index];
  if (s == kNone) return false;
  if (load_binding_[name.index] != kNone || name_binding_[name.index] != kNone) return false;
  const std::string_view id = name_text(name);
  if (static_cast<NodeKind>(tree_->field(name, GM_F(Name, ctx)).a) == NodeKind::Load)
    return is_python_builtin(id);  // load_binding_ is kNone: no scope binds it
  return lookup_scope(s, id, false) == kNone && is_python_builtin(id);
}

std::optional<std::string> Model::qualified_name(NodeId expr) const {
  return qualified_impl(expr, 0);
}

std::optional<std::string> Model::qualified_impl(NodeId expr, int depth) const {
  if (!expr || expr.index >= parent_.size() || depth > 8) return std::nullopt;
  switch (tree_->kind(expr)) {
    case NodeKind::Name: {
      const Binding* b = resolve(expr);
      if (!b) {
        if (is_builtin(expr)) return "builtins." + std::string(name_text(expr));
        return std::nullopt;
      }
      if (b->kind == BindingKind::Import || b->kind == BindingKind::ImportFrom) return b->qualified;
      // A plain alias: F = torch.nn.functional. Only when every binding of
      // the name in its scope agrees.
      if ((b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign) && b->value &&
          b->node != expr &&
          (tree_->kind(b->value) == NodeKind::Name ||
           tree_->kind(b->value) == NodeKind::Attribute)) {
        auto q = qualified_impl(b->value, depth + 1);
        if (!q) return std::nullopt;
        for (const Binding* o : bindings_of(b->scope, b->name)) {
          if (o == b || o->kind == BindingKind::Declaration) continue;
          if (!o->value) return std::nullopt;
          auto qo = qualified_impl(o->value, depth + 1);
          if (!qo || *qo != *q) return std::nullopt;
        }
        return q;
      }
      return std::nullopt;
    }
    case NodeKind::Attribute: {
      auto q = qualified_impl(tree_->child(expr, GM_F(Attribute, value)), depth + 1);
      if (!q) return std::nullopt;
      *q += '.';
      *q += tree_->text(tree_->field(expr, GM_F(Attribute, attr)));
      return q;
    }
    default: return std::nullopt;
  }
}

namespace {
bool is_logger_factory(std::string_view q) {
  if (q == "logging.getLogger" || q == "logging.Logger" || q == "logging.getLoggerClass" ||
      q == "logging.LoggerAdapter" || q == "accelerate.logging.get_logger")
    return true;
  if (starts_with(q, "transformers.") && ends_with(q, "logging.get_logger")) return true;
  if (starts_with(q, ".") && ends_with(q, "logging.get_logger")) return true;
  return false;
}
}  // namespace

bool Model::is_logger(NodeId expr) const {
  for (int depth = 0; depth < 8 && expr && expr.index < parent_.size(); ++depth) {
    switch (tree_->kind(expr)) {
      case NodeKind::Call: {
        const auto q = qualified_name(tree_->child(expr, GM_F(Call, func)));
        return q && is_logger_factory(*q);
      }
      case NodeKind::Name: {
        const Binding* b = resolve(expr);
        if (!b || !b->value || b->node == expr) return false;
        if (b->kind != BindingKind::Assign && b->kind != BindingKind::AnnAssign) return false;
        expr = b->value;
        break;
      }
      default: return false;
    }
  }
  return false;
}

bool Model::is_elif(NodeId stmt) const {
  const Tree& t = *tree_;
  if (!stmt || t.kind(stmt) != NodeKind::If) return false;
  const NodeId outer = parent(stmt);
  if (!outer || t.kind(outer) != NodeKind::If) return false;
  const auto orelse = t.children(outer, GM_F(If, orelse));
  return orelse.size() == 1 && orelse[0] == stmt &&
         t.at(stmt).pos.lineno > t.at(outer).pos.lineno &&
         t.at(stmt).pos.col_offset == t.at(outer).pos.col_offset;
}

Model analyze(const ast::Tree& tree, const Source& /*source*/, const AnalyzeOptions& options) {
  Model m;
  m.tree_ = &tree;
  Analyzer::build_scopes(m);
  Analyzer::build_classes(m);
  Analyzer::build_regions(m, options.extra_roots);
  if (options.all_functions) Analyzer::add_library_regions(m);
  if (options.region_nodes) Analyzer::index_region_nodes(m);
  if (options.facts && (!options.facts_need_regions || !m.regions_.empty()))
    Analyzer::build_facts(m);
  return m;
}

}  // namespace gm::sema

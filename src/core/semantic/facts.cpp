// Tensor facts: a flow-insensitive abstract interpretation over the whole
// module (with a sound straight-line refinement for names), iterated to a
// fixpoint. The lattice per expression is a product of bitsets (join = OR):
//   kinds  {Tensor, None, Other}   dtypes {Bool, Int, Float, Complex}
//   elems  (kinds of items, for sequences; a tensor's items are tensors)
//   shape  bottom(0) < root node id < top: expressions with the same root have
//          the same shape.
// Facts only ever grow (each step joins with the old value), so iteration
// terminates; the result is a post-fixpoint, hence sound for what the
// transfer functions model. Unknown calls give top.
#include <algorithm>
#include <deque>
#include <string>

#include "semantic/analyzer.h"
#include "semantic/tables.h"

namespace gm::sema {

using ast::NodeKind;
using ast::Tree;
using namespace detail;
using RF = RawFact;

namespace {

// Values kept for some nodes of one tree: a slot per node and the values
// packed, so a lookup in the sweeps is two array reads (a hash map's lookup
// cost more than the evaluation it served).
template <class T>
class NodeTable {
 public:
  explicit NodeTable(std::size_t nodes) : slot_(nodes, kEmpty) {}
  T& operator[](std::uint32_t node) {  // inserts a default T when absent
    std::uint32_t& s = slot_[node];
    if (s == kEmpty) {
      s = static_cast<std::uint32_t>(values_.size());
      values_.emplace_back();
    }
    return values_[s];
  }
  const T* find(std::uint32_t node) const {
    const std::uint32_t s = node < slot_.size() ? slot_[node] : kEmpty;
    return s == kEmpty ? nullptr : &values_[s];
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  std::vector<std::uint32_t> slot_;
  std::deque<T> values_;  // stable references while more are added
};

std::uint32_t shape_join(std::uint32_t a, std::uint32_t b) {
  if (a == 0) return b;
  if (b == 0 || a == b) return a;
  return RF::kShapeTop;
}

RF join(RF a, RF b) {
  return RF{static_cast<std::uint8_t>(a.kinds | b.kinds),
            static_cast<std::uint8_t>(a.dtypes | b.dtypes),
            static_cast<std::uint8_t>(a.elems | b.elems), shape_join(a.shape, b.shape)};
}

RF tensor(std::uint8_t dt, std::uint32_t shape) {
  return RF{RF::kTensor, dt ? dt : RF::kAnyDType, RF::kTensor, shape ? shape : RF::kShapeTop};
}
RF other(std::uint8_t dt = RF::kAnyDType, std::uint8_t elems = RF::kAll) {
  return RF{RF::kOther, dt, elems, RF::kShapeTop};
}
RF none_fact() { return RF{RF::kNoneV, 0, RF::kAll, RF::kShapeTop}; }
RF top() { return RF{RF::kAll, RF::kAnyDType, RF::kAll, RF::kShapeTop}; }

bool is_bottom(RF f) { return f.kinds == 0; }
// Evaluates as a tensor when evaluation succeeds (None would raise).
bool tensorish(RF f) { return (f.kinds & RF::kTensor) && !(f.kinds & RF::kOther); }
bool nontensor(RF f) { return f.kinds != 0 && !(f.kinds & RF::kTensor); }
bool single(std::uint8_t d) { return d != 0 && (d & (d - 1)) == 0; }

std::uint8_t promote(std::uint8_t a, std::uint8_t b) {
  if (!single(a) || !single(b)) return RF::kAnyDType;
  return std::max(a, b);  // Bool < Int < Float < Complex, as bits
}

RF elem_of(RF s) {
  if (is_bottom(s)) return {};
  const std::uint8_t k = s.elems ? s.elems : RF::kAll;
  RF r{k, static_cast<std::uint8_t>(k == RF::kTensor || k == RF::kOther ? s.dtypes : RF::kAnyDType),
       static_cast<std::uint8_t>(k == RF::kTensor ? RF::kTensor : RF::kAll), RF::kShapeTop};
  if (!r.dtypes) r.dtypes = RF::kAnyDType;
  return r;
}

std::uint8_t dtype_bits(RetDType d, RF base) {
  switch (d) {
    case RetDType::Same: return base.dtypes ? base.dtypes : RF::kAnyDType;
    case RetDType::Bool: return RF::kBool;
    case RetDType::Int: return RF::kInt;
    case RetDType::Float: return RF::kFloat;
    default: return RF::kAnyDType;
  }
}

bool is_simple_statement(NodeKind k) {
  switch (k) {
    case NodeKind::Assign:
    case NodeKind::AugAssign:
    case NodeKind::AnnAssign:
    case NodeKind::Expr:
    case NodeKind::Return:
    case NodeKind::Raise:
    case NodeKind::Assert:
    case NodeKind::Delete:
    case NodeKind::Import:
    case NodeKind::ImportFrom:
    case NodeKind::Pass:
    case NodeKind::Global:
    case NodeKind::Nonlocal:
    case NodeKind::Break:
    case NodeKind::Continue: return true;
    default: return false;
  }
}

bool definite_kind(BindingKind k) {
  switch (k) {
    case BindingKind::Assign:
    case BindingKind::AnnAssign:
    case BindingKind::AugAssign:
    case BindingKind::Import:
    case BindingKind::ImportFrom:
    case BindingKind::FunctionDef:
    case BindingKind::ClassDef:
    case BindingKind::Parameter: return true;
    default: return false;
  }
}

constexpr std::uint32_t kJoinBit = 0x80000000u;
constexpr std::uint32_t kBuiltinLoad = 0xfffffffeu;
constexpr std::uint32_t kUndefinedLoad = 0xfffffffdu;

struct FnInfo {
  std::vector<NodeId> returns;
  bool generator = false;
  bool falls_off = true;
  bool decorators_ok = true;
  bool async = false;
  RF ret;
};

struct CallPlan {
  // Select: `_graphmend_rt.where(cond, a, b)`, which is `a if cond else b`.
  enum Kind : std::uint8_t {
    Unknown,
    Torch,
    Builtin,
    Method,
    InFile,
    Constructor,
    TorchClass,
    Select
  };
  Kind kind = Unknown;
  CallInfo info;
  std::string_view name;       // builtin / method / torch function tail
  ops::Overload overload = ops::Overload::None;  // of `name` (torch / method)
  std::vector<NodeId> defs;    // InFile: functions whose returns join
  bool layer = false;          // a tensor-returning nn layer may be called
  bool complete = false;       // defs (+ layer) are all the call can reach
  bool dim_given = false;      // max/min/...: a dim argument
  std::uint8_t dtype_kw = 0;   // dtype= keyword, as bits
  std::uint8_t arg0_dtype = 0; // first argument names a dtype (x.to(torch.bool))
};

// Attribute loads: what does not depend on other facts, computed once.
struct AttrPlan {
  std::uint32_t self_cls = kNone;  // `self.attr` inside a method of this class
  bool method = false;             // self.<method>: a bound method
  std::vector<std::uint32_t> infos;  // matching Model::AttrInfo entries
  std::uint32_t class_sym = kNone;   // a class-level binding (first binding id)
  bool training = false;             // nn.Module.training
  RF constant;                     // torch.float32, math.pi, ...
};

}  // namespace

class FactsPass {
 public:
  explicit FactsPass(Model& m)
      : m_(m),
        t_(*m.tree_),
        fns_(t_.node_count() + 1),
        plans_(t_.node_count() + 1),
        attrs_(t_.node_count() + 1),
        params_(t_.node_count() + 1),
        by_binder_(t_.node_count() + 1) {}

  void run() {
    const std::size_t n = t_.node_count() + 1;
    m_.facts_.assign(n, RF{});
    prepare_loads();
    prepare_functions();
    prepare_calls();
    prepare_attributes();
    prepare_bindings();
    // A node is evaluated again only when its value can differ: a name, an
    // attribute or a call reads facts from elsewhere (bindings, attributes,
    // returns) and is evaluated in every sweep; any other node reads only
    // the facts of nodes below it, so it waits until one of them changes
    // (`stale`, set on the ancestors of a changed node). The sweeps and the
    // facts are those of evaluating every node in every sweep.
    std::vector<std::uint8_t> stale(n, 1);
    bool changed = true;
    int sweeps = 0;
    while (changed && sweeps < 64) {
      changed = false;
      ++sweeps;
      for (NodeId node : m_.postorder_) {
        const NodeKind k = t_.kind(node);
        if (stale[node.index] || k == NodeKind::Name || k == NodeKind::Attribute ||
            k == NodeKind::Call) {
          stale[node.index] = 0;
          const RF old = m_.facts_[node.index];
          const RF now = join(old, eval(node));
          if (!(now == old)) {
            m_.facts_[node.index] = now;
            changed = true;
            // postorder: a stale node's ancestors are stale until evaluated
            for (std::uint32_t p = m_.parent_[node.index]; p != 0 && !stale[p]; p = m_.parent_[p])
              stale[p] = 1;
          }
        }
        if (!is_binder_[node.index]) continue;
        // the names this statement binds take their new values
        for (std::uint32_t i : *by_binder_.find(node.index)) {
          const RF b = join(bfact_[i], binding_fact(m_.bindings_[i]));
          if (b == bfact_[i]) continue;
          bfact_[i] = b;
          symjoin_[symfirst_[i]] = join(symjoin_[symfirst_[i]], b);
          changed = true;
        }
      }
    }
    m_.fact_sweeps_ = sweeps;
    if (changed) {  // no fixpoint within the bound: give up soundly
      m_.facts_converged_ = false;
      for (auto& f : m_.facts_) f = top();
    }
  }

 private:
  static bool dynamic(BindingKind k) {
    return k == BindingKind::Assign || k == BindingKind::AnnAssign || k == BindingKind::NamedExpr ||
           k == BindingKind::AugAssign || k == BindingKind::For || k == BindingKind::Comprehension;
  }

  // Per-binding facts (bfact_) and per-symbol joins (symjoin_, indexed by the
  // symbol's first binding): constant ones now, the others as their binding
  // statements are evaluated in each sweep.
  void prepare_bindings() {
    const std::size_t nb = m_.bindings_.size();
    bfact_.assign(nb, RF{});
    symjoin_.assign(nb, RF{});
    symfirst_.assign(nb, 0);
    is_binder_.assign(t_.node_count() + 1, 0);
    for (const auto& [key, sym] : m_.symbols_)
      for (BindingId i = sym.first; i != kNone; i = m_.bindings_[i].next_in_symbol)
        symfirst_[i] = sym.first;
    for (BindingId i = 0; i < nb; ++i) {
      const Binding& b = m_.bindings_[i];
      if (dynamic(b.kind)) {
        is_binder_[b.binder.index] = 1;
        by_binder_[b.binder.index].push_back(i);
        continue;
      }
      if (b.kind == BindingKind::Parameter) {
        const RF* p = params_.find(b.node.index);
        bfact_[i] = p ? *p : top();
      } else {
        bfact_[i] = binding_fact(b);
      }
      symjoin_[symfirst_[i]] = join(symjoin_[symfirst_[i]], bfact_[i]);
    }
  }

  void prepare_attributes() {
    for (NodeId node : m_.postorder_) {
      if (t_.kind(node) == NodeKind::arg) {
        params_[node.index] = param_fact(node);
        continue;
      }
      if (t_.kind(node) != NodeKind::Attribute) continue;
      AttrPlan p;
      const NodeId v = t_.child(node, GM_F(Attribute, value));
      p.self_cls = m_.self_class(v);
      if (p.self_cls != kNone) {
        const std::string_view attr = t_.text(t_.field(node, GM_F(Attribute, attr)));
        p.method = static_cast<bool>(m_.find_method(p.self_cls, attr, false));
        const std::vector<std::uint32_t> owners = m_.with_in_file_bases(p.self_cls);
        for (std::uint32_t i : m_.attrs_in(owners, attr))
          if (!m_.attrs_[i].container) p.infos.push_back(i);
        // class attributes (x = 1 in the class body), first in MRO order
        for (std::uint32_t o : owners) {
          if (const Model::Symbol* sym = m_.find_symbol(m_.classes_[o].scope, attr)) {
            p.class_sym = sym->first;
            break;
          }
        }
        p.training =
            attr == "training" && m_.classes_[p.self_cls].confidence != ModuleConfidence::None;
      }
      if (p.self_cls == kNone &&
          (t_.kind(v) == NodeKind::Name || t_.kind(v) == NodeKind::Attribute)) {
        const auto q = m_.qualified_name(node);
        if (q) {
          if (dtype_from_qualified(*q)) p.constant = other();
          if (*q == "math.pi" || *q == "math.e" || *q == "math.inf" || *q == "math.nan")
            p.constant = other(RF::kFloat);
        }
      }
      if (p.self_cls != kNone || !is_bottom(p.constant)) attrs_[node.index] = p;
    }
  }

  // ---- names
  void prepare_loads() {
    load_.assign(t_.node_count() + 1, kNone);
    for (NodeId node : m_.postorder_) {
      if (t_.kind(node) != NodeKind::Name) continue;
      const auto ctx = static_cast<NodeKind>(t_.field(node, GM_F(Name, ctx)).a);
      if (ctx != NodeKind::Load && !(ctx == NodeKind::Store && aug_target(node))) continue;
      load_[node.index] = classify_load(node);
    }
  }

  bool aug_target(NodeId name) const {
    const NodeId p = m_.parent(name);
    return p && t_.kind(p) == NodeKind::AugAssign && t_.child(p, GM_F(AugAssign, target)) == name;
  }

  std::uint32_t classify_load(NodeId use) {
    const ScopeId s = m_.node_scope_[use.index];
    if (s == kNone) return kUndefinedLoad;
    const auto key = Model::SymbolKey::of(0, m_.name_text(use));
    // Load names were resolved once by build_scopes (an AugAssign target
    // is a Store: looked up here).
    const ScopeId owner = static_cast<NodeKind>(t_.field(use, GM_F(Name, ctx)).a) == NodeKind::Load
                              ? m_.load_owner(use)
                              : m_.lookup_scope(s, key);
    if (owner == kNone) return m_.is_builtin(use) ? kBuiltinLoad : kUndefinedLoad;
    const Model::Symbol* sym = m_.find_symbol(key.in(owner));
    if (!sym) return kUndefinedLoad;
    const std::uint32_t join_all = sym->first | kJoinBit;
    if (owner != s) return join_all;
    // Straight-line refinement: the last binding B before the use holds if
    // B's statement and the use's enclosing statement A are in the same
    // statement list, B is definite, and no other binding of the name can
    // run between B and the use.
    if (sym->foreign) return join_all;  // nonlocal/global/walrus
    const std::uint32_t use_at = t_.at(use).begin;
    const Binding* b = m_.effective_at(*sym, use_at);
    if (!b || !definite_kind(b->kind)) return join_all;
    NodeId list_parent;
    int list_slot = -1;
    std::uint32_t after = 0;
    if (b->kind == BindingKind::Parameter) {
      list_parent = m_.scopes_[owner].node;
      if (!list_parent || !is_function_def(t_.kind(list_parent))) return join_all;
      list_slot = GM_F(FunctionDef, body);
      after = b->effective;
    } else {
      const NodeId sb = b->binder;
      list_parent = m_.parent(sb);
      list_slot = m_.slot_[sb.index];
      after = t_.at(sb).end;
    }
    NodeId a = use;
    while (a && !(m_.parent(a) == list_parent && m_.slot_[a.index] == list_slot)) a = m_.parent(a);
    if (!a || t_.at(a).begin < after) return join_all;
    const std::uint32_t limit = is_simple_statement(t_.kind(a)) ? use_at : t_.at(a).end;
    for (BindingId i = sym->first; i != kNone; i = m_.bindings_[i].next_in_symbol) {
      const Binding& x = m_.bindings_[i];
      if (&x == b || x.kind == BindingKind::Declaration) continue;
      if (x.effective > b->effective && x.effective <= limit) return join_all;
      if (x.effective == b->effective && x.node.index != b->node.index) return join_all;
    }
    return static_cast<std::uint32_t>(b - m_.bindings_.data());
  }

  RF load_fact(NodeId use) const {
    const std::uint32_t l = load_[use.index];
    if (l == kBuiltinLoad) return other();
    if (l == kUndefinedLoad || l == kNone) return top();
    if (!(l & kJoinBit)) return bfact_[l];
    return symjoin_[l & ~kJoinBit];
  }

  RF binding_fact(const Binding& b) const {
    switch (b.kind) {
      case BindingKind::Assign:
      case BindingKind::AnnAssign:
      case BindingKind::NamedExpr:
        if (b.value) return m_.facts_[b.value.index];
        return unpacked(b);
      case BindingKind::AugAssign: {
        const NodeId stmt = b.binder;
        const auto op = static_cast<NodeKind>(t_.field(stmt, GM_F(AugAssign, op)).a);
        // old value: the target read as a load
        // the old value: the target read as a load (its own earlier values
        // included: an over-approximation)
        const RF old = load_[b.node.index] != kNone ? load_fact(b.node) : top();
        return binop(old, m_.facts_[b.source.index], op, b.node);
      }
      case BindingKind::For:
      case BindingKind::Comprehension: return unpacked(b);
      case BindingKind::ExceptAs:
      case BindingKind::Import:
      case BindingKind::FunctionDef:
      case BindingKind::ClassDef:
      case BindingKind::TypeParam: return other();
      case BindingKind::Parameter: return m_.facts_[b.node.index];
      case BindingKind::Delete:
      case BindingKind::Declaration: return {};
      default: return top();
    }
  }

  // The value a target name gets from unpacking (or iterating).
  RF unpacked(const Binding& b) const {
    // path from the binder's target down to the name
    NodeId path[16];
    int depth = 0;
    NodeId cur = b.node;
    while (cur && cur != b.binder && depth < 16) {
      path[depth++] = cur;
      cur = m_.parent(cur);
    }
    if (cur != b.binder) return top();
    // path[depth-1] is the whole target, path[0] the name
    RF v;
    const bool iterating = b.kind == BindingKind::For || b.kind == BindingKind::Comprehension;
    if (!b.source) return top();
    v = m_.facts_[b.source.index];
    int level = depth - 1;  // path[level] is the target at the current level
    if (iterating) {
      // enumerate / zip with a tuple target, nested as deep as the target
      // is (`for i, (x, y) in enumerate(zip(xs, ys))`): path[level] binds
      // the items of `src`.
      NodeId src = b.source;
      while (level >= 1 && t_.kind(path[level]) == NodeKind::Tuple &&
             t_.kind(src) == NodeKind::Call) {
        const auto& plan = plan_of(src);
        if (plan.kind != CallPlan::Builtin) break;
        auto args = t_.children(src, GM_F(Call, args));
        auto elts = t_.children(path[level], GM_F(Tuple, elts));
        std::size_t idx = 0;
        while (idx < elts.size() && elts[idx] != path[level - 1]) ++idx;
        if (plan.name == "enumerate" && elts.size() == 2 && !args.empty()) {
          if (idx == 0) return descend(other(RF::kInt), path, level - 1);
          src = args[0];
        } else if (plan.name == "zip" && idx < args.size() && elts.size() == args.size() &&
                   std::none_of(args.begin(), args.end(),
                                [&](NodeId a) { return t_.kind(a) == NodeKind::Starred; })) {
          src = args[idx];
        } else {
          break;
        }
        --level;
      }
      return descend(elem_of(m_.facts_[src.index]), path, level);
    }
    return descend(v, path, level);
  }

  // v is the value of path[level]; go down to path[0].
  RF descend(RF v, const NodeId* path, int level) const {
    while (level > 0) {
      const NodeId target = path[level];
      const NodeId next = path[level - 1];
      if (t_.kind(target) == NodeKind::Starred) {
        // *rest: a list of the items
        v = other(RF::kAnyDType, elem_of(v).kinds);
      } else if (t_.kind(next) == NodeKind::Starred) {
        // the starred item binds a list of items, handled at the next level
        // (v stays the sequence)
      } else {
        v = elem_of(v);
      }
      --level;
    }
    return v;
  }

  // ---- parameters
  RF annotation_fact(NodeId ann, int depth = 0) const {
    if (!ann || depth > 4) return top();
    switch (t_.kind(ann)) {
      case NodeKind::Constant: {
        const auto& cv = t_.constant_at(t_.field(ann, GM_F(Constant, value)));
        if (cv.kind == ast::ConstantValue::Kind::None) return none_fact();
        if (cv.kind != ast::ConstantValue::Kind::Str) return top();
        const std::string_view s = t_.str(cv.text);
        if (s == "torch.Tensor" || s == "Tensor") return tensor(RF::kAnyDType, 0);
        if (s == "Optional[torch.Tensor]" || s == "torch.Tensor | None" ||
            s == "Optional[Tensor]" || s == "Tensor | None")
          return join(tensor(RF::kAnyDType, 0), none_fact());
        return top();
      }
      case NodeKind::BinOp: {
        if (static_cast<NodeKind>(t_.field(ann, GM_F(BinOp, op)).a) != NodeKind::BitOr)
          return top();
        return join(annotation_fact(t_.child(ann, GM_F(BinOp, left)), depth + 1),
                    annotation_fact(t_.child(ann, GM_F(BinOp, right)), depth + 1));
      }
      case NodeKind::Subscript: {
        const auto q = m_.qualified_name(t_.child(ann, GM_F(Subscript, value)));
        const NodeId sl = t_.child(ann, GM_F(Subscript, slice));
        if (q && (*q == "typing.Optional"))
          return join(annotation_fact(sl, depth + 1), none_fact());
        if (q && *q == "typing.Union" && t_.kind(sl) == NodeKind::Tuple) {
          RF r;
          for (NodeId e : t_.children(sl, GM_F(Tuple, elts)))
            r = join(r, annotation_fact(e, depth + 1));
          return r;
        }
        return top();
      }
      case NodeKind::Name:
      case NodeKind::Attribute: {
        const auto q = m_.qualified_name(ann);
        if (!q) return top();
        if (*q == "torch.Tensor") return tensor(RF::kAnyDType, 0);
        if (*q == "torch.BoolTensor") return tensor(RF::kBool, 0);
        if (*q == "torch.LongTensor" || *q == "torch.IntTensor") return tensor(RF::kInt, 0);
        if (*q == "torch.FloatTensor" || *q == "torch.HalfTensor" || *q == "torch.DoubleTensor")
          return tensor(RF::kFloat, 0);
        if (*q == "builtins.int") return other(RF::kInt);
        if (*q == "builtins.float") return other(RF::kFloat);
        if (*q == "builtins.bool") return other(RF::kBool);
        if (*q == "builtins.str") return other();
        if (*q == "builtins.None") return none_fact();
        return top();
      }
      default: return top();
    }
  }

  RF param_fact(NodeId arg) const {
    const NodeId args = m_.parent(arg);
    const NodeId fn = args ? m_.parent(args) : NodeId{};
    if (!fn || !is_function_def(t_.kind(fn))) return top();
    const int slot = m_.slot_[arg.index];
    if (slot == GM_F(arguments, vararg)) return other(RF::kAnyDType, RF::kAll);
    if (slot == GM_F(arguments, kwarg)) return other();
    // self of a method
    auto po = t_.children(args, GM_F(arguments, posonlyargs));
    auto pa = t_.children(args, GM_F(arguments, args));
    const NodeId first = !po.empty() ? po[0] : (!pa.empty() ? pa[0] : NodeId{});
    if (first == arg && m_.method_class(fn) != kNone) {
      bool is_static = false;
      for (NodeId d : t_.children(fn, GM_F(FunctionDef, decorator_list)))
        if (t_.kind(d) == NodeKind::Name && m_.name_text(d) == "staticmethod") is_static = true;
      if (!is_static) return other();
    }
    RF r = annotation_fact(t_.child(arg, GM_F(arg, annotation)));
    if (r.kinds & RF::kTensor) r.shape = arg.index;
    // default None
    const NodeId dflt = default_of(args, arg);
    if (dflt && t_.kind(dflt) == NodeKind::Constant &&
        t_.constant_at(t_.field(dflt, GM_F(Constant, value))).kind ==
            ast::ConstantValue::Kind::None)
      r = join(r, none_fact());
    return r;
  }

  NodeId default_of(NodeId args, NodeId arg) const {
    auto po = t_.children(args, GM_F(arguments, posonlyargs));
    auto pa = t_.children(args, GM_F(arguments, args));
    auto defs = t_.children(args, GM_F(arguments, defaults));
    const std::size_t npos = po.size() + pa.size();
    for (std::size_t i = 0; i < npos; ++i) {
      const NodeId a = i < po.size() ? po[i] : pa[i - po.size()];
      if (a != arg) continue;
      const std::size_t first_default = npos - defs.size();
      return i >= first_default ? defs[i - first_default] : NodeId{};
    }
    auto kw = t_.children(args, GM_F(arguments, kwonlyargs));
    auto kwd = t_.children(args, GM_F(arguments, kw_defaults));
    for (std::size_t i = 0; i < kw.size() && i < kwd.size(); ++i)
      if (kw[i] == arg) return kwd[i];
    return {};
  }

  // ---- functions
  void prepare_functions() {
    for (NodeId node : m_.postorder_) {
      const NodeKind k = t_.kind(node);
      if (is_function_def(k)) {
        FnInfo& f = fns_[node.index];
        f.async = k == NodeKind::AsyncFunctionDef;
        auto body = t_.children(node, GM_F(FunctionDef, body));
        f.falls_off = body.empty() || !always_exits(body.back(), 0);
        for (NodeId d : t_.children(node, GM_F(FunctionDef, decorator_list))) {
          const NodeId e = t_.kind(d) == NodeKind::Call ? t_.child(d, GM_F(Call, func)) : d;
          const auto q = m_.qualified_name(e);
          const bool ok = q && (*q == "builtins.staticmethod" || *q == "builtins.classmethod" ||
                                *q == "torch.no_grad" || *q == "torch.inference_mode" ||
                                *q == "torch.compile" || *q == "torch.jit.unused" ||
                                *q == "torch.jit.ignore" || *q == "functools.wraps" ||
                                *q == "torch.enable_grad" || *q == "typing.overload");
          if (!ok) f.decorators_ok = false;
        }
        continue;
      }
      if (k != NodeKind::Return && k != NodeKind::Yield && k != NodeKind::YieldFrom) continue;
      const ScopeId s = m_.node_scope_[node.index];
      if (s == kNone) continue;
      // Returns belong to the function scope itself (not lambdas).
      if (m_.scopes_[s].kind == ScopeKind::Function) {
        FnInfo& f = fns_[m_.scopes_[s].node.index];
        if (k == NodeKind::Return)
          f.returns.push_back(node);
        else
          f.generator = true;
      } else if (m_.scopes_[s].kind != ScopeKind::Module &&
                 m_.scopes_[s].kind != ScopeKind::Class) {
        const std::uint32_t owner = m_.scope_owner_def_[s];
        (void)owner;  // yield inside a genexp/lambda belongs to that scope
      }
    }
  }

  bool always_exits(NodeId stmt, int depth) const {
    if (depth > 32) return false;
    switch (t_.kind(stmt)) {
      case NodeKind::Return:
      case NodeKind::Raise: return true;
      case NodeKind::If: {
        auto body = t_.children(stmt, GM_F(If, body));
        auto orelse = t_.children(stmt, GM_F(If, orelse));
        return !body.empty() && !orelse.empty() && always_exits(body.back(), depth + 1) &&
               always_exits(orelse.back(), depth + 1);
      }
      case NodeKind::With:
      case NodeKind::AsyncWith: {
        auto body = t_.children(stmt, GM_F(With, body));
        return !body.empty() && always_exits(body.back(), depth + 1);
      }
      default: return false;
    }
  }

  RF function_return(NodeId fn) const {
    const FnInfo* found = fns_.find(fn.index);
    if (!found) return top();
    const FnInfo& f = *found;
    if (!f.decorators_ok) return top();
    if (f.generator || f.async) return other();
    RF r;
    for (NodeId ret : f.returns) {
      const NodeId v = t_.child(ret, GM_F(Return, value));
      r = join(r, v ? m_.facts_[v.index] : none_fact());
    }
    if (f.falls_off) r = join(r, none_fact());
    // the caller sees its own shape (another evaluation)
    if (r.shape != 0) r.shape = RF::kShapeTop;
    return r;
  }

  // ---- calls
  void prepare_calls() {
    for (NodeId node : m_.postorder_)
      if (t_.kind(node) == NodeKind::Call) plans_[node.index] = make_plan(node);
  }

  const CallPlan& plan_of(NodeId call) const {
    static const CallPlan unknown;
    const CallPlan* p = plans_.find(call.index);
    return p ? *p : unknown;
  }

  static std::uint8_t dtype_from_qualified(std::string_view q) {
    if (!starts_with(q, "torch.")) return 0;
    const std::string_view d = q.substr(6);
    if (d == "bool") return RF::kBool;
    if (d == "float" || d == "float32" || d == "float16" || d == "half" || d == "bfloat16" ||
        d == "double" || d == "float64" || d == "float8_e4m3fn" || d == "float8_e5m2")
      return RF::kFloat;
    if (d == "long" || d == "int64" || d == "int" || d == "int32" || d == "int16" || d == "short" ||
        d == "int8" || d == "uint8")
      return RF::kInt;
    if (d == "complex64" || d == "complex128" || d == "cfloat" || d == "cdouble")
      return RF::kComplex;
    return 0;
  }

  CallPlan make_plan(NodeId call) {
    CallPlan p;
    const NodeId func = t_.child(call, GM_F(Call, func));
    auto args = t_.children(call, GM_F(Call, args));
    auto kws = t_.children(call, GM_F(Call, keywords));
    for (NodeId kw : kws) {
      if (Tree::is_none_string(t_.field(kw, GM_F(keyword, arg)))) continue;
      const std::string_view k = t_.text(t_.field(kw, GM_F(keyword, arg)));
      if (k == "dim") p.dim_given = true;
      if (k == "dtype") {
        const auto q = m_.qualified_name(t_.child(kw, GM_F(keyword, value)));
        p.dtype_kw = q ? dtype_from_qualified(*q) : 0;
        if (!p.dtype_kw) p.dtype_kw = RF::kAnyDType;
      }
    }
    if (!args.empty() && (t_.kind(args[0]) == NodeKind::Attribute)) {
      const auto qa = m_.qualified_name(args[0]);
      if (qa) p.arg0_dtype = dtype_from_qualified(*qa);
    }
    const auto q = m_.qualified_name(func);
    if (q && *q == "graphmend.runtime.where") {
      p.kind = CallPlan::Select;
      return p;
    }
    if (q && starts_with(*q, "torch.")) {
      p.kind = CallPlan::Torch;
      p.info = torch_function(*q);
      p.name = std::string_view(*q).substr(q->rfind('.') + 1);
      const std::string_view tail = std::string_view(*q).substr(6);
      if (p.info.ret == Ret::Unknown) {
        const ops::OpInfo* op = ops::lookup(tail);
        const auto ov = op ? op->overload : ops::Overload::None;
        if (ov == ops::Overload::MaxMin || ov == ops::Overload::Median ||
            ov == ops::Overload::Mode || ov == ops::Overload::Unique) {
          // decided per call in eval
        } else if (tail == "Tensor" || tail == "FloatTensor" || tail == "LongTensor" ||
                   tail == "BoolTensor" || tail == "IntTensor" || tail == "nn.Parameter" ||
                   tail == "nn.parameter.Parameter") {
          p.info = {Ret::Tensor, RetDType::Unknown, false};
          if (tail == "nn.Parameter" || tail == "nn.parameter.Parameter")
            p.info = {Ret::Tensor, RetDType::Same, true};
        } else if (is_torch_nn_module_class(*q)) {
          p.kind = CallPlan::TorchClass;
        }
      }
      // keep `name` pointing at stable storage
      names_.push_back(std::string(p.name));
      p.name = names_.back();
      if (const ops::OpInfo* op = ops::lookup(p.name)) p.overload = op->overload;
      return p;
    }
    if (q && starts_with(*q, "builtins.")) {
      p.kind = CallPlan::Builtin;
      names_.push_back(q->substr(9));
      p.name = names_.back();
      return p;
    }
    // in-file targets
    if (t_.kind(func) == NodeKind::Name) {
      const Binding* b = m_.resolve(func);
      if (b && b->kind == BindingKind::ClassDef) {
        p.kind = CallPlan::Constructor;
        return p;
      }
    }
    p.complete = resolve_targets(call, p);
    if (!p.defs.empty() || p.layer) {
      p.kind = CallPlan::InFile;
      return p;
    }
    if (t_.kind(func) == NodeKind::Attribute) {
      p.kind = CallPlan::Method;
      p.name = t_.text(t_.field(func, GM_F(Attribute, attr)));
      p.info = tensor_method(p.name);
      if (const ops::OpInfo* op = ops::lookup(p.name)) p.overload = op->overload;
    }
    return p;
  }

  // In-file functions / layers a call reaches; true when that is all it can
  // reach.
  bool resolve_targets(NodeId call, CallPlan& p) const {
    const NodeId func = t_.child(call, GM_F(Call, func));
    const NodeKind fk = t_.kind(func);
    if (fk == NodeKind::Name) {
      const Binding* b = m_.resolve(func);
      if (!b) return false;
      bool complete = true;
      for (const Binding* o : m_.bindings_of(b->scope, b->name)) {
        if (o->kind == BindingKind::Declaration) continue;
        const NodeId f = m_.function_of_binding(o, 0);
        if (f)
          p.defs.push_back(f);
        else
          complete = false;
      }
      if (!p.defs.empty()) return complete;
      // an instance: `layer(h)` with layer from self.layers
      return instance_targets(func, p);
    }
    if (fk == NodeKind::Attribute) {
      const NodeId obj = t_.child(func, GM_F(Attribute, value));
      const std::string_view attr = t_.text(t_.field(func, GM_F(Attribute, attr)));
      const std::uint32_t sc = m_.self_class(obj);
      if (sc != kNone) {
        const NodeId meth = m_.find_method(sc, attr, false);
        if (meth) {
          p.defs.push_back(meth);
          // a subclass may override it: only complete when no in-file class
          // derives from sc with the same method
          return !overridden(sc, attr);
        }
        return instance_targets(func, p);
      }
      std::vector<NodeId> out;
      m_.callees_impl(call, out, nullptr, nullptr);
      p.defs = out;
      return false;
    }
    if (fk == NodeKind::Subscript) return instance_targets(func, p);
    return false;
  }

  // An in-file subclass of `cls` defines `name` too (Model::derives_from).
  bool overridden(std::uint32_t cls, std::string_view name) const {
    for (std::uint32_t c = 0; c < m_.classes_.size(); ++c)
      if (c != cls && m_.derives_from(m_.classes_[c].node, m_.classes_[cls].node) &&
          m_.find_symbol(m_.classes_[c].scope, name))
        return true;
    return false;
  }

  // self.attr(...) / self.attr[i](...) / layer(...) for layer in self.attr
  bool instance_targets(NodeId func, CallPlan& p) const {
    NodeId self_expr, attr_node;
    bool container = false;
    switch (t_.kind(func)) {
      case NodeKind::Attribute: attr_node = func; break;
      case NodeKind::Subscript:
        attr_node = t_.child(func, GM_F(Subscript, value));
        container = true;
        break;
      case NodeKind::Name: {
        const Binding* b = m_.resolve(func);
        if (!b) return false;
        if (b->kind == BindingKind::For && b->source && m_.parent(b->node) == b->binder) {
          attr_node = b->source;
          if (t_.kind(attr_node) == NodeKind::Subscript &&
              t_.kind(t_.child(attr_node, GM_F(Subscript, slice))) == NodeKind::Slice)
            attr_node = t_.child(attr_node, GM_F(Subscript, value));
          container = true;
        } else if ((b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign) &&
                   b->value && t_.kind(b->value) == NodeKind::Subscript) {
          attr_node = t_.child(b->value, GM_F(Subscript, value));
          container = true;
        } else if ((b->kind == BindingKind::Assign || b->kind == BindingKind::AnnAssign) &&
                   b->value && t_.kind(b->value) == NodeKind::Attribute) {
          attr_node = b->value;
        } else {
          return false;
        }
        // only if the name has this single binding in its scope
        if (m_.bindings_of(b->scope, b->name).size() != 1) return false;
        break;
      }
      default: return false;
    }
    if (!attr_node || t_.kind(attr_node) != NodeKind::Attribute) return false;
    self_expr = t_.child(attr_node, GM_F(Attribute, value));
    const std::uint32_t c = m_.self_class(self_expr);
    if (c == kNone) return false;
    const std::string_view attr = t_.text(t_.field(attr_node, GM_F(Attribute, attr)));
    const std::vector<std::uint32_t> owners = m_.with_in_file_bases(c);
    bool any = false, complete = true;
    for (std::uint32_t i : m_.attrs_in(owners, attr)) {
      const auto& a = m_.attrs_[i];
      if (a.container != container) continue;
      any = true;
      if (a.value_class != kNone) {
        const NodeId fwd = m_.find_method(a.value_class, "forward", false);
        if (fwd)
          p.defs.push_back(fwd);
        else
          complete = false;
      } else if (a.nn_layer) {
        p.layer = true;
      } else {
        complete = false;
      }
    }
    return any && complete;
  }

  RF attr_fact(NodeId expr, const AttrPlan& plan) const {
    if (plan.method) return other();  // a bound method
    RF r;
    bool any = false;
    for (std::uint32_t i : plan.infos) {
      const auto& a = m_.attrs_[i];
      any = true;
      if (a.value_class != kNone || a.nn_layer) {
        r = join(r, other());
      } else if (a.tensor) {
        const RF v = a.value ? m_.facts_[a.value.index] : RF{};
        const bool is_none = a.value && t_.kind(a.value) == NodeKind::Constant &&
                             t_.constant_at(t_.field(a.value, GM_F(Constant, value))).kind ==
                                 ast::ConstantValue::Kind::None;
        r = join(
            r, is_none ? none_fact() : tensor(tensorish(v) ? v.dtypes : RF::kAnyDType, expr.index));
      } else {
        r = join(r, a.value ? m_.facts_[a.value.index] : top());
      }
    }
    if (plan.class_sym != kNone) {
      r = join(r, symjoin_[plan.class_sym]);
      any = true;
    }
    if (plan.training && !any) return other(RF::kBool);
    if (!any) return top();
    // shapes of attributes are not tracked across methods
    if (r.kinds & RF::kTensor) r.shape = expr.index;
    return r;
  }

  RF apply(const CallInfo& info, RF base, std::uint32_t self_shape, std::uint8_t dtype_kw) const {
    switch (info.ret) {
      case Ret::Tensor: {
        std::uint8_t dt = dtype_bits(info.dtype, base);
        if (info.dtype == RetDType::FromArgs) dt = dtype_kw ? dtype_kw : RF::kAnyDType;
        return tensor(dt, info.same_shape && base.shape != 0 ? base.shape : self_shape);
      }
      case Ret::NotTensor: return other();
      case Ret::TensorSeq: return other(RF::kAnyDType, RF::kTensor);
      case Ret::IntSeq: return other(RF::kInt, RF::kOther);
      default: return top();
    }
  }

  RF eval_call(NodeId call) const {
    const CallPlan& p = plan_of(call);
    auto args = t_.children(call, GM_F(Call, args));
    const bool has_kw = !t_.children(call, GM_F(Call, keywords)).empty();
    const RF a0 = args.empty() ? RF{} : m_.facts_[args[0].index];
    using ops::Overload;
    const Overload ov = p.overload;
    // max/min (MaxMin), median/nanmedian (Median), mode (Mode): a reduction,
    // (values, indices) with a dim, or (MaxMin) elementwise with a tensor.
    const bool reduces_or_pairs =
        ov == Overload::MaxMin || ov == Overload::Median || ov == Overload::Mode;
    switch (p.kind) {
      case CallPlan::Torch: {
        if (ov == Overload::Where && args.size() == 1 && !has_kw)
          return other(RF::kAnyDType, RF::kTensor);
        if (ov == Overload::Nonzero && has_kw) return top();
        if (p.info.ret == Ret::Unknown && reduces_or_pairs) {
          if (args.size() == 1 && !has_kw && ov != Overload::Mode)
            return tensor(a0.dtypes, call.index);
          if (args.size() == 2 && !has_kw && tensorish(m_.facts_[args[1].index]) &&
              ov == Overload::MaxMin)
            return tensor(promote(a0.dtypes, m_.facts_[args[1].index].dtypes), call.index);
          if (p.dim_given || (args.size() >= 2 && nontensor(m_.facts_[args[1].index])))
            return other(RF::kAnyDType, RF::kTensor);
          return top();
        }
        if (ov == Overload::Unique) return has_kw ? top() : tensor(a0.dtypes, call.index);
        if (ov == Overload::SumProd && tensorish(a0)) {
          const std::uint8_t dt = p.dtype_kw                                   ? p.dtype_kw
                                  : single(a0.dtypes) && a0.dtypes <= RF::kInt ? RF::kInt
                                                                               : a0.dtypes;
          return tensor(dt, call.index);
        }
        if (p.info.ret == Ret::Unknown) return top();
        return apply(p.info, a0, call.index, p.dtype_kw);
      }
      case CallPlan::TorchClass:
      case CallPlan::Constructor: return other();
      case CallPlan::Select:  // the arm it returns, as for `a if cond else b`
        if (args.size() < 3) return top();
        return join(m_.facts_[args[1].index], m_.facts_[args[2].index]);
      case CallPlan::Builtin: {
        const std::string_view n = p.name;
        if (n == "len" || n == "int" || n == "hash" || n == "id" || n == "ord")
          return other(RF::kInt);
        if (n == "isinstance" || n == "issubclass" || n == "hasattr" || n == "callable" ||
            n == "bool" || n == "any" || n == "all")
          return other(RF::kBool);
        if (n == "float") return other(RF::kFloat);
        if (n == "str" || n == "repr" || n == "format" || n == "chr" || n == "type" ||
            n == "print" || n == "range" || n == "enumerate" || n == "zip" || n == "dict" ||
            n == "set" || n == "frozenset" || n == "list" || n == "sorted" || n == "reversed" ||
            n == "map" || n == "filter" || n == "iter" || n == "super" || n == "object" ||
            n == "divmod" || n == "ascii" || n == "bin" || n == "hex" || n == "oct")
          return other();
        if (n == "tuple")
          return args.size() == 1 ? other(RF::kAnyDType, elem_of(a0).kinds) : other();
        if (n == "abs" && args.size() == 1) {
          if (tensorish(a0)) return tensor(a0.dtypes, a0.shape);
          if (nontensor(a0)) return other(a0.dtypes);
          return is_bottom(a0) ? RF{} : top();
        }
        if (n == "round" && args.size() == 1 && nontensor(a0)) return other(RF::kInt);
        return top();
      }
      case CallPlan::InFile: {
        RF r;
        for (NodeId f : p.defs) r = join(r, function_return(f));
        if (p.layer) r = join(r, tensor(RF::kAnyDType, call.index));
        if (!p.complete) r = join(r, top());
        if ((r.kinds & RF::kTensor) && r.shape != 0) r.shape = call.index;
        return r;
      }
      case CallPlan::Method: {
        const NodeId func = t_.child(call, GM_F(Call, func));
        const RF recv = m_.facts_[t_.child(func, GM_F(Attribute, value)).index];
        if (is_bottom(recv)) return {};
        if (!tensorish(recv)) return top();
        if (ov == Overload::Size)
          return args.empty() && !has_kw ? other(RF::kInt, RF::kOther) : other(RF::kInt);
        if (ov == Overload::Item)
          return other(single(recv.dtypes) ? (recv.dtypes == RF::kBool ? RF::kBool : recv.dtypes)
                                           : RF::kAnyDType);
        if (reduces_or_pairs) {
          if (args.empty() && !has_kw && ov != Overload::Mode)
            return tensor(recv.dtypes, call.index);
          if (ov == Overload::MaxMin) {
            if (args.size() == 1 && !has_kw && tensorish(m_.facts_[args[0].index]))
              return tensor(promote(recv.dtypes, m_.facts_[args[0].index].dtypes), call.index);
          }
          if (p.dim_given || (!args.empty() && nontensor(a0)))
            return other(RF::kAnyDType, RF::kTensor);
          return top();
        }
        if (ov == Overload::Unique) return has_kw ? top() : tensor(recv.dtypes, call.index);
        if (ov == Overload::SumProd) {
          const std::uint8_t dt = p.dtype_kw                                       ? p.dtype_kw
                                  : single(recv.dtypes) && recv.dtypes <= RF::kInt ? RF::kInt
                                                                                   : recv.dtypes;
          return tensor(dt, call.index);
        }
        if (ov == Overload::To && !args.empty()) {
          const std::uint8_t d = p.arg0_dtype;
          return tensor(d ? d : (p.dtype_kw ? p.dtype_kw : RF::kAnyDType), recv.shape);
        }
        if (ov == Overload::To) return tensor(p.dtype_kw ? p.dtype_kw : recv.dtypes, recv.shape);
        if (p.info.ret == Ret::Unknown) return top();
        // comparisons / arithmetic as methods: same shape only with a scalar
        CallInfo info = p.info;
        if (info.same_shape && !args.empty() && !nontensor(a0) && ov == Overload::Compare)
          info.same_shape = false;
        return apply(info, recv, call.index, p.dtype_kw);
      }
      default: return top();
    }
  }

  RF binop(RF a, RF b, NodeKind op, NodeId node) const {
    if (is_bottom(a) || is_bottom(b)) return {};
    if (tensorish(a) || tensorish(b)) {
      std::uint8_t dt = promote(a.dtypes, b.dtypes);
      if (op == NodeKind::Div && single(dt) && dt < RF::kFloat) dt = RF::kFloat;
      if ((op == NodeKind::BitAnd || op == NodeKind::BitOr || op == NodeKind::BitXor) &&
          a.dtypes == RF::kBool && b.dtypes == RF::kBool)
        dt = RF::kBool;
      std::uint32_t shape = node.index;
      if (op != NodeKind::MatMult) {
        if (tensorish(a) && nontensor(b))
          shape = a.shape;
        else if (tensorish(b) && nontensor(a))
          shape = b.shape;
        else if (tensorish(a) && tensorish(b) && a.shape == b.shape && a.shape != RF::kShapeTop)
          shape = a.shape;
      }
      return tensor(dt, shape);
    }
    if (nontensor(a) && nontensor(b)) {
      std::uint8_t dt = promote(a.dtypes, b.dtypes);
      if (op == NodeKind::Div && single(dt)) dt = RF::kFloat;
      return other(dt);
    }
    return top();
  }

  RF eval(NodeId n) const {
    switch (t_.kind(n)) {
      case NodeKind::Constant: {
        const auto& cv = t_.constant_at(t_.field(n, GM_F(Constant, value)));
        using K = ast::ConstantValue::Kind;
        switch (cv.kind) {
          case K::None: return none_fact();
          case K::True:
          case K::False: return other(RF::kBool);
          case K::Int: return other(RF::kInt);
          case K::Float: return other(RF::kFloat);
          case K::Complex: return other(RF::kComplex);
          default: return other();
        }
      }
      case NodeKind::JoinedStr:
      case NodeKind::FormattedValue:
      case NodeKind::Dict:
      case NodeKind::Set:
      case NodeKind::ListComp:
      case NodeKind::SetComp:
      case NodeKind::DictComp:
      case NodeKind::GeneratorExp:
      case NodeKind::Lambda:
      case NodeKind::Slice:
      case NodeKind::List: return other();
      case NodeKind::Tuple: {
        RF el;
        for (NodeId e : t_.children(n, GM_F(Tuple, elts))) {
          const RF f = m_.facts_[e.index];
          el = join(el, t_.kind(e) == NodeKind::Starred
                            ? elem_of(m_.facts_[t_.child(e, GM_F(Starred, value)).index])
                            : f);
        }
        return other(RF::kAnyDType, el.kinds);
      }
      case NodeKind::Name: {
        const auto ctx = static_cast<NodeKind>(t_.field(n, GM_F(Name, ctx)).a);
        if (ctx == NodeKind::Load) return load_fact(n);
        if (ctx == NodeKind::Store) {
          const std::uint32_t b = m_.name_binding_[n.index];
          return b == kNone ? top() : bfact_[b];
        }
        return {};
      }
      case NodeKind::arg: {
        const RF* p = params_.find(n.index);
        return p ? *p : top();
      }
      case NodeKind::NamedExpr: return m_.facts_[t_.child(n, GM_F(NamedExpr, value)).index];
      case NodeKind::BoolOp: {
        RF r;
        for (NodeId v : t_.children(n, GM_F(BoolOp, values))) r = join(r, m_.facts_[v.index]);
        return r;
      }
      case NodeKind::IfExp:
        return join(m_.facts_[t_.child(n, GM_F(IfExp, body)).index],
                    m_.facts_[t_.child(n, GM_F(IfExp, orelse)).index]);
      case NodeKind::UnaryOp: {
        const auto op = static_cast<NodeKind>(t_.field(n, GM_F(UnaryOp, op)).a);
        const RF a = m_.facts_[t_.child(n, GM_F(UnaryOp, operand)).index];
        if (op == NodeKind::Not) return other(RF::kBool);
        if (is_bottom(a)) return {};
        if (tensorish(a)) return tensor(a.dtypes, a.shape);
        if (nontensor(a))
          return other(op == NodeKind::Invert && a.dtypes == RF::kBool ? RF::kInt : a.dtypes);
        return top();
      }
      case NodeKind::BinOp:
        return binop(m_.facts_[t_.child(n, GM_F(BinOp, left)).index],
                     m_.facts_[t_.child(n, GM_F(BinOp, right)).index],
                     static_cast<NodeKind>(t_.field(n, GM_F(BinOp, op)).a), n);
      case NodeKind::Compare: {
        const auto ops = t_.raw_list(n, GM_F(Compare, ops));
        auto comps = t_.children(n, GM_F(Compare, comparators));
        const RF a = m_.facts_[t_.child(n, GM_F(Compare, left)).index];
        if (ops.size() == 1 && !comps.empty()) {
          const auto op = static_cast<NodeKind>(ops[0].index);
          if (op == NodeKind::Is || op == NodeKind::IsNot || op == NodeKind::In ||
              op == NodeKind::NotIn)
            return other(RF::kBool);
          const RF b = m_.facts_[comps[0].index];
          if (is_bottom(a) || is_bottom(b)) return {};
          // tensor vs a Python number (not None, not a string: those give a
          // Python bool)
          auto number = [](RF f) {
            return f.kinds == RF::kOther && single(f.dtypes) && f.dtypes != RF::kComplex;
          };
          if ((a.kinds == RF::kTensor && number(b)) || (b.kinds == RF::kTensor && number(a)))
            return tensor(RF::kBool, a.kinds == RF::kTensor ? a.shape : b.shape);
          if (a.kinds == RF::kTensor && b.kinds == RF::kTensor)
            return tensor(RF::kBool,
                          a.shape == b.shape && a.shape != RF::kShapeTop ? a.shape : n.index);
          if (nontensor(a) && nontensor(b)) return other(RF::kBool);
          return top();
        }
        bool all_plain = nontensor(a);
        for (NodeId c : comps) all_plain = all_plain && nontensor(m_.facts_[c.index]);
        return all_plain ? other(RF::kBool) : top();
      }
      case NodeKind::Call: return eval_call(n);
      case NodeKind::Attribute: {
        const auto ctx = static_cast<NodeKind>(t_.field(n, GM_F(Attribute, ctx)).a);
        if (ctx != NodeKind::Load) return {};
        const NodeId v = t_.child(n, GM_F(Attribute, value));
        const RF rv = m_.facts_[v.index];
        const std::string_view attr = t_.text(t_.field(n, GM_F(Attribute, attr)));
        if (tensorish(rv)) {
          const CallInfo info = tensor_attribute(attr);
          if (info.ret == Ret::Unknown) return top();
          return apply(info, rv, n.index, 0);
        }
        const AttrPlan* a = attrs_.find(n.index);
        if (!a) return top();
        if (a->self_cls != kNone) return attr_fact(n, *a);
        return a->constant;
      }
      case NodeKind::Subscript: {
        const auto ctx = static_cast<NodeKind>(t_.field(n, GM_F(Subscript, ctx)).a);
        if (ctx != NodeKind::Load) return {};
        const RF v = m_.facts_[t_.child(n, GM_F(Subscript, value)).index];
        if (is_bottom(v)) return {};
        if (tensorish(v)) return tensor(v.dtypes, n.index);
        if (v.kinds == RF::kOther) {
          const NodeId sl = t_.child(n, GM_F(Subscript, slice));
          if (t_.kind(sl) == NodeKind::Slice) return other(v.dtypes, v.elems ? v.elems : RF::kAll);
          return elem_of(v);
        }
        return top();
      }
      case NodeKind::Starred:
      case NodeKind::Await:
      case NodeKind::Yield:
      case NodeKind::YieldFrom: return top();
      default: return {};  // statements and helper records carry no value
    }
  }

  Model& m_;
  const Tree& t_;
  std::vector<std::uint32_t> load_;
  NodeTable<FnInfo> fns_;
  NodeTable<CallPlan> plans_;
  NodeTable<AttrPlan> attrs_;
  NodeTable<RF> params_;
  std::vector<RF> bfact_;
  std::vector<RF> symjoin_;
  std::vector<std::uint32_t> symfirst_;
  std::vector<std::uint8_t> is_binder_;
  NodeTable<std::vector<std::uint32_t>> by_binder_;
  std::deque<std::string> names_;  // stable storage for CallPlan::name
};

void Analyzer::build_facts(Model& m) {
  FactsPass f(m);
  f.run();
}

TensorFact Model::fact(NodeId expr) const {
  TensorFact out;
  if (!expr || expr.index >= facts_.size()) return out;
  const RF f = facts_[expr.index];
  auto kind_of = [](std::uint8_t k) {
    if (k == RF::kTensor) return TensorKind::Tensor;
    if (k == (RF::kTensor | RF::kNoneV)) return TensorKind::TensorOrNone;
    if (k != 0 && !(k & RF::kTensor)) return TensorKind::NotTensor;
    return TensorKind::Unknown;
  };
  out.kind = kind_of(f.kinds);
  out.is_none = f.kinds == RF::kNoneV;
  if (out.kind == TensorKind::Tensor || out.kind == TensorKind::TensorOrNone ||
      out.kind == TensorKind::NotTensor) {
    switch (f.dtypes) {
      case RF::kBool: out.dtype = DType::Bool; break;
      case RF::kInt: out.dtype = DType::Integer; break;
      case RF::kFloat: out.dtype = DType::Floating; break;
      case RF::kComplex: out.dtype = DType::Complex; break;
      default: break;
    }
  }
  if ((out.kind == TensorKind::Tensor || out.kind == TensorKind::TensorOrNone) && f.shape != 0 &&
      f.shape != RF::kShapeTop)
    out.same_shape_as = NodeId{f.shape};
  out.element = kind_of(f.elems);
  return out;
}

bool Model::same_shape(NodeId a, NodeId b) const {
  const TensorFact fa = fact(a), fb = fact(b);
  return fa.same_shape_as && fa.same_shape_as == fb.same_shape_as;
}

bool Model::same_dtype(NodeId a, NodeId b) const {
  const NodeId ra = dtype_root(a, 0);
  return ra && ra == dtype_root(b, 0);
}

// The parameter or local binding whose dtype `e` has, else None.
NodeId Model::dtype_root(NodeId e, int depth) const {
  if (!e || depth > 32) return {};
  const Tree& t = *tree_;
  const auto floating = [&](NodeId x) { return fact(x).dtype == DType::Floating; };
  switch (t.kind(e)) {
    case NodeKind::Name: {
      if (static_cast<NodeKind>(t.field(e, GM_F(Name, ctx)).a) != NodeKind::Load) return {};
      const Binding* b = resolve(e);
      if (!b || bindings_of(b->scope, b->name).size() != 1) return {};
      if (b->kind == BindingKind::Parameter) return b->node;
      if (b->kind != BindingKind::Assign || !b->value) return {};
      const NodeId r = dtype_root(b->value, depth + 1);
      return r ? r : b->node;
    }
    case NodeKind::UnaryOp: {
      const auto op = static_cast<NodeKind>(t.field(e, GM_F(UnaryOp, op)).a);
      const NodeId x = t.child(e, GM_F(UnaryOp, operand));
      return op == NodeKind::USub && fact(x).dtype != DType::Bool ? dtype_root(x, depth + 1)
                                                                  : NodeId{};
    }
    case NodeKind::BinOp: {
      const auto op = static_cast<NodeKind>(t.field(e, GM_F(BinOp, op)).a);
      const NodeId l = t.child(e, GM_F(BinOp, left)), r = t.child(e, GM_F(BinOp, right));
      // int / int is float: division keeps only a floating dtype.
      if (op != NodeKind::Add && op != NodeKind::Sub && op != NodeKind::Mult &&
          !(op == NodeKind::Div && floating(l) && floating(r)))
        return {};
      // A Python number does not promote a tensor of its kind or above.
      const auto number = [&](NodeId c, NodeId x) {
        if (t.kind(c) != NodeKind::Constant) return false;
        const auto k = t.constant_at(t.field(c, GM_F(Constant, value))).kind;
        const DType d = fact(x).dtype;
        return (k == ast::ConstantValue::Kind::Int &&
                (d == DType::Integer || d == DType::Floating)) ||
               (k == ast::ConstantValue::Kind::Float && d == DType::Floating);
      };
      if (number(r, l)) return dtype_root(l, depth + 1);
      if (number(l, r)) return dtype_root(r, depth + 1);
      const NodeId rl = dtype_root(l, depth + 1);
      return rl && rl == dtype_root(r, depth + 1) ? rl : NodeId{};
    }
    case NodeKind::Call: {
      if (!t.children(e, GM_F(Call, keywords)).empty()) return {};  // dtype=, out=
      const NodeId func = t.child(e, GM_F(Call, func));
      const auto args = t.children(e, GM_F(Call, args));
      const ops::OpInfo* op = nullptr;
      const CallInfo* info = nullptr;
      NodeId input;
      std::size_t extra = args.size();  // positional arguments besides the input
      if (const auto q = qualified_name(func)) {
        op = ops::lookup_qualified(*q);
        if (!op || args.empty()) return {};
        info = op->function.ret != Ret::Unknown ? &op->function : &op->functional;
        input = args[0];
        extra = args.size() - 1;
      } else if (t.kind(func) == NodeKind::Attribute) {
        op = ops::lookup(t.text(t.field(func, GM_F(Attribute, attr))));
        if (!op) return {};
        info = &op->method;
        input = t.child(func, GM_F(Attribute, value));
      } else {
        return {};
      }
      bool same = info->ret == Ret::Tensor && info->dtype == RetDType::Same &&
                  op->overload != ops::Overload::SumProd;
      // A whole-tensor max/min/median/mode: one value of the input.
      const auto ov = op->overload;
      if ((ov == ops::Overload::MaxMin || ov == ops::Overload::Median ||
           ov == ops::Overload::Mode) &&
          op->has(ops::Reduction) && extra == 0)
        same = true;
      // mean/std/norm/logsumexp and sums keep a floating input's dtype.
      if (info->ret == Ret::Tensor && op->has(ops::Reduction) &&
          (info->dtype == RetDType::Float || ov == ops::Overload::SumProd) && floating(input))
        same = true;
      return same ? dtype_root(input, depth + 1) : NodeId{};
    }
    default: return {};
  }
}

TensorEvidence Model::tensor_evidence(NodeId e) const { return tensor_evidence_impl(e, 0); }

namespace {
// Evidence enough for what holds the value (a name, an arm of `where`).
bool tensor_held(TensorEvidence ev) {
  return ev == TensorEvidence::Proven || ev == TensorEvidence::Syntactic;
}
}  // namespace

TensorEvidence Model::tensor_evidence_impl(NodeId e, int depth) const {
  const TensorKind k = fact(e).kind;
  if (k == TensorKind::Tensor) return TensorEvidence::Proven;
  if (k == TensorKind::NotTensor) return TensorEvidence::NotTensor;
  const Tree& t = *tree_;
  if (!e) return TensorEvidence::Unknown;
  if (t.kind(e) == NodeKind::Name) {
    // `s = x.sum()` then `s > 0`: the name holds what the call returned, as
    // sure as the call itself (the only assignment that reaches this use).
    if (depth >= 8) return TensorEvidence::Unknown;
    const NodeId value = sole_value_at(e);
    if (!value) return TensorEvidence::Unknown;
    // (A proven tensor too: the name's own fact joins every binding, so
    // `loss = None` before `loss = F.cross_entropy(...)` leaves it Unknown.)
    return tensor_held(tensor_evidence_impl(value, depth + 1)) ? TensorEvidence::Syntactic
                                                               : TensorEvidence::Unknown;
  }
  if (t.kind(e) != NodeKind::Call) return TensorEvidence::Unknown;
  const NodeId func = t.child(e, GM_F(Call, func));
  if (t.kind(func) != NodeKind::Attribute) return TensorEvidence::Unknown;
  if (const auto q = qualified_name(func)) {
    // graphmend's own helpers, so that mended code reads as its original
    // did and a later round of the fix loop still sees the tensor.
    if (depth < 8) return runtime_evidence(*q, e, depth);
    return TensorEvidence::Unknown;
  }
  const ops::OpInfo* op = ops::lookup(t.text(t.field(func, GM_F(Attribute, attr))));
  if (!op || op->evidence == ops::Evidence::None) return TensorEvidence::Unknown;
  return fact(t.child(func, GM_F(Attribute, value))).kind == TensorKind::NotTensor
             ? TensorEvidence::Unknown
             : TensorEvidence::Syntactic;
}

bool Model::one_element(NodeId e) const { return one_element_impl(e, 0); }

bool Model::one_element_impl(NodeId e, int depth) const {
  const Tree& t = *tree_;
  if (!e || depth >= 8) return false;
  if (t.kind(e) == NodeKind::Name) return one_element_impl(sole_value_at(e), depth + 1);
  if (t.kind(e) != NodeKind::Call) return false;
  for (NodeId k : t.children(e, GM_F(Call, keywords))) {
    const auto arg = t.field(k, GM_F(keyword, arg));
    if (Tree::is_none_string(arg) || t.text(arg) != "dtype") return false;
  }
  const NodeId func = t.child(e, GM_F(Call, func));
  const auto args = t.children(e, GM_F(Call, args));
  const ops::OpInfo* op = nullptr;
  const CallInfo* info = nullptr;
  if (const auto q = qualified_name(func)) {
    if (args.size() != 1 || t.kind(args[0]) == NodeKind::Starred) return false;
    op = ops::lookup_qualified(*q);
    if (op) info = &op->function;
  } else if (t.kind(func) == NodeKind::Attribute && args.empty()) {
    if (fact(t.child(func, GM_F(Attribute, value))).kind == TensorKind::NotTensor) return false;
    op = ops::lookup(t.text(t.field(func, GM_F(Attribute, attr))));
    if (op) info = &op->method;
  }
  if (!op || !op->has(ops::Reduction)) return false;
  // max/min/median: one tensor without a dim. Without a dim `mode` reduces
  // the last dimension only (to a pair), `logsumexp` raises, and aminmax /
  // std_mean / var_mean return pairs.
  const auto ov = op->overload;
  if (ov == ops::Overload::MaxMin || ov == ops::Overload::Median) return true;
  return info->ret == Ret::Tensor && op->name != "logsumexp";
}

// `_graphmend_rt.masked_reduce(x, m, "R")` is `x[m].R()` and carries that
// call's evidence; `_graphmend_rt.where(c, a, b)` is `a if c else b`, a
// tensor when both arms are. Any other call: Unknown.
TensorEvidence Model::runtime_evidence(std::string_view q, NodeId call, int depth) const {
  const Tree& t = *tree_;
  const auto args = t.children(call, GM_F(Call, args));
  auto at_least_syntactic = [&](NodeId a) {
    return tensor_held(tensor_evidence_impl(a, depth + 1));
  };
  if (q == "graphmend.runtime.masked_reduce" && args.size() >= 3 &&
      t.kind(args[2]) == NodeKind::Constant) {
    const auto& c = t.constant_at(t.field(args[2], GM_F(Constant, value)));
    if (c.kind != ast::ConstantValue::Kind::Str) return TensorEvidence::Unknown;
    const ops::OpInfo* op = ops::lookup(t.str(c.text));
    if (!op || op->evidence == ops::Evidence::None || fact(args[0]).kind == TensorKind::NotTensor)
      return TensorEvidence::Unknown;
    return TensorEvidence::Syntactic;
  }
  if (q == "graphmend.runtime.where" && args.size() >= 3 && at_least_syntactic(args[1]) &&
      at_least_syntactic(args[2]))
    return TensorEvidence::Syntactic;
  return TensorEvidence::Unknown;
}

std::optional<Interval> Model::value_range(NodeId expr) const { return value_range_impl(expr, 0); }

std::optional<Interval> Model::value_range_impl(NodeId e, int depth) const {
  if (!e || depth > 8) return std::nullopt;
  const Tree& t = *tree_;
  auto point = [](double v) { return Interval{v, v, Interval::Closed, Interval::Closed}; };
  switch (t.kind(e)) {
    case NodeKind::Constant: {
      const auto& c = t.constant_at(t.field(e, GM_F(Constant, value)));
      switch (c.kind) {
        case ast::ConstantValue::Kind::True: return point(1);
        case ast::ConstantValue::Kind::False: return point(0);
        case ast::ConstantValue::Kind::Float: return point(c.number);
        case ast::ConstantValue::Kind::Int: {
          const std::string_view digits = t.str(c.text);
          if (digits.size() > 15) return std::nullopt;  // beyond exact doubles
          double v = 0;
          for (char ch : digits) v = v * 10 + (ch - '0');
          return point(v);
        }
        default: return std::nullopt;
      }
    }
    case NodeKind::UnaryOp: {
      const auto op = static_cast<NodeKind>(t.field(e, GM_F(UnaryOp, op)).a);
      const NodeId operand = t.child(e, GM_F(UnaryOp, operand));
      if (op == NodeKind::USub && t.kind(operand) == NodeKind::Constant) {
        const auto r = value_range_impl(operand, depth + 1);
        if (r) return Interval{-r->hi, -r->lo, r->hi_end, r->lo_end};
      }
      return std::nullopt;
    }
    case NodeKind::Name: {
      // The only assignment that reaches the use: its value's range.
      const NodeId value = sole_value_at(e);
      if (!value) return std::nullopt;
      return value_range_impl(value, depth + 1);
    }
    case NodeKind::Call: {
      const NodeId func = t.child(e, GM_F(Call, func));
      const auto q = qualified_name(func);
      if (q) {
        const ops::OpInfo* op = ops::lookup_qualified(*q);
        const bool tensor_result =
            op && (op->function.ret == Ret::Tensor || op->functional.ret == Ret::Tensor);
        if (tensor_result) return ops::value_range(*op);
      } else if (t.kind(func) == NodeKind::Attribute &&
                 fact(t.child(func, GM_F(Attribute, value))).kind == TensorKind::Tensor) {
        const ops::OpInfo* op = ops::lookup(t.text(t.field(func, GM_F(Attribute, attr))));
        if (op && op->method.ret == Ret::Tensor) return ops::value_range(*op);
      }
      break;
    }
    default: break;
  }
  const TensorFact f = fact(e);
  if (f.kind == TensorKind::Tensor && f.dtype == DType::Bool) return Interval{0, 1};
  return std::nullopt;
}

}  // namespace gm::sema

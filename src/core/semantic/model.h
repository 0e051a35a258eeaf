// The semantic model: what the rules stand on.
//
//   gm::sema::Model m = gm::sema::analyze(tree, source);
//
// It answers, for one parsed module:
//   - scopes and bindings (module, class, function, lambda, comprehension;
//     global/nonlocal), and which binding a Name refers to (resolve);
//   - qualified names of Name/Attribute chains through imports
//     (qualified_name), builtins ("builtins.print" when not shadowed),
//     logger objects (is_logger);
//   - compiled regions: functions Dynamo will trace (forward of nn.Module
//     subclasses, torch.compile'd functions, and what they call statically);
//   - tensor facts: tensor / not tensor / tensor-or-None / unknown per
//     expression, with dtype and "same shape as" where cheap.
//
// Invariants and conventions:
//  - The model borrows the Tree (and its strings): the tree must outlive it.
//    All string_views returned point into the tree's string arena.
//  - Per-node data lives in vectors indexed by NodeId::index; scopes, bindings
//    and classes are addressed by dense 32-bit ids (kNone = "no such").
//  - Everything is best effort and conservative: what cannot be proven is
//    Unknown / nullopt / not-a-region-entry, never a guess presented as fact.
//    Region reachability over-approximates calls it can resolve statically
//    within the file and ignores the rest.
//  - A tree with a syntax error is analysed as far as it goes; an empty tree
//    gives a model with one (module) scope.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ast/tree.h"
#include "semantic/ops.h"
#include "semantic/symbol_table.h"
#include "syntax/source.h"

namespace gm::sema {

using ast::NodeId;
inline constexpr std::uint32_t kNone = 0xffffffffu;

// ---------------------------------------------------------------- scopes
enum class ScopeKind : std::uint8_t { Module, Class, Function, Lambda, Comprehension };

using ScopeId = std::uint32_t;

struct Scope {
  ScopeKind kind = ScopeKind::Module;
  NodeId node;                // Module / ClassDef / (Async)FunctionDef / Lambda / *Comp
  ScopeId parent = kNone;     // lexically enclosing scope (kNone for the module)
  std::string_view name;      // function or class name; "" otherwise
};

// ---------------------------------------------------------------- bindings
enum class BindingKind : std::uint8_t {
  Assign,         // x = v, x, y = v (unpacking), x[...] never (not a name)
  AugAssign,      // x += v
  AnnAssign,      // x: T = v
  Declaration,    // x: T (no value: makes x local, binds nothing)
  For,            // for x in ...
  With,           // with ... as x
  ExceptAs,       // except E as x
  Import,         // import a.b  (binds a) / import a.b as c (binds c)
  ImportFrom,     // from m import a [as b]
  FunctionDef,    // def / async def name
  ClassDef,       // class name
  Parameter,      // def f(x, *a, **k) / lambda x: ...
  NamedExpr,      // (x := v)
  Comprehension,  // [... for x in ...]
  MatchCapture,   // case x / case [*rest] / case {**rest} / case P() as x
  Delete,         // del x
  TypeParam,      // def f[T](), type X = ... (the alias name too)
};

using BindingId = std::uint32_t;

struct Binding {
  std::string_view name;
  BindingKind kind = BindingKind::Assign;
  ScopeId scope = kNone;  // the scope that owns the name (after global/nonlocal)
  NodeId node;    // Name(Store/Del) | arg | alias | FunctionDef | ClassDef |
                  // ExceptHandler | Match* pattern | TypeVar...
  NodeId binder;  // Assign/AugAssign/AnnAssign/For/withitem/comprehension/
                  // NamedExpr/Delete/Import/ImportFrom/...; = node for defs
  NodeId value;   // the value this name gets when it is the whole target
                  // (or the matching element of a literal tuple), else None
  NodeId source;  // the whole right-hand side / iterable / context expr
  std::uint32_t effective = 0;  // byte offset from which the binding holds
  std::uint32_t next_in_symbol = kNone;  // next binding of the same name/scope
  // Import / ImportFrom: the qualified name bound ("torch.nn.functional",
  // "...utils.logging"; relative imports keep their leading dots).
  std::string qualified;
};

// ---------------------------------------------------------------- regions
enum class ModuleConfidence : std::uint8_t {
  None,   // not an nn.Module subclass as far as we can tell
  Name,   // a base is an unresolved import whose name ends in Module,
          // Layer or PreTrainedModel (or derives from such a class in file)
  Known,  // bases resolve to torch.nn.Module, a torch.nn layer class, a known
          // library module class (transformers' PreTrainedModel,
          // GradientCheckpointingLayer) or an in-file Known class
};

enum class RegionReason : std::uint8_t {
  ModuleForward,     // forward of an nn.Module subclass
  CompileDecorator,  // @torch.compile / @torch.compile(...)
  CompileCall,       // torch.compile(f) / torch.compile(Model())
  Called,            // called from a region function (via = caller)
  Nested,            // defined inside a region function
  Referenced,        // passed as an argument inside a region function
  Library,           // any other function, under AnalyzeOptions::all_functions
  Package,           // reached from compiled code in another module (extra_roots)
};

struct RegionFunction {
  NodeId function;                 // the (Async)FunctionDef
  RegionReason reason = RegionReason::ModuleForward;
  NodeId via;                      // the caller function (Called/Nested/Referenced)
  NodeId site;                     // the call / decorator / reference
  ModuleConfidence confidence = ModuleConfidence::Known;  // of the entry class
};

// ---------------------------------------------------------------- facts
enum class TensorKind : std::uint8_t { Unknown, Tensor, NotTensor, TensorOrNone };
enum class DType : std::uint8_t { Unknown, Bool, Integer, Floating, Complex };

struct TensorFact {
  TensorKind kind = TensorKind::Unknown;
  DType dtype = DType::Unknown;  // for tensors; for Python scalars, their type
  bool is_none = false;          // NotTensor and certainly None
  // Expressions with the same non-null same_shape_as have the same shape
  // (within one evaluation of the enclosing function).
  NodeId same_shape_as;
  // For sequences (tuple results, x.shape, ...): what the items are.
  TensorKind element = TensorKind::Unknown;
};

// How sure the model is that an expression evaluates to a tensor.
enum class TensorEvidence : std::uint8_t {
  Unknown,
  Proven,     // its fact is Tensor
  Syntactic,  // a call of a tensor-evidence method (op table) on a receiver
              // not proven to be something else
  NotTensor,  // its fact is NotTensor
};

// Internal lattice value (bitsets; join = OR). Exposed for tests/debugging.
struct RawFact {
  static constexpr std::uint8_t kTensor = 1, kNoneV = 2, kOther = 4, kAll = 7;
  static constexpr std::uint8_t kBool = 1, kInt = 2, kFloat = 4, kComplex = 8, kAnyDType = 15;
  static constexpr std::uint32_t kShapeTop = 0xffffffffu;  // 0 = bottom
  std::uint8_t kinds = 0;
  std::uint8_t dtypes = 0;
  std::uint8_t elems = 0;
  std::uint32_t shape = 0;
  friend bool operator==(const RawFact&, const RawFact&) = default;
};

// ---------------------------------------------------------------- model
class Model {
 public:
  // ---- scopes and bindings
  std::span<const Scope> scopes() const { return scopes_; }
  std::span<const Binding> bindings() const { return bindings_; }
  const Scope& scope(ScopeId id) const { return scopes_[id]; }
  const Binding& binding(BindingId id) const { return bindings_[id]; }
  // The scope an expression or statement is evaluated in (kNone if unknown).
  ScopeId scope_of(NodeId node) const;
  // The scope a scope-creating node opens (kNone if none).
  ScopeId scope_opened_by(NodeId node) const;
  // All bindings of `name` owned by `scope`, in source order.
  std::vector<const Binding*> bindings_of(ScopeId scope, std::string_view name) const;
  // The binding a Name (Load: by Python's LEGB rules, class scopes skipped
  // from nested functions; Store/Del: its own) refers to; best effort among
  // rebindings: the last one in the owning scope that takes effect before
  // the use, else the last one. nullptr: unbound (builtin or undefined).
  const Binding* resolve(NodeId name) const;
  // The value a loaded name holds at `use` when exactly one assignment (of
  // the whole target) can reach it: the name's only binding, or, in the
  // scope that owns it, the latest binding that runs on every path to the
  // use (a statement before the use's ancestor in that ancestor's block),
  // when it is an assignment, every binding between it and the use lies in
  // the other arm of an `if` the use is in, and no loop between its block
  // and the use holds another binding (`s = x.std()` then `if s < eps: s =
  // ... elif s > M: ...`). None else.
  NodeId sole_value_at(NodeId use) const;
  // Name not bound anywhere visible and a Python builtin.
  bool is_builtin(NodeId name) const;
  NodeId parent(NodeId node) const {
    return node.index < parent_.size() ? NodeId{parent_[node.index]} : NodeId{};
  }
  // An If statement written `elif`: the one statement of its parent If's
  // orelse, at the parent's column (`else:` followed by an indented `if` is
  // not one).
  bool is_elif(NodeId if_stmt) const;
  // The index of the field of parent(node) that holds `node`.
  int field_in_parent(NodeId node) const {
    return node.index < slot_.size() ? slot_[node.index] : -1;
  }

  // ---- qualified names
  // "torch.where", "torch.nn.functional.relu", ".mod.x", "builtins.print";
  // nullopt when the chain does not start at an import or a builtin.
  std::optional<std::string> qualified_name(NodeId expr) const;
  // A logger object: a name bound to (or a call of) logging.getLogger /
  // logging.Logger / transformers' logging.get_logger (absolute or relative
  // `from ...utils import logging`).
  bool is_logger(NodeId expr) const;

  // ---- classes and regions
  // nn.Module-ness of a ClassDef.
  ModuleConfidence module_confidence(NodeId class_def) const;
  // `cls` derives from `base` through in-file base classes (both ClassDefs;
  // a class does not derive from itself).
  bool derives_from(NodeId cls, NodeId base) const;
  // `self.<attr>` is assigned somewhere in this file: a Store of an
  // attribute of the name `self` (any target form), or a
  // register_buffer / register_parameter / add_module call with a constant
  // string name. File-wide and per tree (computed by analyze, never cached
  // elsewhere): an attribute no code here assigns may be absent at run time.
  bool assigns_self_attr(std::string_view attr) const;
  // Every region function with why it is one (entries first, then what they
  // reach, breadth of the worklist). Entries from classes with
  // ModuleConfidence::Name are included: check `confidence`.
  std::span<const RegionFunction> region_functions() const { return regions_; }
  // The region record of a function def, or nullptr.
  const RegionFunction* region_of(NodeId function_def) const;
  // Statement or expression evaluated inside a region function (its body,
  // and lambdas/comprehensions/nested defs inside it). The def statement of
  // a region function itself is not "in" the region (decorators and defaults
  // run outside).
  bool is_in_region(NodeId node) const;
  // Every node inside a compiled region, in source (pre)order: what the
  // rules visit, listed once per file instead of walked once per rule.
  std::span<const NodeId> region_nodes() const { return region_nodes_; }
  // In-file functions a call may invoke (resolved statically, may-call).
  std::vector<NodeId> callees(NodeId call) const;

  // ---- tensor facts
  // Per expression node (a Store Name: the value it receives; an `arg`: the
  // parameter's fact from its annotation/default). Statements, unreachable
  // or unmodelled expressions: Unknown. Sound for what is modelled: Tensor /
  // NotTensor are claims; Unknown claims nothing.
  TensorFact fact(NodeId expr) const;
  RawFact raw_fact(NodeId expr) const {
    return expr.index < facts_.size() ? facts_[expr.index] : RawFact{};
  }
  bool same_shape(NodeId a, NodeId b) const;
  // Tensors `a` and `b` have the same dtype: both derive from one parameter
  // or local (bound once) through ops the op table says keep the dtype
  // (RetDType::Same; a float-only reduction or a sum of a floating input;
  // +, -, * of such operands or of a number that cannot promote). Claims
  // nothing about whether they are tensors.
  bool same_dtype(NodeId a, NodeId b) const;
  // The one tensor-evidence query: Proven / NotTensor from the facts; else
  // Syntactic for `r.any()`, `r.sum()`, `r.isnan()`, ... (a method the op
  // table lists as evidence, called on a value, not on a module such as
  // `torch`, whose receiver is not proven NotTensor: no builtin type has
  // such a method), or for a local bound once, as a whole, to such a call;
  // else Unknown.
  TensorEvidence tensor_evidence(NodeId expr) const;
  // `expr` is a tensor of exactly one element: a reduction over every
  // element (`x.sum()`, `torch.amax(x)`, `x.mean(dtype=...)`: a Reduction
  // row called with no dimension, as a method with no positional argument on
  // a value not proven NotTensor, or as a torch function of the input alone;
  // `mode` and `logsumexp` have no whole-tensor form), directly or through
  // the one assignment that reaches a name (sole_value_at).
  bool one_element(NodeId expr) const;
  // An interval every non-NaN element of `expr`'s value lies in, from the op
  // table's value-range column (torch.rand / x.rand_like: [0, 1), sigmoid /
  // softmax: [0, 1], relu / abs / exp: [0, inf]), bool results ([0, 1]),
  // numeric constants, and locals bound once to such a value; nullopt when
  // nothing is known.
  std::optional<Interval> value_range(NodeId expr) const;
  bool facts_converged() const { return facts_converged_; }
  int fact_sweeps() const { return fact_sweeps_; }  // fixpoint iterations used

  const ast::Tree& tree() const { return *tree_; }

 private:
  friend class Analyzer;
  friend class FactsPass;
  friend Model analyze(const ast::Tree& tree, const Source& source,
                       const struct AnalyzeOptions& options);
  // A (scope, name) key carrying the name's hash: a lookup that walks the
  // scope chain hashes the name once, not once per scope and table.
  using SymbolKey = sema::SymbolKey;
  struct Symbol {
    BindingId first = kNone;
    BindingId last = kNone;
    // Its non-declaration bindings sorted by (effective, order of binding):
    // by_effective_[order_begin, order_begin + order_count), so that
    // resolving a use is a binary search, not a walk over every binding of
    // the name (a name bound 2,000 times in one function).
    std::uint32_t order_begin = 0;
    std::uint32_t order_count = 0;
    BindingId last_value = kNone;  // the last non-declaration binding
    // A non-declaration binding made from another scope (nonlocal, global,
    // a comprehension's walrus).
    bool foreign = false;
  };
  struct ClassInfo {
    NodeId node;
    ScopeId scope = kNone;  // its body scope
    ModuleConfidence confidence = ModuleConfidence::None;
    std::vector<std::uint32_t> bases;  // in-file base classes (ClassInfo ids)
    bool unresolved_base = false;
  };
  // What `self.<attr>` holds, for in-file classes.
  struct AttrInfo {
    std::uint32_t cls;          // ClassInfo id of the owner
    std::string_view attr;
    std::uint32_t value_class;  // in-file class of the instance, or kNone
    bool container = false;     // ModuleList/Sequential/ModuleDict of value_class
    bool nn_layer = false;      // a known tensor-returning torch.nn layer
    bool tensor = false;        // nn.Parameter / register_buffer / tensor value
    NodeId value;
  };

  const Symbol* find_symbol(ScopeId scope, std::string_view name) const;
  const Symbol* find_symbol(const SymbolKey& key) const;
  ScopeId lookup_scope(ScopeId from, const SymbolKey& key) const;  // key's scope ignored
  // lookup_scope's symbol too (null with owner kNone: not found).
  const Symbol* lookup_symbol(ScopeId from, const SymbolKey& key, ScopeId& owner) const;
  std::uint32_t lookup_scope(ScopeId from, std::string_view name, bool skip_first_class) const;
  const Binding* pick_binding(const Symbol& sym, std::uint32_t use, bool same_scope) const;
  // The symbol's last binding taking effect at or before `use` (the later
  // bound on ties), nullptr when none: a binary search over by_effective_.
  const Binding* effective_at(const Symbol& sym, std::uint32_t use) const;
  // The scope owning a loaded Name (kNone: unbound), from load_binding_.
  ScopeId load_owner(NodeId name) const;
  std::optional<std::string> qualified_impl(NodeId expr, int depth) const;
  std::string_view name_text(NodeId name) const;
  std::uint32_t class_of_def(NodeId class_def) const;
  std::uint32_t method_class(NodeId function_def) const;
  std::uint32_t self_class(NodeId expr) const;
  NodeId find_method(std::uint32_t cls, std::string_view name, bool skip_self) const;
  void callees_impl(NodeId call, std::vector<NodeId>& out, std::vector<std::uint32_t>* classes,
                    bool* nn_layer) const;
  void instance_classes(NodeId expr, std::vector<std::uint32_t>& out, bool* nn_layer,
                        int depth) const;
  // The names and attributes a callable stored as `self.<attr>` by any
  // method of cls or of its in-file bases may be: the leaves of each stored
  // value (`helper`, both arms of `a if c else b`, partial's function).
  void stored_callables(std::uint32_t cls, std::string_view attr, std::vector<NodeId>& out) const;
  NodeId function_of_binding(const Binding* b, int depth) const;
  // The in-file function a name (`helper`) or a self attribute
  // (`self.method`) refers to; null for anything else.
  NodeId function_referenced(NodeId expr) const;
  std::optional<Interval> value_range_impl(NodeId expr, int depth) const;
  TensorEvidence tensor_evidence_impl(NodeId expr, int depth) const;
  bool one_element_impl(NodeId expr, int depth) const;
  TensorEvidence runtime_evidence(std::string_view qualified, NodeId call, int depth) const;
  NodeId dtype_root(NodeId expr, int depth) const;
  // `cls` and its in-file bases, breadth first, each once (the owners
  // whose `self.<attr>` stores a method of `cls` can see).
  std::vector<std::uint32_t> with_in_file_bases(std::uint32_t cls) const;
  // The attrs_ ids of `attr` in any of the classes `owners`, ascending: an
  // index lookup per owner instead of a scan of every attribute of the file.
  std::vector<std::uint32_t> attrs_in(const std::vector<std::uint32_t>& owners,
                                      std::string_view attr) const;
  // f(id) for each attrs_ id of `attr` in `cls` and its in-file bases,
  // ascending: attrs_in(with_in_file_bases(cls), attr), without building
  // either vector for a class with no in-file base (most classes; each
  // class's ids are ascending, as add_attr appends them).
  template <class F>
  void for_each_attr_of(std::uint32_t cls, std::string_view attr, F f) const {
    if (classes_[cls].bases.empty()) {
      if (const auto* ids = attrs_by_class_.find(SymbolKey::of(cls, attr)))
        for (std::uint32_t i : *ids) f(i);
      return;
    }
    for (std::uint32_t i : attrs_in(with_in_file_bases(cls), attr)) f(i);
  }
  void add_attr(const AttrInfo& a) {
    attrs_by_class_[SymbolKey::of(a.cls, a.attr)].push_back(
        static_cast<std::uint32_t>(attrs_.size()));
    attrs_.push_back(a);
  }

  const ast::Tree* tree_ = nullptr;
  std::vector<Scope> scopes_;
  std::vector<Binding> bindings_;
  SymbolTable<Symbol> symbols_;
  std::vector<BindingId> by_effective_;  // see Symbol::order_begin
  // global (1) / nonlocal (2) declarations, keyed by the declaring scope.
  SymbolTable<std::uint8_t> decls_;
  std::vector<std::uint32_t> parent_;       // by node
  std::vector<std::uint32_t> node_scope_;   // by node
  std::vector<std::uint32_t> opened_scope_; // by node (kNone if none)
  std::vector<std::uint32_t> name_binding_; // by node: binding of a Store/Del Name / def
  // by node: the binding a Load Name resolves to; kNone when no enclosing
  // scope binds it, kBoundWithoutValue when its owner only declares it.
  std::vector<std::uint32_t> load_binding_;
  static constexpr std::uint32_t kBoundWithoutValue = 0xfffffffeu;
  std::vector<std::uint8_t> slot_;          // by node: field index in parent
  std::vector<NodeId> postorder_;
  std::vector<NodeId> region_nodes_;
  std::vector<ClassInfo> classes_;
  std::unordered_map<std::uint32_t, std::uint32_t> class_index_;  // ClassDef → id
  std::vector<AttrInfo> attrs_;
  std::vector<std::string_view> self_stores_;  // sorted, unique: assigns_self_attr
  // attrs_ ids by (class, attribute name), ascending (see attrs_in).
  SymbolTable<std::vector<std::uint32_t>> attrs_by_class_;
  std::vector<RegionFunction> regions_;
  std::unordered_map<std::uint32_t, std::uint32_t> region_index_;  // def → regions_ id
  std::vector<std::uint32_t> scope_owner_def_;  // scope → nearest (Async)FunctionDef node, 0
  std::vector<RawFact> facts_;
  bool facts_converged_ = true;
  int fact_sweeps_ = 0;
};

struct AnalyzeOptions {
  // Library mode: every function is a region (reason Library, after the
  // reachable ones). For mending packages whose functions are reached from
  // compiled code in other modules (a mixin method, a decorator's wrapper),
  // which a one-file analysis cannot see. Every fix is exact when the code
  // runs eagerly, so this only widens where fixes apply.
  bool all_functions = false;
  // Package mode: dotted names ("f", "Cls.meth") of functions that compiled
  // code in other modules of the package reaches (package_roots in
  // semantic/package.h); they are regions with reason Package, with what
  // they reach in this file.
  std::vector<std::string> extra_roots;
  // false: no tensor facts (fact() is Unknown everywhere); the package
  // summaries need none.
  bool facts = true;
  // true: no facts either when the module has no region (the linter: every
  // rule looks only inside regions).
  bool facts_need_regions = false;
  // false: region_nodes() is empty (the rules' index; the package summaries
  // need none).
  bool region_nodes = true;
};

Model analyze(const ast::Tree& tree, const Source& source, const AnalyzeOptions& options = {});

}  // namespace gm::sema

// Package-wide compiled regions.
//
// One file shows only part of what compiled code reaches: a `forward` in
// modeling_bart.py calls a mixin method defined in modeling_utils.py, is
// wrapped by a decorator from modeling_rope_utils.py, builds output classes
// whose __init__ lives in utils/generic.py, and picks attention functions out
// of a registry defined elsewhere. The package analysis sees every module of a
// package at once:
//
//   1. each module, alone, is summarised (summarize): its functions by dotted
//      name ("f", "Cls.meth", "outer.inner"), their in-file successors (the
//      same may-call edges the one-file region walk follows), what they reach
//      outside the file (imported names called, referenced, loaded or used as
//      decorators; `self.m()` not found in the file's classes; method calls on
//      receivers nothing in the file resolves; on `self.x` that the class
//      only ever sets to instances of classes from other files, the class
//      names), classes with their bases as
//      absolute names, module-level values that hold function references,
//      and functions a class's method decorates (a decorator-filled registry);
//   2. package_roots runs one worklist over all summaries, seeded with every
//      module's own regions, and returns per module the functions compiled
//      code reaches that its one-file analysis did not make regions.
//
// Those names go back to analyze() as AnalyzeOptions::extra_roots, so each
// file's rules still see only that file: the analysis of one file depends on
// the others only through these root names, never through shared state.
// Like the one-file walk it over-approximates what it can resolve (a method
// called on an unknown receiver reaches every package method of that name
// except tensor methods; `x.a` on one reaches every property named a; any
// operator on an object compiled code handles may call its class's special
// methods, so those of every class compiled code loads, and of every class
// an nn.Module makes or names (its config, its processors), are reached)
// and ignores what it cannot (getattr by string).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gm::sema {

class Model;

struct FunctionSummary {
  std::string name;                   // dotted path inside the module
  bool region = false;                // a region of the one-file analysis
  bool property = false;              // @property / @cached_property / @x.setter
  std::vector<std::uint32_t> next;    // in-file successors (function ids)
  std::vector<std::string> external;  // absolute names it calls, loads or is decorated by
  std::vector<std::uint32_t> classes;   // in-file classes it loads (constructs, passes on)
  std::vector<std::string> globals;     // module-level names of this file it loads
  std::vector<std::string> methods;     // `x.m()` with x unresolved: m
  std::vector<std::string> attributes;  // `x.a` (not called) with x unresolved: a
  struct SelfCall {
    std::uint32_t cls;  // the method's class (in-file id)
    std::string method;
    bool skip_self;     // super().m(): the bases only
    friend bool operator==(const SelfCall&, const SelfCall&) = default;
  };
  std::vector<SelfCall> self_calls;   // `self.m()` not found in the file
  // `self.x.m()` where every value the class gives `self.x` constructs a
  // class named outside this file: m of those classes only, not every
  // package method called m (when each name is a package class).
  struct TypedCall {
    std::vector<std::string> classes;  // absolute names
    std::string method;
    friend bool operator==(const TypedCall&, const TypedCall&) = default;
  };
  std::vector<TypedCall> typed_calls;
};

struct ClassSummary {
  std::string name;                       // dotted path inside the module
  bool module_like = false;               // the one-file analysis sees an nn.Module
  std::vector<std::uint32_t> bases;       // in-file bases (class ids)
  std::vector<std::string> external_bases;  // the other bases, absolute names
  std::vector<std::pair<std::string, std::uint32_t>> methods;  // name -> function id
  // Function references in the class body outside methods (a registry dict).
  std::vector<std::uint32_t> body_functions;
  std::vector<std::string> body_external;
  // In-file classes the body refers to (`_default_processor_cls = AttnProcessor`).
  std::vector<std::uint32_t> body_classes;
};

struct GlobalSummary {
  std::string name;                     // a module-level binding
  std::string alias;                    // set: an import of this absolute name
  std::vector<std::uint32_t> functions;  // in-file functions its value refers to
  std::vector<std::uint32_t> classes;    // in-file classes its value refers to
  std::vector<std::string> external;     // imported names its value refers to
};

struct ModuleSummary {
  std::string module;  // absolute dotted name ("transformers.models.bart.modeling_bart")
  std::vector<FunctionSummary> functions;
  // Module-level `Cls.name = f` (a function installed as a method elsewhere,
  // like transformers' `logging.Logger.warning_once = warning_once`).
  std::vector<std::pair<std::string, std::uint32_t>> installed_methods;
  // Functions decorated by a method of a class, `@Registry.register(...)`:
  // the decorator files them in the class (a backend table), so code that
  // loads the class may call them, as it may call a registry dict's values.
  struct Registration {
    std::string cls;     // absolute "pkg.mod.Registry"
    std::string method;  // "register"
    std::uint32_t function;
  };
  std::vector<Registration> registrations;
  std::vector<ClassSummary> classes;
  std::vector<GlobalSummary> globals;
};

// `module`: the module's absolute name; `is_package`: the file is a
// package's __init__.py (relative imports are resolved from it).
ModuleSummary summarize(const Model& model, std::string module, bool is_package);

// Per module (same order): the dotted names of functions that compiled code
// anywhere in the package reaches and that are not regions of the module's
// one-file analysis, sorted. include_own: every function compiled code
// reaches, the modules' own regions too.
std::vector<std::vector<std::string>> package_roots(std::span<const ModuleSummary> modules,
                                                    bool include_own = false);

// The dotted path of a function or class definition inside its module
// ("Cls.meth"); "" for anything else.
std::string definition_path(const Model& model, std::uint32_t def_node);

}  // namespace gm::sema

// Value ranges: the set of values an expression can evaluate to, when an op
// guarantees one (`torch.rand(...)` is in [0, 1]; `random.random()` in
// [0, 1)). The GM105 range proofs stand on it.
//
//   if (auto r = gm::sema::value_range(model, expr)) { r->lo.value ... }
//
// The ranges are keyed on the op's qualified name (op_value_range) and hold
// for every value of the op's other arguments the table accepts. For an
// expression, value_range follows a local name to the one assignment that
// binds it, and only when nothing can change the value it holds (see there).
// Conservative like the rest of the model: nullopt claims nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "semantic/model.h"

namespace gm::sema {

// One end of an interval: `value`, included when `closed`. `text` is the
// value as Python source (for guards a rule writes: "0", "-1.5").
struct RangeBound {
  double value = 0.0;
  bool closed = true;
  std::string text;
};

struct ValueRange {
  RangeBound lo, hi;
  std::string op;   // the op's qualified name ("torch.rand")
  NodeId draw;      // the call that produced the value
  bool tensor = false;  // a (0-d or larger) tensor, not a Python number
  // (for a name bound several times: `draw` is the binding the read resolves to)
};

// The range of `call`'s result, given its qualified callee name: a torch
// random draw of the op table (semantic/torch_ops.def, flag Draw: torch.rand
// / torch.rand_like, floating dtypes: [0, 1] as the table says), Python's
// random.random ([0, 1)),
// random.uniform(a, b) with number literals ([min, max], both ends: the
// docs say b may be returned). nullopt for anything else, or when an
// argument the range depends on is not proven (a dtype keyword that is not a
// floating torch dtype, rand_like of a tensor not proven floating, uniform's
// bounds not number literals).
std::optional<ValueRange> op_value_range(const Model& m, NodeId call);

// The range of `expr`'s value where it is evaluated: a call in the table,
// or a Name of a function's local whose every binding in its scope is a
// plain `name = <call in the table>` (no other assignment, augmented
// assignment, `del`, loop target, `global`/`nonlocal`; the range is the
// union of theirs) and whose every read in the function (nested functions
// included) is a direct operand of a comparison, so nothing can update it in
// place or hand it to code that could. It does not prove the name is bound
// when read.
std::optional<ValueRange> value_range(const Model& m, NodeId expr);

// A double as Python source: "0", "-1", "0.25" (shortest round trip).
std::string number_text(double x);

}  // namespace gm::sema

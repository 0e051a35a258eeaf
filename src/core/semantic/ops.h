// What the semantic model knows about torch ops: one row per torch function,
// torch.nn.functional function, tensor method and tensor attribute, from
// semantic/torch_ops.def (its header explains every column).
//
//   if (const gm::sema::ops::OpInfo* op = gm::sema::ops::lookup("sigmoid"))
//     op->range  // [0, 1]
//
// Rules ask this table (directly, or through Model queries such as
// Model::value_range); none keeps a private list of op names.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace gm::sema {

// What a call returns.
enum class Ret : std::uint8_t {
  Unknown,
  Tensor,     // a tensor
  NotTensor,  // a Python value (bool, int, float, str, Size, dtype, ...)
  TensorSeq,  // a tuple/list of tensors (chunk, split, sort, topk, ...)
  IntSeq,     // a tuple of ints (size(), shape)
};

// dtype of the result
enum class RetDType : std::uint8_t {
  Unknown,
  Same,      // as the receiver / first argument
  Bool,
  Int,
  Float,
  FromArgs,  // dtype= keyword, else Unknown (zeros/ones default float: Float)
};

struct CallInfo {
  Ret ret = Ret::Unknown;
  RetDType dtype = RetDType::Unknown;
  bool same_shape = false;  // same shape as the receiver / first argument
};

// An interval of real numbers with open or closed ends (lo may be -inf, hi
// +inf).
struct Interval {
  enum End : std::uint8_t { Closed, Open };
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  End lo_end = Closed;
  End hi_end = Closed;

  bool contains(double v) const {
    return (lo_end == Closed ? v >= lo : v > lo) && (hi_end == Closed ? v <= hi : v < hi);
  }
  // Every point of `o` is in this interval.
  bool contains(const Interval& o) const {
    const bool lo_ok = o.lo > lo || (o.lo == lo && (lo_end == Closed || o.lo_end == Open));
    const bool hi_ok = o.hi < hi || (o.hi == hi && (hi_end == Closed || o.hi_end == Open));
    return lo_ok && hi_ok;
  }
  friend bool operator==(const Interval&, const Interval&) = default;
};

namespace ops {

enum Flag : std::uint32_t {
  Pure = 1u << 0,
  Total = 1u << 1,
  GradBounded = 1u << 2,
  Reduction = 1u << 3,
  BoolResult = 1u << 4,
  DynamicShape = 1u << 5,
  TotalAttr = 1u << 6,
  MetaAttr = 1u << 7,
  MetaCall = 1u << 8,
  SizeArgs = 1u << 9,
  RangeArgs = 1u << 10,
  MethodSizeArgs = 1u << 11,
  Draw = 1u << 12,
  View = 1u << 13,
};

enum class Evidence : std::uint8_t { None, Method, Reduction };

enum class Overload : std::uint8_t {
  None,
  MaxMin,
  Median,
  Mode,
  Unique,
  SumProd,
  Where,
  Nonzero,
  Compare,
  Size,
  Item,
  To,
};

struct OpInfo {
  std::string_view name;
  CallInfo function;    // torch.<name>(...)
  CallInfo functional;  // torch.nn.functional.<name>(...)
  CallInfo method;      // tensor.<name>(...)
  CallInfo attribute;   // tensor.<name>
  std::uint32_t flags = 0;
  Evidence evidence = Evidence::None;
  Overload overload = Overload::None;
  std::optional<Interval> range;  // of every non-NaN element of the result

  bool has(Flag f) const { return (flags & f) != 0; }
  // Pure and total: safe to evaluate unconditionally (predication).
  bool predicable() const { return has(Pure) && has(Total); }
};

// Whether a call of the method `name` may return storage it was given: a
// View row, an in-place method (`x.add_(y)` returns `x`), or a name the
// table does not know. False means the result is fresh storage.
bool method_may_alias(std::string_view name);

// The row of `name` (a tensor method / attribute name, or a torch function
// name without its module: "sigmoid", "jit.is_tracing"), or nullptr.
const OpInfo* lookup(std::string_view name);

// The row of a torch function by qualified name ("torch.sigmoid",
// "torch.nn.functional.relu", "torch.special.expit" -> its leaf), or nullptr
// when `qualified` is not a torch function the table knows. The leaf of
// torch.nn.functional., torch.special., torch.linalg. and torch. names.
const OpInfo* lookup_qualified(std::string_view qualified);

// "torch.isinf" -> "isinf", "torch.nn.functional.relu" -> "relu"; "" if not
// a torch.<leaf> / torch.nn.functional. / torch.special. / torch.linalg.
// function.
std::string_view torch_leaf(std::string_view qualified);

// The value range of a row's result: its range column, else [0, 1] for a
// BoolResult row; nullopt when unknown.
std::optional<Interval> value_range(const OpInfo& op);

}  // namespace ops
}  // namespace gm::sema

// The lookup maps behind tensor facts, built from the op table
// (torch_ops.def), and the torch.nn class lists behind module detection.
// Anything not listed stays Unknown: add entries only for what PyTorch
// documents.
#include "semantic/tables.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "semantic/analyzer.h"

namespace gm::sema {
namespace ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr auto Closed = Interval::Closed;
[[maybe_unused]] constexpr auto Open = Interval::Open;  // for RANGE rows with an open end

constexpr CallInfo NO{};
constexpr CallInfo PY{Ret::NotTensor, RetDType::Unknown, false};
constexpr CallInfo SEQ{Ret::TensorSeq, RetDType::Unknown, false};
constexpr CallInfo INTS{Ret::IntSeq, RetDType::Int, false};
#define T(dtype, same_shape) (CallInfo{Ret::Tensor, RetDType::dtype, (same_shape) != 0})
#define RANGE(lo, hi, lo_end, hi_end) (std::optional<Interval>(Interval{lo, hi, lo_end, hi_end}))
#define RANGE_NONE (std::optional<Interval>())

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> rows = {
#define GM_TORCH_OP(name, function, functional, method, attribute, flags, evidence, overload, \
                    range)                                                                    \
  OpInfo{name,                                                                                \
         function,                                                                            \
         functional,                                                                          \
         method,                                                                              \
         attribute,                                                                           \
         static_cast<std::uint32_t>(flags),                                                   \
         Evidence::evidence,                                                                  \
         Overload::overload,                                                                  \
         range},
#include "semantic/torch_ops.def"
  };
  return rows;
}

#undef T
#undef RANGE
#undef RANGE_NONE

using Index = std::unordered_map<std::string_view, const OpInfo*>;

const Index& index() {
  static const Index m = [] {
    Index m;
    for (const OpInfo& op : table()) m.emplace(op.name, &op);
    return m;
  }();
  return m;
}

}  // namespace

const OpInfo* lookup(std::string_view name) {
  const auto& m = index();
  auto it = m.find(name);
  return it == m.end() ? nullptr : it->second;
}

bool method_may_alias(std::string_view name) {
  if (name.ends_with('_')) return true;
  const OpInfo* op = lookup(name);
  return op == nullptr || op->has(View);
}

std::string_view torch_leaf(std::string_view s) {
  for (std::string_view p : {"torch.nn.functional.", "torch.special.", "torch.linalg.", "torch."})
    if (s.substr(0, p.size()) == p) {
      s.remove_prefix(p.size());
      return s.find('.') == std::string_view::npos ? s : std::string_view{};
    }
  return {};
}

const OpInfo* lookup_qualified(std::string_view qualified) {
  const std::string_view leaf = torch_leaf(qualified);
  return leaf.empty() ? nullptr : lookup(leaf);
}

std::optional<Interval> value_range(const OpInfo& op) {
  if (op.range) return op.range;
  if (op.has(BoolResult)) return Interval{0, 1, Interval::Closed, Interval::Closed};
  return std::nullopt;
}

}  // namespace ops

namespace detail {
namespace {

using Map = std::unordered_map<std::string_view, CallInfo>;

// One role's column of the op table: the names known in that role.
template <typename Column>
Map column(Column col) {
  Map m;
  for (const ops::OpInfo& op : ops::table())
    if (col(op).ret != Ret::Unknown) m.emplace(op.name, col(op));
  return m;
}

const Map& functions() {
  static const Map m = column([](const ops::OpInfo& op) { return op.function; });
  return m;
}
const Map& functional() {
  static const Map m = column([](const ops::OpInfo& op) { return op.functional; });
  return m;
}
const Map& methods() {
  static const Map m = column([](const ops::OpInfo& op) { return op.method; });
  return m;
}
const Map& attributes() {
  static const Map m = column([](const ops::OpInfo& op) { return op.attribute; });
  return m;
}

constexpr CallInfo T(RetDType d, bool shape = false) { return {Ret::Tensor, d, shape}; }

}  // namespace

bool is_torch_nn_module_class(std::string_view q) {
  std::string_view last;
  if (starts_with(q, "torch.nn.modules.")) {
    last = q.substr(q.rfind('.') + 1);
  } else if (starts_with(q, "torch.nn.") && q.find('.', 9) == std::string_view::npos) {
    last = q.substr(9);
  } else if (starts_with(q, "torch.nn.parallel.")) {
    last = q.substr(q.rfind('.') + 1);
    return last == "DistributedDataParallel" || last == "DataParallel";
  } else {
    return false;
  }
  if (last.empty() || last[0] < 'A' || last[0] > 'Z') return false;
  return last != "Parameter" && last != "Buffer" && last != "UninitializedParameter" &&
         last != "UninitializedBuffer" && last != "ParameterList" && last != "ParameterDict";
}

bool nn_layer_returns_tensor(std::string_view q) {
  if (!is_torch_nn_module_class(q)) return false;
  const std::string_view last = q.substr(q.rfind('.') + 1);
  static const std::unordered_map<std::string_view, bool> yes = [] {
    std::unordered_map<std::string_view, bool> m;
    for (auto n : {"Linear",
                   "Bilinear",
                   "LazyLinear",
                   "Conv1d",
                   "Conv2d",
                   "Conv3d",
                   "ConvTranspose1d",
                   "ConvTranspose2d",
                   "ConvTranspose3d",
                   "LazyConv1d",
                   "LazyConv2d",
                   "LayerNorm",
                   "GroupNorm",
                   "BatchNorm1d",
                   "BatchNorm2d",
                   "BatchNorm3d",
                   "InstanceNorm1d",
                   "InstanceNorm2d",
                   "InstanceNorm3d",
                   "RMSNorm",
                   "LocalResponseNorm",
                   "Embedding",
                   "EmbeddingBag",
                   "Dropout",
                   "Dropout1d",
                   "Dropout2d",
                   "Dropout3d",
                   "AlphaDropout",
                   "ReLU",
                   "ReLU6",
                   "GELU",
                   "SiLU",
                   "Mish",
                   "ELU",
                   "SELU",
                   "CELU",
                   "LeakyReLU",
                   "PReLU",
                   "Tanh",
                   "Sigmoid",
                   "Softmax",
                   "LogSoftmax",
                   "Softmin",
                   "Softplus",
                   "Softsign",
                   "Hardtanh",
                   "Hardswish",
                   "Hardsigmoid",
                   "LogSigmoid",
                   "Tanhshrink",
                   "GLU",
                   "Flatten",
                   "Unflatten",
                   "Upsample",
                   "AvgPool1d",
                   "AvgPool2d",
                   "AvgPool3d",
                   "AdaptiveAvgPool1d",
                   "AdaptiveAvgPool2d",
                   "AdaptiveAvgPool3d",
                   "PixelShuffle",
                   "PixelUnshuffle",
                   "ZeroPad1d",
                   "ZeroPad2d",
                   "ConstantPad1d",
                   "ConstantPad2d",
                   "ReflectionPad1d",
                   "ReflectionPad2d",
                   "ReplicationPad1d",
                   "ReplicationPad2d",
                   "CosineSimilarity",
                   "PairwiseDistance",
                   "CrossEntropyLoss",
                   "MSELoss",
                   "BCELoss",
                   "BCEWithLogitsLoss",
                   "L1Loss",
                   "NLLLoss",
                   "SmoothL1Loss",
                   "HuberLoss",
                   "KLDivLoss",
                   "CTCLoss",
                   "MarginRankingLoss",
                   "CosineEmbeddingLoss",
                   "TripletMarginLoss",
                   "Fold",
                   "Unfold",
                   "ChannelShuffle",
                   "Threshold",
                   "Hardshrink",
                   "Softshrink",
                   "TransformerEncoder",
                   "TransformerEncoderLayer",
                   "TransformerDecoder",
                   "TransformerDecoderLayer",
                   "Transformer"})
      m[n] = true;
    return m;
  }();
  return yes.count(last) != 0;
}

CallInfo torch_function(std::string_view q) {
  if (starts_with(q, "torch.nn.functional.")) {
    const auto& f = functional();
    auto it = f.find(q.substr(20));
    return it == f.end() ? CallInfo{} : it->second;
  }
  if (!starts_with(q, "torch.")) return {};
  const auto& f = functions();
  auto it = f.find(q.substr(6));
  if (it != f.end()) return it->second;
  if (starts_with(q, "torch.special.") || starts_with(q, "torch.fft.")) return T(RetDType::Unknown);
  return {};
}

CallInfo tensor_method(std::string_view name) {
  const auto& m = methods();
  auto it = m.find(name);
  return it == m.end() ? CallInfo{} : it->second;
}

CallInfo tensor_attribute(std::string_view name) {
  const auto& m = attributes();
  auto it = m.find(name);
  return it == m.end() ? CallInfo{} : it->second;
}

}  // namespace detail
}  // namespace gm::sema

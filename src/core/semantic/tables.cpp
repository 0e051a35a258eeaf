// The allow-lists behind tensor facts and module detection. Anything not
// listed here stays Unknown: add entries only for what PyTorch documents.
#include "semantic/tables.h"

#include <initializer_list>
#include <string>
#include <unordered_map>

#include "semantic/analyzer.h"

namespace gm::sema::detail {
namespace {

using Map = std::unordered_map<std::string_view, CallInfo>;

template <std::size_t N>
void add(Map& m, const std::string_view (&names)[N], CallInfo info) {
  for (auto n : names) m[n] = info;
}

constexpr CallInfo T(RetDType d, bool shape = false) { return {Ret::Tensor, d, shape}; }
constexpr CallInfo kNotTensor{Ret::NotTensor, RetDType::Unknown, false};
constexpr CallInfo kTensorSeq{Ret::TensorSeq, RetDType::Unknown, false};

// Elementwise, shape- and dtype-preserving (as functions: of the first
// argument; as methods: of the receiver).
constexpr std::string_view kElementwiseSame[] = {
    "abs", "neg", "negative", "clamp", "clip", "clamp_min", "clamp_max", "floor", "ceil",
    "round", "trunc", "frac", "sign", "sgn", "square", "nan_to_num", "masked_fill", "clone",
    "detach", "zeros_like", "ones_like", "empty_like", "full_like", "randint_like", "dropout",
    "flip", "fliplr", "flipud", "roll", "triu", "tril", "cumsum", "cumprod", "relu", "relu_",
    "bitwise_not", "positive", "contiguous", "index_fill", "index_copy", "index_add",
    "masked_scatter", "scatter", "scatter_add", "scatter_reduce", "requires_grad_", "cpu",
    "cuda", "pin_memory", "logcumsumexp", "deg2rad", "rad2deg", "fmod", "remainder",
    "nextafter", "copysign"};
// Elementwise float results (shape-preserving).
constexpr std::string_view kElementwiseFloat[] = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh",
    "sigmoid", "erf", "erfc", "erfinv", "reciprocal", "softmax", "log_softmax", "rand_like",
    "randn_like", "logit", "sinc", "lgamma", "digamma", "i0", "xlogy", "softplus"};
constexpr std::string_view kElementwiseBool[] = {
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_not", "signbit"};
// Bool results, broadcasting.
constexpr std::string_view kBool[] = {
    "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "greater",
    "greater_equal", "less", "less_equal", "not_equal", "isclose", "isin", "any", "all"};
constexpr std::string_view kInt[] = {
    "argmax", "argmin", "argsort", "nonzero", "searchsorted", "bucketize", "count_nonzero",
    "multinomial", "tril_indices", "triu_indices", "argwhere", "randperm", "randint"};
constexpr std::string_view kFloat[] = {
    "rand", "randn", "mean", "nanmean", "std", "var", "norm", "linspace", "logspace", "normal",
    "cdist", "dist", "true_divide", "cosine_similarity", "pairwise_distance", "pdist", "lerp",
    "atan2", "hypot", "logsumexp", "layer_norm", "group_norm", "batch_norm", "instance_norm",
    "rms_norm", "dot", "vdot", "trace"};
// Tensor results whose dtype follows the inputs.
constexpr std::string_view kTensorSame[] = {
    "sum", "nansum", "prod", "amax", "amin", "matmul", "mm", "bmm", "mv", "einsum", "cat",
    "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "reshape",
    "view_as_real", "view_as_complex", "transpose", "swapaxes", "swapdims", "permute",
    "movedim", "moveaxis", "squeeze", "unsqueeze", "flatten", "unflatten", "gather",
    "index_select", "masked_select", "take", "take_along_dim", "repeat_interleave", "outer",
    "diag", "diagonal", "diag_embed", "baddbmm", "addmm", "addbmm", "addmv", "addcmul",
    "addcdiv", "pow", "add", "sub", "subtract", "mul", "multiply", "div", "divide",
    "floor_divide", "minimum", "maximum", "fmin", "fmax", "narrow", "select", "tile",
    "broadcast_to", "tensordot", "kron", "cross", "rot90", "t", "atleast_1d", "atleast_2d",
    "atleast_3d", "index_put", "diff", "block_diag", "cartesian_prod", "combinations",
    "where", "bernoulli", "polar", "complex", "real", "imag", "conj", "resolve_conj",
    "resolve_neg", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "embedding", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "expand_copy", "clone", "tensor",
    "as_tensor", "from_numpy", "full", "arange", "range", "heaviside", "gcd", "lcm",
    "renorm", "histc", "bincount", "cummax_values", "vander", "tril_", "triu_", "flatten",
    "ravel", "view_copy", "chain_matmul", "inner", "ger", "addr", "cov", "corrcoef",
    "quantile", "nanquantile", "clamp", "float_power"};
// Factories: dtype= keyword, else the default float dtype.
constexpr std::string_view kFactoryFloat[] = {"zeros", "ones", "empty",
                                                                    "eye", "empty_strided"};
constexpr std::string_view kSeq[] = {
    "chunk", "split", "tensor_split", "unbind", "sort", "topk", "kthvalue", "meshgrid",
    "broadcast_tensors", "std_mean", "var_mean", "aminmax", "split_with_sizes", "hsplit",
    "vsplit", "dsplit", "cummax", "cummin", "frexp", "unsafe_chunk", "unsafe_split"};
constexpr std::string_view kTorchNotTensor[] = {
    "equal", "is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel",
    "is_grad_enabled", "is_inference_mode_enabled", "get_default_dtype", "is_storage",
    "result_type", "promote_types", "can_cast", "finfo", "iinfo", "device", "Size", "allclose",
    "is_autocast_enabled", "get_autocast_gpu_dtype", "is_deterministic_algorithms_enabled",
    "jit.is_scripting", "jit.is_tracing", "compiler.is_compiling", "compiler.is_dynamo_compiling",
    "_dynamo.is_compiling", "_C._get_tracing_state", "cuda.is_available", "cuda.device_count",
    "cuda.current_device", "get_num_threads", "is_same_size", "_utils.is_compiling",
    "fx._symbolic_trace.is_fx_tracing", "__version__"};

// torch.nn.functional.*
constexpr std::string_view kFunctionalSame[] = {
    "relu", "relu6", "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "mish", "softplus",
    "softsign", "hardtanh", "hardswish", "hardsigmoid", "sigmoid", "tanh", "logsigmoid",
    "softmax", "log_softmax", "softmin", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout", "layer_norm", "group_norm", "batch_norm",
    "instance_norm", "rms_norm", "local_response_norm", "normalize", "gumbel_softmax",
    "threshold", "hardshrink", "softshrink", "tanhshrink", "prelu", "rrelu", "relu_", "elu_",
    "leaky_relu_", "tanh_"};
constexpr std::string_view kFunctionalTensor[] = {
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "embedding", "embedding_bag", "pad", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid", "avg_pool1d",
    "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "pixel_shuffle", "pixel_unshuffle", "unfold", "fold",
    "cosine_similarity", "pairwise_distance", "pdist", "scaled_dot_product_attention",
    "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "ctc_loss",
    "poisson_nll_loss", "glu", "one_hot"};

// Tensor methods only.
constexpr std::string_view kMethodSame[] = {
    "view", "view_as", "reshape_as", "expand", "expand_as", "repeat", "type_as", "unfold",
    "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "masked_fill_", "fill_",
    "zero_", "copy_", "add_", "sub_", "mul_", "div_", "clamp_", "clamp_min_", "clamp_max_",
    "masked_scatter_", "scatter_", "scatter_add_", "index_fill_", "index_copy_", "index_add_",
    "neg_", "abs_", "pow_", "t_", "squeeze_", "unsqueeze_", "transpose_", "fill_diagonal_",
    "masked_fill", "put_", "share_memory_", "data_ptr_", "sigmoid_", "exp_", "log_",
    "floor_", "ceil_", "round_", "sqrt_", "rsqrt_", "sign_", "normal_", "uniform_",
    "bernoulli_", "random_", "exponential_", "float_power_", "addcmul_", "addcdiv_", "lerp_",
    "logical_not_", "copysign_", "nan_to_num_", "cumsum_", "detach_", "resize_", "resize_as_",
    "set_", "retain_grad", "align_as", "rename", "refine_names", "pin_memory", "to",
    "contiguous", "coalesce", "to_dense", "to_sparse"};
constexpr std::string_view kMethodNotTensor[] = {
    "item", "tolist", "dim", "ndimension", "numel", "nelement", "element_size",
    "is_contiguous", "is_floating_point", "is_complex", "data_ptr", "get_device", "equal",
    "allclose", "storage_offset", "numpy", "__len__", "is_set_to", "is_shared", "is_pinned",
    "untyped_storage", "register_hook", "backward", "dim_order", "is_signed", "is_inference",
    "__bool__", "__int__", "__float__", "__index__", "is_nonzero", "is_same_size"};

const Map& functions() {
  static const Map m = [] {
    Map m;
    add(m, kTensorSame, T(RetDType::Same));
    add(m, kInt, T(RetDType::Int));
    add(m, kFloat, T(RetDType::Float));
    add(m, kBool, T(RetDType::Bool));
    add(m, kElementwiseSame, T(RetDType::Same, true));
    add(m, kElementwiseFloat, T(RetDType::Float, true));
    add(m, kElementwiseBool, T(RetDType::Bool, true));
    add(m, kFactoryFloat, T(RetDType::FromArgs));
    add(m, kSeq, kTensorSeq);
    add(m, kTorchNotTensor, kNotTensor);
    for (auto n : {"zeros_like", "ones_like", "empty_like", "full_like", "randint_like"})
      m[n] = T(RetDType::Same, true);
    for (auto n : {"tensor", "as_tensor", "full", "arange", "range"}) m[n] = T(RetDType::FromArgs);
    m["sum"] = T(RetDType::Unknown);
    m["nansum"] = T(RetDType::Unknown);
    m["prod"] = T(RetDType::Unknown);
    m["where"] = T(RetDType::Unknown);  // 1-argument where: see facts.cpp
    return m;
  }();
  return m;
}

const Map& functional() {
  static const Map m = [] {
    Map m;
    add(m, kFunctionalSame, T(RetDType::Same, true));
    add(m, kFunctionalTensor, T(RetDType::Unknown));
    m["one_hot"] = T(RetDType::Int);
    for (auto n : {"softmax", "log_softmax", "softmin", "gumbel_softmax", "sigmoid", "tanh",
                   "gelu", "silu", "layer_norm", "rms_norm", "normalize"})
      m[n] = T(RetDType::Float, true);
    return m;
  }();
  return m;
}

const Map& methods() {
  static const Map m = [] {
    Map m = functions();
    for (auto n : kTorchNotTensor) m.erase(n);
    add(m, kMethodSame, T(RetDType::Same));
    for (auto n : kMethodSame)
      if (n.back() == '_' || n == "masked_fill" || n == "type_as" || n == "contiguous" ||
          n == "pin_memory")
        m[n] = T(RetDType::Same, true);
    m["type_as"] = T(RetDType::Unknown, true);
    m["to"] = T(RetDType::FromArgs, true);
    for (auto n : {"float", "half", "double", "bfloat16"}) m[n] = T(RetDType::Float, true);
    for (auto n : {"long", "int", "short", "byte", "char"}) m[n] = T(RetDType::Int, true);
    m["bool"] = T(RetDType::Bool, true);
    for (auto n : {"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor", "view", "repeat",
                   "expand", "unfold", "view_as", "reshape_as", "expand_as"})
      m[n] = T(RetDType::Same);
    add(m, kMethodNotTensor, kNotTensor);
    for (auto n : {"sum", "nansum", "prod"}) m[n] = T(RetDType::Unknown);
    return m;
  }();
  return m;
}

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
    for (auto n :
         {"Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
          "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LayerNorm",
          "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
          "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm", "Embedding",
          "EmbeddingBag", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
          "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "LeakyReLU", "PReLU",
          "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "Softplus", "Softsign",
          "Hardtanh", "Hardswish", "Hardsigmoid", "LogSigmoid", "Tanhshrink", "GLU", "Flatten",
          "Unflatten", "Upsample", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
          "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "PixelShuffle", "PixelUnshuffle",
          "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
          "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CosineSimilarity",
          "PairwiseDistance", "CrossEntropyLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
          "L1Loss", "NLLLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CTCLoss",
          "MarginRankingLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "Fold", "Unfold",
          "ChannelShuffle", "Threshold", "Hardshrink", "Softshrink", "TransformerEncoder",
          "TransformerEncoderLayer", "TransformerDecoder", "TransformerDecoderLayer",
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
  if (name == "shape") return {Ret::IntSeq, RetDType::Int, false};
  if (name == "T" || name == "mT" || name == "H" || name == "mH") return T(RetDType::Same);
  if (name == "data") return T(RetDType::Same, true);
  if (name == "real" || name == "imag") return T(RetDType::Float, true);
  if (name == "dtype" || name == "device" || name == "ndim" || name == "is_cuda" ||
      name == "is_leaf" || name == "requires_grad" || name == "layout" || name == "is_sparse" ||
      name == "is_quantized" || name == "is_meta" || name == "itemsize" || name == "nbytes" ||
      name == "names" || name == "is_cpu" || name == "is_mps")
    return kNotTensor;
  return {};
}

}  // namespace gm::sema::detail

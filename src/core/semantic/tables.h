// Internal: explicit allow-lists of torch classes, functions and tensor
// methods, with what they return. Anything not listed is Unknown.
#pragma once

#include <cstdint>
#include <string_view>

namespace gm::sema::detail {

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

// `torch.nn.Module` or a torch.nn module class (`torch.nn.Linear`,
// `torch.nn.modules.conv.Conv2d`, ...).
bool is_torch_nn_module_class(std::string_view qualified);
// A torch.nn layer whose forward returns a single tensor.
bool nn_layer_returns_tensor(std::string_view qualified);
// `torch.xxx(...)` / `torch.nn.functional.xxx(...)`: by qualified name.
CallInfo torch_function(std::string_view qualified);
// `tensor.xxx(...)`
CallInfo tensor_method(std::string_view name);
// `tensor.xxx` (no call)
CallInfo tensor_attribute(std::string_view name);

}  // namespace gm::sema::detail

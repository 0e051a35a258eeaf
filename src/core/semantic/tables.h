// Internal: torch classes, and what torch functions and tensor methods
// return (from the op table, semantic/torch_ops.def; ops.h is its public
// face). Anything not listed is Unknown.
#pragma once

#include <cstdint>
#include <string_view>

#include "semantic/ops.h"

namespace gm::sema::detail {

using sema::CallInfo;
using sema::Ret;
using sema::RetDType;

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

// Python's repr() of constant values, byte for byte.
#pragma once

#include <string>
#include <string_view>

#include "ast/tree.h"

namespace gm::ast {

// repr(str) for a WTF-8 encoded value; `minor` selects the Unicode database
// version that decides which characters are printable.
std::string repr_str(std::string_view wtf8, int minor);
std::string repr_bytes(std::string_view bytes);
std::string repr_float(double v);
std::string repr_complex_imag(double imag);  // repr(complex(0, imag))
std::string repr_constant(const Tree& tree, const ConstantValue& v, int minor);

}  // namespace gm::ast

// Python's repr() of constants, byte for byte (Objects/unicodeobject.c
// unicode_repr, Objects/bytesobject.c PyBytes_Repr, Python/pystrtod.c
// format_float_short in 'r' mode).
#include "ast/repr.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>

#include "syntax/unicode_printable.h"

namespace gm::ast {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Decode one code point from WTF-8 (UTF-8 that may encode surrogates).
// Malformed input (never produced by the parser) decodes one byte as itself,
// so the function is total.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) -> int {
    if (i + k >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[i + k]);
    return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
  };
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  if ((b0 & 0xE0) == 0xC0) {
    const int c1 = cont(1);
    if (c1 >= 0) {
      i += 2;
      return (char32_t(b0 & 0x1F) << 6) | char32_t(c1);
    }
  } else if ((b0 & 0xF0) == 0xE0) {
    const int c1 = cont(1), c2 = c1 >= 0 ? cont(2) : -1;
    if (c2 >= 0) {
      i += 3;
      return (char32_t(b0 & 0x0F) << 12) | (char32_t(c1) << 6) | char32_t(c2);
    }
  } else if ((b0 & 0xF8) == 0xF0) {
    const int c1 = cont(1), c2 = c1 >= 0 ? cont(2) : -1, c3 = c2 >= 0 ? cont(3) : -1;
    if (c3 >= 0) {
      i += 4;
      return (char32_t(b0 & 0x07) << 18) | (char32_t(c1) << 12) | (char32_t(c2) << 6) |
             char32_t(c3);
    }
  }
  ++i;
  return b0;
}

void append_hex(std::string& out, char32_t v, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 0xF];
}

// Python's quote choice: ' unless the text holds ' and no ".
char choose_quote(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  return (has_single && !has_double) ? '"' : '\'';
}

// Shortest round-trip digits and decimal exponent of a finite, positive v:
// v = 0.d1d2d3... * 10^decpt.
void shortest_digits(double v, std::string& digits, int& decpt) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  // "d[.ddd]e[+-]XX"
  const auto e = sci.find('e');
  digits.clear();
  for (std::size_t k = 0; k < e; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exp10 = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  decpt = exp10 + 1;
}

// format_float_short(v, 'r', 0, flags): add_dot_0 is Py_DTSF_ADD_DOT_0.
std::string format_repr(double v, bool add_dot_0) {
  if (std::isnan(v)) return "nan";
  std::string out;
  if (std::signbit(v)) {
    out += '-';
    v = -v;
  }
  if (std::isinf(v)) return out + "inf";
  if (v == 0.0) return out + (add_dot_0 ? "0.0" : "0");
  std::string digits;
  int decpt = 0;
  shortest_digits(v, digits, decpt);
  const int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    // Exponent form: d[.ddd]e[+-]XX (at least two exponent digits).
    out += digits[0];
    if (n > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    const int exp = decpt - 1;
    out += 'e';
    out += exp < 0 ? '-' : '+';
    const int a = exp < 0 ? -exp : exp;
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-decpt), '0');
    out += digits;
  } else if (decpt >= n) {
    out += digits;
    out.append(static_cast<std::size_t>(decpt - n), '0');
    if (add_dot_0) out += ".0";
  } else {
    out.append(digits, 0, static_cast<std::size_t>(decpt));
    out += '.';
    out.append(digits, static_cast<std::size_t>(decpt), std::string::npos);
  }
  return out;
}

}  // namespace

std::string repr_str(std::string_view wtf8, int minor) {
  const char quote = choose_quote(wtf8);
  std::string out;
  out.reserve(wtf8.size() + 2);
  out += quote;
  for (std::size_t i = 0; i < wtf8.size();) {
    const std::size_t start = i;
    const char32_t ch = next_code_point(wtf8, i);
    if (ch == static_cast<char32_t>(quote) || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch < 0x20 || ch == 0x7f) {
      out += "\\x";
      append_hex(out, ch, 2);
    } else if (ch < 0x7f) {
      out += static_cast<char>(ch);
    } else if (unicode::is_printable(ch, minor)) {
      out.append(wtf8.substr(start, i - start));
    } else if (ch <= 0xff) {
      out += "\\x";
      append_hex(out, ch, 2);
    } else if (ch <= 0xffff) {
      out += "\\u";
      append_hex(out, ch, 4);
    } else {
      out += "\\U";
      append_hex(out, ch, 8);
    }
  }
  out += quote;
  return out;
}

std::string repr_bytes(std::string_view bytes) {
  const char quote = choose_quote(bytes);
  std::string out;
  out.reserve(bytes.size() + 3);
  out += 'b';
  out += quote;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b == static_cast<unsigned char>(quote) || b == '\\') {
      out += '\\';
      out += c;
    } else if (b == '\t') {
      out += "\\t";
    } else if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b < 0x20 || b >= 0x7f) {
      out += "\\x";
      append_hex(out, b, 2);
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

std::string repr_float(double v) { return format_repr(v, /*add_dot_0=*/true); }

std::string repr_complex_imag(double imag) {
  // complex_repr: a zero real part with a positive sign prints only the
  // imaginary part, formatted 'r' without the ".0".
  return format_repr(imag, /*add_dot_0=*/false) + "j";
}

std::string repr_constant(const Tree& tree, const ConstantValue& v, int minor) {
  using K = ConstantValue::Kind;
  switch (v.kind) {
    case K::None: return "None";
    case K::True: return "True";
    case K::False: return "False";
    case K::Ellipsis: return "Ellipsis";
    case K::Int: return std::string(tree.str(v.text));
    case K::Float: return repr_float(v.number);
    case K::Complex: return repr_complex_imag(v.number);
    case K::Str: return repr_str(tree.str(v.text), minor);
    case K::Bytes: return repr_bytes(tree.str(v.text));
  }
  return "None";
}

}  // namespace gm::ast

// Literal decoding (see literals.h). Follows CPython's
// Parser/string_parser.c (decode_unicode_with_escapes, which first rewrites
// non-ASCII characters as \UXXXXXXXX escapes — positions in error messages
// count in that rewritten text) and Objects/unicodeobject.c
// (_PyUnicode_DecodeUnicodeEscapeInternal), Objects/bytesobject.c
// (_PyBytes_DecodeEscape).
#include "syntax/literals.h"

#include <charconv>
#include <cstring>
#include <vector>

#include "syntax/token.h"
#include "syntax/unicode_tables.h"

namespace gm::literals {
namespace {

inline int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Position in CPython's rewritten buffer for body offset `i`: ASCII bytes
// count 1, a non-ASCII character 10 ("\U%08x"), a backslash before a
// non-ASCII character or at the end 6 ("\u005c").
std::size_t rewritten_pos(std::string_view body, std::size_t i) {
  std::size_t pos = 0;
  std::size_t k = 0;
  while (k < i && k < body.size()) {
    auto c = static_cast<unsigned char>(body[k]);
    if (c == '\\') {
      pos += 1;
      ++k;
      if (k >= body.size() || (static_cast<unsigned char>(body[k]) & 0x80)) pos += 5;
      if (k >= body.size()) break;
      c = static_cast<unsigned char>(body[k]);
      if (!(c & 0x80)) {
        // the escaped ASCII character itself
        if (k < i) {
          pos += 1;
          ++k;
        }
        continue;
      }
    }
    if (c & 0x80) {
      char32_t cp;
      int len = unicode::decode_utf8(body.data() + k, body.data() + body.size(), cp);
      pos += 10;
      k += static_cast<std::size_t>(len);
    } else {
      pos += 1;
      ++k;
    }
  }
  return pos;
}

LiteralError unicode_error(std::string_view body, std::size_t start, std::size_t end,
                           const char* reason) {
  std::size_t a = rewritten_pos(body, start);
  std::size_t b = rewritten_pos(body, end);
  std::string m = "(unicode error) 'unicodeescape' codec can't decode ";
  if (b == a + 1) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(body[start]));
    m += "byte ";
    m += buf;
    m += " in position " + std::to_string(a);
  } else {
    m += "bytes in position " + std::to_string(a) + "-" + std::to_string(b - 1);
  }
  m += ": ";
  m += reason;
  return LiteralError{std::move(m)};
}

// Append a newline-normalised copy of [b, e): CRLF and CR become LF.
void append_normalised(std::string& out, const char* b, const char* e) {
  while (b < e) {
    const void* cr = std::memchr(b, '\r', static_cast<std::size_t>(e - b));
    if (!cr) {
      out.append(b, e);
      return;
    }
    const char* r = static_cast<const char*>(cr);
    out.append(b, r);
    out += '\n';
    b = r + 1;
    if (b < e && *b == '\n') ++b;
  }
}

// The shared escape decoder. `bytes`: bytes semantics; `braces`: collapse
// doubled braces (f-string text).
std::optional<LiteralError> decode(std::string_view body, bool raw, bool bytes, bool braces,
                                   std::string& out) {
  const char* s = body.data();
  const std::size_t n = body.size();
  if (bytes) {
    for (std::size_t i = 0; i < n; ++i) {
      if (static_cast<unsigned char>(s[i]) >= 0x80) {
        return LiteralError{"bytes can only contain ASCII literal characters"};
      }
    }
  }
  out.reserve(out.size() + n);
  std::size_t i = 0;
  while (i < n) {
    // Copy the run up to the next special character.
    std::size_t j = i;
    while (j < n && s[j] != '\\' && s[j] != '\r' && !(braces && (s[j] == '{' || s[j] == '}'))) ++j;
    out.append(s + i, j - i);
    i = j;
    if (i >= n) break;
    char c = s[i];
    if (c == '\r') {
      out += '\n';
      ++i;
      if (i < n && s[i] == '\n') ++i;
      continue;
    }
    if (c == '{' || c == '}') {
      out += c;
      ++i;
      if (i < n && s[i] == c) ++i;
      continue;
    }
    // Backslash.
    const std::size_t start = i;
    ++i;
    if (i >= n) {
      out += '\\';
      break;
    }
    if (raw) {
      out += '\\';
      // The escaped character is literal; a newline is still normalised.
      if (s[i] == '\r') {
        out += '\n';
        ++i;
        if (i < n && s[i] == '\n') ++i;
      } else {
        out += s[i];
        ++i;
      }
      continue;
    }
    c = s[i++];
    switch (c) {
      case '\n': break;
      case '\r':
        if (i < n && s[i] == '\n') ++i;
        break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        unsigned v = static_cast<unsigned>(c - '0');
        if (i < n && s[i] >= '0' && s[i] <= '7') {
          v = v * 8 + static_cast<unsigned>(s[i++] - '0');
          if (i < n && s[i] >= '0' && s[i] <= '7') v = v * 8 + static_cast<unsigned>(s[i++] - '0');
        }
        if (bytes) {
          out += static_cast<char>(v & 0xFF);
        } else {
          unicode::append_utf8(out, v);
        }
        break;
      }
      case 'x':
        if (bytes) {
          int d1 = i < n ? hex_value(static_cast<unsigned char>(s[i])) : -1;
          int d2 = i + 1 < n ? hex_value(static_cast<unsigned char>(s[i + 1])) : -1;
          if (d1 < 0 || d2 < 0) {
            return LiteralError{"(value error) invalid \\x escape at position " +
                                std::to_string(start)};
          }
          out += static_cast<char>(d1 * 16 + d2);
          i += 2;
          break;
        }
        [[fallthrough]];
      case 'u':
      case 'U': {
        if (bytes) {  // \u, \U are not escapes in bytes
          out += '\\';
          out += c;
          break;
        }
        int count = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        const char* msg = c == 'x'   ? "truncated \\xXX escape"
                          : c == 'u' ? "truncated \\uXXXX escape"
                                     : "truncated \\UXXXXXXXX escape";
        std::uint32_t v = 0;
        for (; count; --count, ++i) {
          int d = i < n ? hex_value(static_cast<unsigned char>(s[i])) : -1;
          if (d < 0) return unicode_error(body, start, i, msg);
          v = (v << 4) | static_cast<std::uint32_t>(d);
        }
        if (v > 0x10FFFF) return unicode_error(body, start, i, "illegal Unicode character");
        unicode::append_utf8(out, v);
        break;
      }
      case 'N': {
        if (bytes) {
          out += "\\N";
          break;
        }
        const char* malformed = "malformed \\N character escape";
        if (i >= n || s[i] != '{') return unicode_error(body, start, i, malformed);
        std::size_t name_begin = ++i;
        while (i < n && s[i] != '}') ++i;
        if (i >= n) return unicode_error(body, start, i, malformed);
        if (i == name_begin) return unicode_error(body, start, i, malformed);
        std::string_view name(s + name_begin, i - name_begin);
        ++i;
        char32_t cp;
        if (!unicode::lookup_name(name, cp)) {
          return unicode_error(body, start, i, "unknown Unicode character name");
        }
        unicode::append_utf8(out, cp);
        break;
      }
      default:
        // Invalid escape: kept as written (CPython only warns).
        out += '\\';
        --i;
        if (static_cast<unsigned char>(s[i]) < 0x80) {
          out += s[i++];
        }
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

StringParts split_string_token(std::string_view token) {
  StringParts p;
  std::size_t i = 0;
  while (i < token.size() && token[i] != '\'' && token[i] != '"') {
    switch (token[i]) {
      case 'r':
      case 'R': p.flags |= kPrefixRaw; break;
      case 'b':
      case 'B': p.flags |= kPrefixBytes; break;
      case 'u':
      case 'U': p.flags |= kPrefixUnicode; break;
      case 'f':
      case 'F': p.flags |= kPrefixFormat; break;
      default: break;
    }
    ++i;
  }
  p.prefix = token.substr(0, i);
  if (i >= token.size()) return p;
  char q = token[i];
  std::size_t rest = token.size() - i;
  if (rest >= 6 && token[i + 1] == q && token[i + 2] == q) {
    p.quote_size = 3;
    p.flags |= kTripleQuoted;
  }
  std::size_t qs = static_cast<std::size_t>(p.quote_size);
  if (rest >= 2 * qs) {
    p.body = token.substr(i + qs, rest - 2 * qs);
  }
  return p;
}

std::optional<LiteralError> decode_body(std::string_view body, std::uint8_t flags,
                                        std::string& out) {
  const bool raw = (flags & kPrefixRaw) != 0;
  const bool bytes = (flags & kPrefixBytes) != 0;
  if (raw && !bytes) {
    append_normalised(out, body.data(), body.data() + body.size());
    return std::nullopt;
  }
  return decode(body, raw, bytes, false, out);
}

std::optional<LiteralError> decode_string(std::string_view token, std::string& out) {
  StringParts p = split_string_token(token);
  return decode_body(p.body, p.flags, out);
}

std::optional<LiteralError> decode_fstring_middle(std::string_view text, bool raw, std::string& out,
                                                  bool collapse_braces) {
  return decode(text, raw, false, collapse_braces, out);
}

namespace {

// Arbitrary-precision conversion of digits in `base` to decimal.
std::string to_decimal(std::string_view digits, unsigned base) {
  // Little-endian limbs of 10^9.
  std::vector<std::uint32_t> limbs{0};
  for (char ch : digits) {
    int d = hex_value(static_cast<unsigned char>(ch));
    if (d < 0) continue;  // underscores
    std::uint64_t carry = static_cast<std::uint64_t>(d);
    for (auto& l : limbs) {
      std::uint64_t v = static_cast<std::uint64_t>(l) * base + carry;
      l = static_cast<std::uint32_t>(v % 1000000000u);
      carry = v / 1000000000u;
    }
    while (carry) {
      limbs.push_back(static_cast<std::uint32_t>(carry % 1000000000u));
      carry /= 1000000000u;
    }
  }
  std::string s = std::to_string(limbs.back());
  for (std::size_t k = limbs.size() - 1; k-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%09u", limbs[k]);
    s += buf;
  }
  return s;
}

double parse_double(std::string_view clean) {
  double v = 0.0;
  auto r = std::from_chars(clean.data(), clean.data() + clean.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow to inf or underflow to 0: decide by the decimal exponent.
    std::size_t e = clean.find_first_of("eE");
    std::string_view mant = clean.substr(0, e);
    long exp = 0;
    if (e != std::string_view::npos) {
      std::string_view es = clean.substr(e + 1);
      bool neg = !es.empty() && es[0] == '-';
      if (!es.empty() && (es[0] == '-' || es[0] == '+')) es.remove_prefix(1);
      for (char c : es) {
        if (exp < 100000000) exp = exp * 10 + (c - '0');
      }
      if (neg) exp = -exp;
    }
    // position of the first nonzero digit relative to the decimal point
    std::size_t dot = mant.find('.');
    std::size_t int_len = dot == std::string_view::npos ? mant.size() : dot;
    long mag = 0;
    bool found = false;
    for (std::size_t k = 0; k < mant.size(); ++k) {
      char c = mant[k];
      if (c == '.') continue;
      if (c != '0') {
        mag = k < int_len ? static_cast<long>(int_len - k) : -static_cast<long>(k - int_len - 1);
        found = true;
        break;
      }
    }
    if (!found) return 0.0;
    return mag + exp > 0 ? __builtin_inf() : 0.0;
  }
  return v;
}

}  // namespace

std::optional<LiteralError> parse_number(std::string_view text, Number& out) {
  out = Number{};
  if (text.empty()) return LiteralError{"invalid number"};
  char last = text.back();
  if (last == 'j' || last == 'J') {
    std::string clean;
    for (char c : text.substr(0, text.size() - 1))
      if (c != '_') clean += c;
    out.kind = Number::Kind::Complex;
    out.value = parse_double(clean);
    return std::nullopt;
  }
  if (text.size() > 1 && text[0] == '0' &&
      (text[1] == 'x' || text[1] == 'X' || text[1] == 'o' || text[1] == 'O' || text[1] == 'b' ||
       text[1] == 'B')) {
    unsigned base = (text[1] == 'x' || text[1] == 'X')   ? 16
                    : (text[1] == 'o' || text[1] == 'O') ? 8
                                                         : 2;
    out.kind = Number::Kind::Int;
    out.digits = to_decimal(text.substr(2), base);
    return std::nullopt;
  }
  bool is_float = false;
  for (char c : text) {
    if (c == '.' || c == 'e' || c == 'E') {
      is_float = true;
      break;
    }
  }
  std::string clean;
  clean.reserve(text.size());
  for (char c : text)
    if (c != '_') clean += c;
  if (is_float) {
    out.kind = Number::Kind::Float;
    out.value = parse_double(clean);
    return std::nullopt;
  }
  out.kind = Number::Kind::Int;
  if (clean.size() > 4300) {
    return LiteralError{
        "Exceeds the limit (4300 digits) for integer string conversion: value has " +
        std::to_string(clean.size()) +
        " digits; use sys.set_int_max_str_digits() to increase the limit - "
        "Consider hexadecimal for huge integer literals to avoid decimal "
        "conversion limits."};
  }
  std::size_t nz = clean.find_first_not_of('0');
  out.digits = nz == std::string::npos ? "0" : clean.substr(nz);
  return std::nullopt;
}

std::string normalize_identifier(std::string_view name) {
  for (char c : name) {
    if (static_cast<unsigned char>(c) >= 0x80) return unicode::nfkc(name);
  }
  return std::string(name);
}

}  // namespace gm::literals

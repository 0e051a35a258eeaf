// Source decoding: PEP 263 coding cookies, BOM handling, UTF-8 validation,
// single-byte encodings transcoded to UTF-8.
#include "syntax/source.h"

#include "syntax/unicode_data.h"
#include "syntax/unicode_tables.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace gm {
namespace {

SyntaxError make_error(std::string message, std::uint32_t line = 0, std::uint32_t col = 0) {
  SyntaxError e;
  e.kind = "SyntaxError";
  e.message = std::move(message);
  e.line = line;
  e.col = col;
  e.end_line = line;
  e.end_col = col;
  return e;
}

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

bool is_alnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// CPython's get_coding_spec on one physical line (without its newline).
// Returns true and the raw name when the line is a comment line carrying a
// `coding[:=]` spec.
bool coding_spec(std::string_view line, std::string& name) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
  if (i >= line.size() || line[i] != '#') return false;
  for (std::size_t p = i; p + 6 < line.size() + 1; ++p) {
    if (line.compare(p, 6, "coding") != 0) continue;
    std::size_t t = p + 6;
    if (t >= line.size() || (line[t] != ':' && line[t] != '=')) continue;
    ++t;
    while (t < line.size() && (line[t] == ' ' || line[t] == '\t')) ++t;
    std::size_t b = t;
    while (t < line.size() && (is_alnum(static_cast<unsigned char>(line[t])) || line[t] == '-' ||
                               line[t] == '_' || line[t] == '.'))
      ++t;
    if (t > b) {
      name.assign(line.substr(b, t - b));
      return true;
    }
  }
  return false;
}

// A line that holds only whitespace and/or a comment.
bool blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (c == '#' || c == '\n' || c == '\r') return true;
    if (c != ' ' && c != '\t' && c != '\f') return false;
  }
  return true;
}

// CPython's get_normal_name.
std::string normal_name(const std::string& s) {
  std::string buf;
  for (std::size_t i = 0; i < s.size() && i < 12; ++i) {
    char c = s[i];
    buf += c == '_' ? '-' : static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  }
  auto starts = [&](std::string_view p) { return buf.compare(0, p.size(), p) == 0; };
  if (buf == "utf-8" || starts("utf-8-")) return "utf-8";
  if (buf == "latin-1" || buf == "iso-8859-1" || buf == "iso-latin-1" || starts("latin-1-") ||
      starts("iso-8859-1-") || starts("iso-latin-1-"))
    return "iso-8859-1";
  return s;
}

enum class Codec { Utf8, Latin1, Ascii, SingleByte, Unknown };

// Python's codecs.lookup for the codecs we implement.
Codec lookup_codec(const std::string& name, int& single) {
  // encodings.normalize_encoding: runs of non-alphanumerics (except '.')
  // become one '_'; lowercase.
  std::string n;
  bool pending = false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (is_alnum(c) || c == '.') {
      if (pending && !n.empty()) n += '_';
      pending = false;
      n += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    } else {
      pending = true;
    }
  }
  static constexpr std::array<std::string_view, 9> utf8{
      "utf_8", "u8", "utf", "utf8", "utf8_ucs2", "utf8_ucs4", "cp65001", "utf_8_sig", "utf8_sig"};
  static constexpr std::array<std::string_view, 14> latin1{
      "latin_1", "8859",      "cp819",      "csisolatin1",     "ibm819",
      "iso8859", "iso8859_1", "iso_8859_1", "iso_8859_1_1987", "iso_ir_100",
      "l1",      "latin",     "latin1",     "iso_latin_1"};
  static constexpr std::array<std::string_view, 13> ascii{
      "ascii",    "646",     "ansi_x3.4_1968", "ansi_x3_4_1968", "ansi_x3.4_1986",
      "cp367",    "csascii", "ibm367",         "iso646_us",      "iso_646.irv_1991",
      "iso_ir_6", "us",      "us_ascii"};
  for (auto a : utf8)
    if (n == a) return Codec::Utf8;
  for (auto a : latin1)
    if (n == a) return Codec::Latin1;
  for (auto a : ascii)
    if (n == a) return Codec::Ascii;
  for (std::size_t i = 0; i < unicode::data::sb_aliases_size; ++i) {
    if (n == unicode::data::sb_aliases[i].name) {
      single = unicode::data::sb_aliases[i].codec;
      return Codec::SingleByte;
    }
  }
  return Codec::Unknown;
}

// Validate UTF-8 (strict: no overlongs, no surrogates, <= U+10FFFF).
// Returns the offset of the first bad sequence or npos; `reason` and
// `bad_len` describe it the way Python's codec does.
std::size_t find_invalid_utf8(std::string_view s, const char*& reason, std::size_t& bad_len) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path: 32 bytes per test (four words OR'd), then 8.
    constexpr std::uint64_t kHigh = 0x8080808080808080ull;
    while (i + 32 <= n) {
      std::uint64_t w[4];
      std::memcpy(w, p + i, 32);
      if ((w[0] | w[1] | w[2] | w[3]) & kHigh) break;
      i += 32;
    }
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & kHigh) break;
      i += 8;
    }
    if (i >= n) break;
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      reason = "invalid start byte";
      bad_len = 1;
      return i;
    }
    for (std::size_t k = 1; k <= need; ++k) {
      if (i + k >= n) {
        reason = "unexpected end of data";
        bad_len = k;
        return i;
      }
      unsigned char d = p[i + k];
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (d < l || d > h) {
        reason = "invalid continuation byte";
        bad_len = 1;
        return i;
      }
    }
    i += need + 1;
  }
  return std::string_view::npos;
}

std::uint32_t line_of(std::string_view s, std::size_t offset, std::size_t& line_start) {
  std::uint32_t line = 1;
  line_start = 0;
  for (std::size_t i = 0; i < offset && i < s.size(); ++i) {
    if (s[i] == '\n' || (s[i] == '\r' && (i + 1 >= s.size() || s[i + 1] != '\n'))) {
      ++line;
      line_start = i + 1;
    }
  }
  return line;
}

std::optional<SyntaxError> check_utf8(std::string_view text, std::size_t base) {
  const char* reason = nullptr;
  std::size_t bad_len = 1;
  std::size_t at = find_invalid_utf8(text.substr(base), reason, bad_len);
  if (at == std::string_view::npos) return std::nullopt;
  at += base;
  std::size_t ls = 0;
  std::uint32_t line = line_of(text, at, ls);
  if (ls < base) ls = base;
  std::string msg = "(unicode error) 'utf-8' codec can't decode ";
  if (bad_len > 1) {
    msg += "bytes in position 0-" + std::to_string(bad_len - 1);
  } else {
    msg += "byte " + hex_byte(static_cast<unsigned char>(text[at])) + " in position 0";
  }
  msg += ": ";
  msg += reason;
  return make_error(std::move(msg), line, static_cast<std::uint32_t>(at - ls));
}

std::optional<SyntaxError> check_nul(std::string_view text, const char* message) {
  const void* z = std::memchr(text.data(), 0, text.size());
  if (!z) return std::nullopt;
  std::size_t at = static_cast<const char*>(z) - text.data();
  std::size_t ls = 0;
  std::uint32_t line = line_of(text, at, ls);
  return make_error(message, line, static_cast<std::uint32_t>(at - ls));
}

}  // namespace

std::variant<Source, SyntaxError> Source::decode(std::string bytes) {
  if (bytes.size() >= 0xFFFFFFF0u) return make_error("source code too large");
  Source src;
  std::size_t base = 0;
  bool bom = bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xEF &&
             static_cast<unsigned char>(bytes[1]) == 0xBB &&
             static_cast<unsigned char>(bytes[2]) == 0xBF;
  if (bom) base = 3;

  if (auto e = check_nul(bytes, "source code cannot contain null bytes")) return *e;

  // The coding cookie: line 1, or line 2 when line 1 is blank or a comment.
  // decode_str splits lines at '\n' only.
  std::string_view all(bytes);
  std::string_view rest = all.substr(base);
  std::size_t nl1 = rest.find('\n');
  std::string_view line1 = rest.substr(0, nl1);
  std::string cookie;
  bool have = coding_spec(line1, cookie);
  if (!have && nl1 != std::string_view::npos && blank_or_comment(line1)) {
    std::string_view after = rest.substr(nl1 + 1);
    std::size_t nl2 = after.find('\n');
    if (nl2 != std::string_view::npos) have = coding_spec(after.substr(0, nl2), cookie);
  }

  Codec codec = Codec::Utf8;
  int single = -1;
  std::string enc = "utf-8";
  if (have) {
    std::string cs = normal_name(cookie);
    if (bom && cs != "utf-8") return make_error("encoding problem: " + cs + " with BOM");
    if (cs == "utf-8") {
      codec = Codec::Utf8;
    } else {
      codec = lookup_codec(cs, single);
      if (codec == Codec::Unknown) return make_error("unknown encoding: " + cs);
    }
    enc = codec == Codec::Utf8     ? "utf-8"
          : codec == Codec::Latin1 ? "latin-1"
          : codec == Codec::Ascii  ? "ascii"
                                   : unicode::data::sb_codec_names[single];
  }
  src.encoding_ = enc;

  switch (codec) {
    case Codec::Utf8:
    case Codec::Unknown:
      if (auto e = check_utf8(all, base)) return *e;
      src.text_ = std::move(bytes);
      src.body_offset_ = static_cast<std::uint32_t>(base);
      break;
    case Codec::Ascii: {
      for (std::size_t i = base; i < bytes.size(); ++i) {
        auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x80) {
          return make_error("'ascii' codec can't decode byte " + hex_byte(c) + " in position " +
                            std::to_string(i - base) + ": ordinal not in range(128)");
        }
      }
      src.text_ = std::move(bytes);
      src.body_offset_ = static_cast<std::uint32_t>(base);
      break;
    }
    case Codec::Latin1: {
      std::string out;
      out.reserve(bytes.size() + bytes.size() / 8);
      for (std::size_t i = base; i < bytes.size(); ++i) {
        auto c = static_cast<unsigned char>(bytes[i]);
        if (c < 0x80) {
          out += static_cast<char>(c);
        } else {
          out += static_cast<char>(0xC0 | (c >> 6));
          out += static_cast<char>(0x80 | (c & 0x3F));
        }
      }
      src.text_ = std::move(out);
      src.body_offset_ = 0;
      break;
    }
    case Codec::SingleByte: {
      const std::uint16_t* table = unicode::data::sb_tables[single];
      std::string out;
      out.reserve(bytes.size() + bytes.size() / 4);
      for (std::size_t i = base; i < bytes.size(); ++i) {
        auto c = static_cast<unsigned char>(bytes[i]);
        if (c < 0x80) {
          out += static_cast<char>(c);
          continue;
        }
        std::uint16_t cp = table[c - 0x80];
        if (cp == 0xFFFF) {
          return make_error("'charmap' codec can't decode byte " + hex_byte(c) + " in position " +
                            std::to_string(i - base) + ": character maps to <undefined>");
        }
        unicode::append_utf8(out, cp);
      }
      src.text_ = std::move(out);
      src.body_offset_ = 0;
      break;
    }
  }
  if (src.text_.size() >= 0xFFFFFFF0u) return make_error("source code too large");
  return src;
}

std::variant<Source, SyntaxError> Source::from_utf8(std::string text) {
  if (text.size() >= 0xFFFFFFF0u) return make_error("source code too large");
  if (auto e = check_nul(text, "source code string cannot contain null bytes")) return *e;
  if (auto e = check_utf8(text, 0)) return *e;
  Source src;
  src.text_ = std::move(text);
  src.body_offset_ = 0;
  return src;
}

}  // namespace gm

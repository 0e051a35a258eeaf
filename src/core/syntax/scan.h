// Byte scans for the lexer's hot loops: identifier runs, indentation,
// comments, string bodies and line starts.
//
// Why: these loops run over most bytes of a file, and a byte-at-a-time loop
// pays a compare per byte plus a mispredicted exit per run. With SSE2 (part
// of every x86-64 CPU, so no -march flag is needed) 16 bytes are classified
// at once and the first interesting byte is a bit count. Each scan has a
// portable bytewise version, used for the tail of the text and where SSE2 is
// missing; both give identical results (tests/cpp/test_scan.cpp).
//
// Conventions: `s` is the text, `n` its size, and s[n] is readable and NUL
// (std::string's terminator); the text has no other NUL (Source rejects
// them). A 16-byte block is loaded only when it lies wholly inside [0, n).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gm::scan {

constexpr bool is_ident_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 128;
}

struct ByteTable {
  bool v[256];
};
constexpr ByteTable make_ident_table() {
  ByteTable t{};
  for (int c = 0; c < 256; ++c) t.v[c] = is_ident_byte(static_cast<unsigned char>(c));
  return t;
}
// ASCII letters, digits, '_' and every byte >= 0x80.
inline constexpr ByteTable kIdentByte = make_ident_table();

#if defined(__SSE2__)
inline __m128i load16(const char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline unsigned mask_of(__m128i m) { return static_cast<unsigned>(_mm_movemask_epi8(m)); }
inline __m128i eq(__m128i v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); }
// Bytes in [lo, lo + len): unsigned compare done as a signed one on x ^ 0x80.
inline __m128i in_range(__m128i v, char lo, int len) {
  const __m128i bias = _mm_set1_epi8(static_cast<char>(0x80));
  return _mm_cmplt_epi8(_mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8(lo)), bias),
                        _mm_set1_epi8(static_cast<char>(len ^ 0x80)));
}
#endif

// End of the run of identifier bytes starting at p (p <= n). `acc` gets bit
// 7 set when the run has a non-ASCII byte.
inline std::uint32_t ident_end(const char* s, std::uint32_t p, std::uint32_t n, unsigned& acc) {
#if defined(__SSE2__)
  while (p + 16 <= n) {
    const __m128i v = load16(s + p);
    const __m128i letter = in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 26);
    const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());  // >= 0x80
    const unsigned ident = mask_of(
        _mm_or_si128(_mm_or_si128(letter, in_range(v, '0', 10)), _mm_or_si128(eq(v, '_'), high)));
    const unsigned high_bits = mask_of(high);
    if (ident != 0xFFFFu) {
      const int len = std::countr_one(ident);
      if (high_bits & ((1u << len) - 1)) acc |= 0x80;
      return p + static_cast<std::uint32_t>(len);
    }
    if (high_bits) acc |= 0x80;
    p += 16;
  }
#endif
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  while (kIdentByte.v[u[p]]) acc |= u[p++];  // stops at the NUL at n
  return p;
}

// Number of ' ' bytes at p (p <= n), 8 at a time: indentation is most of
// the whitespace in real code.
inline std::uint32_t space_run(const char* s, std::uint32_t p, std::uint32_t n) {
  const std::uint32_t start = p;
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t kSpaces = 0x2020202020202020ull;
    while (p + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s + p, 8);
      const std::uint64_t x = w ^ kSpaces;
      if (x) return p + static_cast<std::uint32_t>(std::countr_zero(x) / 8) - start;
      p += 8;
    }
  }
  while (p < n && s[p] == ' ') ++p;
  return p - start;
}

// The first '\n' or '\r' at or after p, or n: the end of a comment.
inline std::uint32_t line_end(const char* s, std::uint32_t p, std::uint32_t n) {
#if defined(__SSE2__)
  while (p + 16 <= n) {
    const __m128i v = load16(s + p);
    const unsigned m = mask_of(_mm_or_si128(eq(v, '\n'), eq(v, '\r')));
    if (m) return p + static_cast<std::uint32_t>(std::countr_zero(m));
    p += 16;
  }
#endif
  while (p < n && s[p] != '\n' && s[p] != '\r') ++p;
  return p;
}

// Inside a string literal closed by `quote`: the first byte at or after p
// (p <= n) that the lexer must look at: the quote, a backslash, '\r', '\n'
// (a line break matters only to a single-quoted string, but stopping there
// in a triple-quoted one is harmless) or the end of the text.
inline std::uint32_t string_stop(const char* s, std::uint32_t p, std::uint32_t n, char quote) {
#if defined(__SSE2__)
  while (p + 16 <= n) {
    const __m128i v = load16(s + p);
    const unsigned m = mask_of(_mm_or_si128(_mm_or_si128(eq(v, quote), eq(v, '\\')),
                                            _mm_or_si128(eq(v, '\n'), eq(v, '\r'))));
    if (m) return p + static_cast<std::uint32_t>(std::countr_zero(m));
    p += 16;
  }
#endif
  while (p < n && s[p] != quote && s[p] != '\\' && s[p] != '\n' && s[p] != '\r') ++p;
  return p;
}

// Append the offset after every '\n' in [p, n) to `starts` (the line index
// of a text with LF line ends only).
inline void lf_line_starts(const char* s, std::uint32_t p, std::uint32_t n,
                           std::vector<std::uint32_t>& starts) {
#if defined(__SSE2__)
  while (p + 16 <= n) {
    unsigned m = mask_of(eq(load16(s + p), '\n'));
    while (m) {
      starts.push_back(p + static_cast<std::uint32_t>(std::countr_zero(m)) + 1);
      m &= m - 1;
    }
    p += 16;
  }
#endif
  for (; p < n; ++p)
    if (s[p] == '\n') starts.push_back(p + 1);
}

}  // namespace gm::scan

// Unicode character properties and normalisation data, generated from
// Python's unicodedata by scripts/gen_unicode_tables.py (do not edit the
// generated .cpp files by hand).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gm::unicode {

// PEP 3131 identifier classes (XID_Start plus '_' is the caller's job).
bool is_xid_start(char32_t c);
bool is_xid_continue(char32_t c);

// Decode one UTF-8 sequence at p (p < end). Returns its length (1-4) and sets
// cp; an invalid sequence returns 1 and cp = U+FFFD.
int decode_utf8(const char* p, const char* end, char32_t& cp);
// Append the UTF-8 (WTF-8 for surrogates) encoding of cp.
void append_utf8(std::string& out, char32_t cp);

// NFKC normalisation of UTF-8 text (used for non-ASCII identifiers).
std::string nfkc(std::string_view utf8);

// Look up a character by its Unicode name or alias, case-insensitively, as
// `\N{...}` does. Returns false when the name is unknown.
bool lookup_name(std::string_view name, char32_t& cp);

}  // namespace gm::unicode

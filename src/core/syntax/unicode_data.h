// Generated Unicode tables (see scripts/gen_unicode_tables.py); the
// interface to them is unicode_tables.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gm::unicode::data {

extern const char unicode_version[];
// Sorted, disjoint, inclusive code point ranges.
extern const std::uint32_t xid_start[][2];
extern const std::size_t xid_start_size;
extern const std::uint32_t xid_continue[][2];
extern const std::size_t xid_continue_size;
// {first, last, canonical combining class}, sorted.
extern const std::uint32_t ccc[][3];
extern const std::size_t ccc_size;
// {code point, offset << 8 | length} into decomp_data: the full (recursive)
// compatibility decomposition of the code point. Sorted by code point.
extern const std::uint32_t decomp_index[][2];
extern const std::size_t decomp_index_size;
extern const std::uint32_t decomp_data[];
extern const std::size_t decomp_data_size;
// {first, second, composite}: canonical primary composites, sorted.
extern const std::uint32_t compose_pairs[][3];
extern const std::size_t compose_pairs_size;
// Code points named "CJK UNIFIED IDEOGRAPH-<hex>".
extern const std::uint32_t cjk_unified[][2];
extern const std::size_t cjk_unified_size;
// Character names: a space-separated word list and name records (see the
// generator for the encoding), split in chunks of name_*_chunk bytes.
extern const char* const name_words[];
extern const std::size_t name_words_count;
extern const std::size_t name_words_chunk;
extern const std::size_t name_words_total;
extern const char* const name_records[];
extern const std::size_t name_records_count;
extern const std::size_t name_records_chunk;
extern const std::size_t name_records_total;
extern const std::size_t name_count;
// Single-byte, ASCII-compatible codecs for coding cookies: normalised alias
// (Python's encodings.normalize_encoding form, lowercase) -> table index;
// sb_tables[i][b - 0x80] is the code point of byte b (0xFFFF: undefined).
struct SbAlias {
  const char* name;
  int codec;
};
extern const char* const sb_codec_names[];
extern const SbAlias sb_aliases[];  // sorted by name
extern const std::size_t sb_aliases_size;
extern const std::uint16_t sb_tables[][128];
extern const std::size_t sb_codec_count;

}  // namespace gm::unicode::data

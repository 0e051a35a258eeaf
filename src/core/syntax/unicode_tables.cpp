// Unicode properties, NFKC and character-name lookup over the generated
// tables in unicode_data.cpp.
#include "syntax/unicode_tables.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "syntax/unicode_data.h"

namespace gm::unicode {
namespace {

bool in_ranges(const std::uint32_t (*r)[2], std::size_t n, char32_t c) {
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (r[mid][1] < c) {
      lo = mid + 1;
    } else if (r[mid][0] > c) {
      hi = mid;
    } else {
      return true;
    }
  }
  return false;
}

int combining_class(char32_t c) {
  if (c < 0x300) return 0;
  std::size_t lo = 0, hi = data::ccc_size;
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    if (data::ccc[mid][1] < c) {
      lo = mid + 1;
    } else if (data::ccc[mid][0] > c) {
      hi = mid;
    } else {
      return static_cast<int>(data::ccc[mid][2]);
    }
  }
  return 0;
}

constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr char32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t c, std::vector<char32_t>& out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  if (c >= 0xA0) {
    std::size_t lo = 0, hi = data::decomp_index_size;
    while (lo < hi) {
      std::size_t mid = (lo + hi) / 2;
      if (data::decomp_index[mid][0] < c) {
        lo = mid + 1;
      } else if (data::decomp_index[mid][0] > c) {
        hi = mid;
      } else {
        std::uint32_t v = data::decomp_index[mid][1];
        std::uint32_t off = v >> 8, len = v & 0xFF;
        for (std::uint32_t i = 0; i < len; ++i) out.push_back(data::decomp_data[off + i]);
        return;
      }
    }
  }
  out.push_back(c);
}

bool compose(char32_t a, char32_t b, char32_t& out) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    out = kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    return true;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    out = a + (b - kTBase);
    return true;
  }
  std::size_t lo = 0, hi = data::compose_pairs_size;
  while (lo < hi) {
    std::size_t mid = (lo + hi) / 2;
    const auto& p = data::compose_pairs[mid];
    if (p[0] < a || (p[0] == a && p[1] < b)) {
      lo = mid + 1;
    } else if (p[0] == a && p[1] == b) {
      out = p[2];
      return true;
    } else {
      hi = mid;
    }
  }
  return false;
}

std::string join_chunks(const char* const* chunks, std::size_t count, std::size_t total) {
  std::string s;
  s.reserve(total);
  for (std::size_t i = 0; i < count; ++i) s += chunks[i];
  return s;
}

struct NameTable {
  std::unordered_map<std::string, char32_t> map;
  NameTable() {
    std::string words =
        join_chunks(data::name_words, data::name_words_count, data::name_words_total);
    std::vector<std::string_view> vocab;
    std::size_t b = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i] == ' ') {
        vocab.emplace_back(words.data() + b, i - b);
        b = i + 1;
      }
    }
    std::string recs =
        join_chunks(data::name_records, data::name_records_count, data::name_records_total);
    map.reserve(data::name_count + 11172);
    constexpr std::uint32_t B = 90;
    std::size_t i = 0;
    std::string name;
    while (i + 4 <= recs.size()) {
      std::uint32_t cp = 0;
      for (int k = 0; k < 4; ++k) cp = cp * B + static_cast<std::uint32_t>(recs[i + k] - 0x21);
      i += 4;
      name.clear();
      while (i < recs.size() && recs[i] != '|') {
        auto c = static_cast<unsigned char>(recs[i]);
        std::uint32_t w;
        if (c < 0x21 + 45) {
          w = c - 0x21;
          i += 1;
        } else if (c < 0x7B) {
          w = 45 + (c - 0x21 - 45) * B + static_cast<std::uint32_t>(recs[i + 1] - 0x21);
          i += 2;
        } else {
          w = 45 + 45 * B + static_cast<std::uint32_t>(recs[i + 1] - 0x21) * B * B +
              static_cast<std::uint32_t>(recs[i + 2] - 0x21) * B +
              static_cast<std::uint32_t>(recs[i + 3] - 0x21);
          i += 4;
        }
        if (!name.empty()) name += ' ';
        if (w < vocab.size()) name += vocab[w];
      }
      ++i;  // '|'
      map.emplace(name, cp);
    }
    // Hangul syllables.
    static const char* const L[] = {"G",  "GG", "N", "D",  "DD", "R", "M", "B", "BB", "S",
                                    "SS", "",   "J", "JJ", "C",  "K", "T", "P", "H"};
    static const char* const V[] = {"A",   "AE", "YA", "YAE", "EO", "E",  "YEO",
                                    "YE",  "O",  "WA", "WAE", "OE", "YO", "U",
                                    "WEO", "WE", "WI", "YU",  "EU", "YI", "I"};
    static const char* const T[] = {"",   "G",  "GG", "GS", "N",  "NJ", "NH", "D", "L",  "LG",
                                    "LM", "LB", "LS", "LT", "LP", "LH", "M",  "B", "BS", "S",
                                    "SS", "NG", "J",  "C",  "K",  "T",  "P",  "H"};
    for (char32_t s = 0; s < kSCount; ++s) {
      std::string n = "HANGUL SYLLABLE ";
      n += L[s / kNCount];
      n += V[(s % kNCount) / kTCount];
      n += T[s % kTCount];
      map.emplace(std::move(n), kSBase + s);
    }
  }
};

}  // namespace

bool is_xid_start(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return in_ranges(data::xid_start, data::xid_start_size, c);
}

bool is_xid_continue(char32_t c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  return in_ranges(data::xid_continue, data::xid_continue_size, c);
}

int decode_utf8(const char* p, const char* end, char32_t& cp) {
  const auto* s = reinterpret_cast<const unsigned char*>(p);
  const std::ptrdiff_t avail = end - p;
  unsigned char c = s[0];
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  int len;
  char32_t v;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, v = c & 0x07;
  } else {
    cp = 0xFFFD;
    return 1;
  }
  if (avail < len) {
    cp = 0xFFFD;
    return 1;
  }
  for (int i = 1; i < len; ++i) {
    if ((s[i] & 0xC0) != 0x80) {
      cp = 0xFFFD;
      return 1;
    }
    v = (v << 6) | (s[i] & 0x3F);
  }
  if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF))) {
    cp = 0xFFFD;
    return 1;
  }
  cp = v;
  return len;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string nfkc(std::string_view utf8) {
  // 1. Full compatibility decomposition.
  std::vector<char32_t> d;
  d.reserve(utf8.size() + 8);
  const char* p = utf8.data();
  const char* end = p + utf8.size();
  while (p < end) {
    char32_t c;
    p += decode_utf8(p, end, c);
    decompose(c, d);
  }
  // 2. Canonical ordering: stable sort of each run of non-starters.
  std::vector<int> cls(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) cls[i] = combining_class(d[i]);
  for (std::size_t i = 0; i < d.size();) {
    if (cls[i] == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && cls[j] != 0) ++j;
    // insertion sort (runs are short)
    for (std::size_t a = i + 1; a < j; ++a) {
      char32_t cv = d[a];
      int cc = cls[a];
      std::size_t b = a;
      while (b > i && cls[b - 1] > cc) {
        d[b] = d[b - 1];
        cls[b] = cls[b - 1];
        --b;
      }
      d[b] = cv;
      cls[b] = cc;
    }
    i = j;
  }
  // 3. Canonical composition.
  std::vector<char32_t> out;
  std::vector<int> out_cls;
  out.reserve(d.size());
  std::ptrdiff_t starter = -1;
  for (std::size_t i = 0; i < d.size(); ++i) {
    char32_t c = d[i];
    int cc = cls[i];
    if (starter >= 0) {
      bool adjacent = static_cast<std::ptrdiff_t>(out.size()) - 1 == starter;
      int last = out_cls.back();
      bool blocked = !adjacent && (last == 0 || last >= cc);
      char32_t comp;
      if (!blocked && compose(out[starter], c, comp)) {
        out[starter] = comp;
        continue;
      }
    }
    if (cc == 0) starter = static_cast<std::ptrdiff_t>(out.size());
    out.push_back(c);
    out_cls.push_back(cc);
  }
  std::string result;
  result.reserve(utf8.size());
  for (char32_t c : out) append_utf8(result, c);
  return result;
}

bool lookup_name(std::string_view name, char32_t& cp) {
  std::string key(name);
  for (char& c : key)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  static constexpr std::string_view kCjk = "CJK UNIFIED IDEOGRAPH-";
  if (key.size() > kCjk.size() && key.compare(0, kCjk.size(), kCjk) == 0) {
    std::string_view hex = std::string_view(key).substr(kCjk.size());
    if (hex.size() != 4 && hex.size() != 5) return false;
    char32_t v = 0;
    for (char c : hex) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return false;
      }
      v = v * 16 + static_cast<char32_t>(d);
    }
    if (!in_ranges(data::cjk_unified, data::cjk_unified_size, v)) return false;
    cp = v;
    return true;
  }
  static const NameTable table;  // built on first use (thread-safe)
  auto it = table.map.find(key);
  if (it == table.map.end()) return false;
  cp = it->second;
  return true;
}

}  // namespace gm::unicode

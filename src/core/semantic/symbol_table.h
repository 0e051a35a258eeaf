// An open-addressing hash table keyed by (scope, name) with the name's hash
// carried in the key, for the model's symbol, declaration and attribute
// tables. Those are looked up for every name of a file, often several times
// per name along the scope chain; std::unordered_map spends most of that in
// following a node pointer per probe. Here a probe reads one slot of a flat
// array (the entry's index and 32 bits of its hash), and the entries live in
// a vector in insertion order.
//
// References to values stay valid until the next insertion (the entries
// vector may grow); the model fills each table once, then only reads it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace gm::sema {

// Identifiers are short: eight bytes at a time with a multiply-xorshift
// mix, several times cheaper than std::hash's byte loop on them.
inline std::size_t name_hash(std::string_view s) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ s.size();
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  std::uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

struct SymbolKey {
  std::uint32_t scope = 0;
  std::string_view name;
  std::size_t name_hash = 0;
  static SymbolKey of(std::uint32_t scope, std::string_view name) {
    return {scope, name, sema::name_hash(name)};
  }
  SymbolKey in(std::uint32_t other) const { return {other, name, name_hash}; }
  // Mixed, not name_hash * 31 + scope: one name bound in thousands of
  // consecutive scopes (`self`, `x`) would fill a run of adjacent slots, and
  // linear probing would walk it.
  std::size_t hash() const {
    std::uint64_t x = name_hash ^ (scope * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 32)) * 0xd6e8feb86659fd93ull;
    return static_cast<std::size_t>(x ^ (x >> 32));
  }
  friend bool operator==(const SymbolKey& a, const SymbolKey& b) {
    return a.name_hash == b.name_hash && a.scope == b.scope && a.name == b.name;
  }
};

template <class V>
class SymbolTable {
 public:
  using Entry = std::pair<SymbolKey, V>;

  void reserve(std::size_t n) {
    entries_.reserve(n);
    if (n * 2 > slots_.size()) rehash(n * 2);
  }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  const V* find(const SymbolKey& key) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[probe(key)];
    return s.tag ? &entries_[s.entry].second : nullptr;
  }
  bool contains(const SymbolKey& key) const { return find(key) != nullptr; }

  // The value of `key`, value-initialised when it is new.
  V& operator[](const SymbolKey& key) {
    if ((entries_.size() + 1) * 2 > slots_.size())
      rehash(std::max<std::size_t>(16, slots_.size() * 2));
    Slot& s = slots_[probe(key)];
    if (s.tag) return entries_[s.entry].second;
    s = {tag_of(key.hash()), static_cast<std::uint32_t>(entries_.size())};
    return entries_.emplace_back(key, V{}).second;
  }

  // In insertion order.
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  struct Slot {
    std::uint32_t tag = 0;  // 0: empty; else the hash's high bits, low bit set
    std::uint32_t entry = 0;
  };

  static std::uint32_t tag_of(std::size_t hash) {
    return static_cast<std::uint32_t>(hash >> 32) | 1u;
  }

  // The slot holding `key`, or the empty one where it would go (the table
  // is at most half full, so there is one).
  std::size_t probe(const SymbolKey& key) const {
    const std::size_t h = key.hash();
    const std::uint32_t tag = tag_of(h);
    std::size_t i = h & mask_;
    while (slots_[i].tag != 0 && !(slots_[i].tag == tag && entries_[slots_[i].entry].first == key))
      i = (i + 1) & mask_;
    return i;
  }

  void rehash(std::size_t at_least) {
    std::size_t cap = 16;
    while (cap < at_least) cap *= 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      const std::size_t h = entries_[e].first.hash();
      std::size_t i = h & mask_;
      while (slots_[i].tag != 0) i = (i + 1) & mask_;
      slots_[i] = {tag_of(h), static_cast<std::uint32_t>(e)};
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace gm::sema

// semantic/symbol_table.h: the open-addressing (scope, name) table under the
// model's symbols, checked against std::map as the oracle.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "semantic/symbol_table.h"

namespace {

using gm::sema::SymbolKey;
using gm::sema::SymbolTable;

TEST(SymbolTable, AgreesWithAnOrderedMapThroughRehashes) {
  // One name in thousands of consecutive scopes (as `self` is in a file of
  // many methods) and many names in one scope, inserted past several
  // rehashes, then every key and some absent ones looked up.
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("n" + std::to_string(i));
  names.push_back("self");
  SymbolTable<int> table;
  std::map<std::pair<std::uint32_t, std::string>, int> oracle;
  int value = 0;
  for (std::uint32_t scope = 0; scope < 5000; ++scope) {
    table[SymbolKey::of(scope, "self")] = ++value;
    oracle[{scope, "self"}] = value;
  }
  for (const auto& n : names) {
    table[SymbolKey::of(7, n)] += 1000;
    oracle[{7, n}] += 1000;
  }
  ASSERT_EQ(table.size(), oracle.size());
  for (const auto& [key, v] : oracle) {
    const int* got = table.find(SymbolKey::of(key.first, key.second));
    ASSERT_NE(got, nullptr) << key.first << " " << key.second;
    EXPECT_EQ(*got, v);
  }
  EXPECT_EQ(table.find(SymbolKey::of(5000, "self")), nullptr);
  EXPECT_EQ(table.find(SymbolKey::of(8, "n3")), nullptr);
  EXPECT_FALSE(table.contains(SymbolKey::of(7, "absent")));
  // Iteration visits every entry once, in insertion order.
  std::size_t seen = 0;
  for (const auto& [key, v] : table) {
    if (seen < 5000) {
      EXPECT_EQ(key.scope, seen);
      EXPECT_EQ(key.name, "self");
    }
    ++seen;
  }
  EXPECT_EQ(seen, oracle.size());
}

TEST(SymbolTable, KeysDifferingOnlyInScopeOrNameAreDistinct) {
  SymbolTable<int> table;
  table[SymbolKey::of(1, "x")] = 1;
  table[SymbolKey::of(2, "x")] = 2;
  table[SymbolKey::of(1, "y")] = 3;
  table.reserve(100);  // rehashing keeps every entry
  EXPECT_EQ(*table.find(SymbolKey::of(1, "x")), 1);
  EXPECT_EQ(*table.find(SymbolKey::of(2, "x")), 2);
  EXPECT_EQ(*table.find(SymbolKey::of(1, "y")), 3);
  EXPECT_EQ(*table.find(SymbolKey::of(0, "x").in(2)), 2);
  EXPECT_TRUE(SymbolTable<int>{}.empty());
  EXPECT_EQ(SymbolTable<int>{}.find(SymbolKey::of(0, "x")), nullptr);
}

}  // namespace

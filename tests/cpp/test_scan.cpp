// The lexer's byte scans (syntax/scan.h) against naive reference loops, on
// random texts whose interesting bytes fall inside 16-byte blocks, across
// block boundaries and in the bytewise tail.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "syntax/scan.h"

namespace {

using namespace gm;

// Random text over `alphabet`, each byte drawn with equal weight.
std::string random_text(std::mt19937& rng, std::size_t n, const std::string& alphabet) {
  std::string s(n, ' ');
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (char& c : s) c = alphabet[pick(rng)];
  return s;
}

const std::string kAlphabets[] = {
    "abcXYZ_09",                                  // long identifier runs
    "abc_ .(\n",                                  // short runs
    std::string("ab\xc3\xa9\xe2\x82\xac_1 +"),    // UTF-8 inside names
    "    \t\n",                                   // indentation
    "xyz \"'\\\r\n",                              // string bodies
    std::string(40, 'a') + "\n",                  // long lines
};

TEST(Scan, MatchesReferenceLoops) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    const std::string& alphabet = kAlphabets[round % std::size(kAlphabets)];
    const std::string text = random_text(rng, rng() % 80, alphabet);
    const char* s = text.c_str();  // NUL at n, as scan.h requires
    const auto n = static_cast<std::uint32_t>(text.size());
    for (std::uint32_t p = 0; p <= n; ++p) {
      // ident_end
      unsigned acc = 0, ref_acc = 0;
      std::uint32_t q = p;
      while (q < n && scan::is_ident_byte(static_cast<unsigned char>(s[q])))
        ref_acc |= static_cast<unsigned char>(s[q++]);
      ASSERT_EQ(scan::ident_end(s, p, n, acc), q) << text << " @" << p;
      ASSERT_EQ(acc & 0x80, ref_acc & 0x80) << text << " @" << p;
      // space_run
      q = p;
      while (q < n && s[q] == ' ') ++q;
      ASSERT_EQ(scan::space_run(s, p, n), q - p) << text << " @" << p;
      // line_end
      q = p;
      while (q < n && s[q] != '\n' && s[q] != '\r') ++q;
      ASSERT_EQ(scan::line_end(s, p, n), q) << text << " @" << p;
      // string_stop, for both quotes
      for (char quote : {'\'', '"'}) {
        q = p;
        while (q < n && s[q] != quote && s[q] != '\\' && s[q] != '\n' && s[q] != '\r') ++q;
        ASSERT_EQ(scan::string_stop(s, p, n, quote), q) << text << " @" << p;
      }
    }
    // lf_line_starts
    std::vector<std::uint32_t> got{0}, want{0};
    scan::lf_line_starts(s, 0, n, got);
    for (std::uint32_t i = 0; i < n; ++i)
      if (s[i] == '\n') want.push_back(i + 1);
    ASSERT_EQ(got, want) << text;
  }
}

}  // namespace

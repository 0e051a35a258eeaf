// SourceMap: edit markers from apply_fixes, composed over rounds.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "edits/edit.h"
#include "edits/source_map.h"

namespace gm::edits {
namespace {

using Side = SourceMap::Side;

ApplyResult apply_all(std::string_view text, std::vector<Edit> edits) {
  std::vector<Fix> fixes;
  for (auto& e : edits) fixes.push_back(Fix::safe("t", std::vector<Edit>{std::move(e)}));
  return apply_fixes(text, fixes);
}

TEST(SourceMap, OneRoundMarkersAndMapping) {
  //                 0123456789
  const std::string t = "ab cd ef\n";
  auto r = apply_all(t, {Edit::insert(3, "XX."), Edit::replace(6, 8, "E"), Edit::remove(0, 1)});
  ASSERT_EQ(r.text, "b XX.cd E\n");
  ASSERT_EQ(r.map.markers().size(), 3u);
  EXPECT_EQ(r.map.markers()[0], (SourceMarker{0, 0, 0, 1}));
  EXPECT_EQ(r.map.markers()[1], (SourceMarker{2, 5, 3, 3}));
  EXPECT_EQ(r.map.markers()[2], (SourceMarker{8, 9, 6, 8}));
  EXPECT_EQ(r.map.to_source(0), 1u);        // "b"
  EXPECT_EQ(r.map.to_source(2), 3u);        // inserted "XX." -> where it was inserted
  EXPECT_EQ(r.map.to_source(4, Side::End), 3u);
  EXPECT_EQ(r.map.to_source(5), 3u);        // "cd"
  EXPECT_EQ(r.map.to_source(8), 6u);        // "E" starts where "ef" started ...
  EXPECT_EQ(r.map.to_source(9, Side::End), 8u);  // ... and ends where it ended
  EXPECT_EQ(r.map.to_source(9), 8u);        // "\n"
  EXPECT_EQ(r.map.to_source(10, Side::End), 9u);
}

TEST(SourceMap, ComposeTwoRounds) {
  const std::string t0 = "print(x)\ny = 1\n";
  auto r1 = apply_all(t0, {Edit::insert(0, "rt."), Edit::insert(9, "import rt\n")});
  ASSERT_EQ(r1.text, "rt.print(x)\nimport rt\ny = 1\n");
  auto r2 = apply_all(r1.text, {Edit::replace(22, 27, "y = 2")});
  auto m = SourceMap::compose(r1.map, r2.map);
  EXPECT_EQ(m.to_source(3), 0u);   // "print" of round 1's text
  EXPECT_EQ(m.to_source(22), 9u);  // the line round 2 rewrote starts where "y = 1" started
  EXPECT_EQ(m.to_source(27, Side::End), 14u);
  EXPECT_EQ(m.to_source(28, Side::End), 15u);
}

// An anchored edit's start maps to its anchor, and still does after a
// later round edits the text next to it (touching regions stay apart).
TEST(SourceMap, AnchorsSurviveLaterRounds) {
  //                      0         1         2
  //                      0123456789012345678901234
  const std::string t0 = "if c:\n    warn(m)\nx = 1\n";
  Edit e = Edit::replace(0, 17, "warn_if(c, m)");
  e.anchors.push_back({0, 10});  // the call's start stands for `warn`
  auto r1 = apply_all(t0, {e});
  ASSERT_EQ(r1.text, "warn_if(c, m)\nx = 1\n");
  ASSERT_EQ(r1.map.markers().size(), 2u);
  EXPECT_EQ(r1.map.to_source(0), 10u);
  EXPECT_EQ(r1.map.to_source(13, Side::End), 17u);
  // Round 2 inserts right before the call and rewrites the next line.
  auto r2 = apply_all(r1.text, {Edit::insert(0, "rt."), Edit::replace(14, 19, "x = 2")});
  ASSERT_EQ(r2.text, "rt.warn_if(c, m)\nx = 2\n");
  auto m = SourceMap::compose(r1.map, r2.map);
  EXPECT_EQ(m.to_source(3), 10u);  // `warn_if` of round 1 -> `warn`
  EXPECT_EQ(m.to_source(0), 10u);  // the inserted `rt.` too: it went in after the deletion
  EXPECT_EQ(m.to_source(17), 18u);  // "x = 2" -> "x = 1"
  EXPECT_EQ(m.to_source(22, Side::End), 23u);
}

TEST(SourceMap, AnchorOutsideItsEditIsInvalid) {
  Edit e = Edit::replace(2, 4, "xy");
  e.anchors.push_back({1, 5});
  auto r = apply_all("abcdef", {e});
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(r.invalid, 1u);
}

// A copy anchor maps each copied byte to the byte it copies; the text
// around it maps as a replaced stretch.
TEST(SourceMap, CopyAnchorMapsEveryCopiedByte) {
  // `a * 2` at 14, `b` at 34.
  const std::string t0 = "if c:\n    h = a * 2\nelse:\n    h = b\n";
  Edit e = Edit::replace(0, 35, "h = where(c, a * 2, b)");
  anchor_copy(e, t0, 14, 19);  // `a * 2`
  anchor_copy(e, t0, 34, 35);  // `b`: a bare name is too common to place
  ASSERT_EQ(e.anchors.size(), 1u);
  EXPECT_EQ(e.anchors[0], (Anchor{13, 14, 5}));
  auto r = apply_all(t0, {e});
  ASSERT_EQ(r.applied, 1u);
  ASSERT_EQ(r.text, "h = where(c, a * 2, b)\n");
  for (std::uint32_t k = 0; k < 5; ++k) {
    EXPECT_EQ(r.map.to_source(13 + k), 14 + k);
    EXPECT_EQ(r.map.to_source(14 + k, Side::End), 15 + k);
  }
  EXPECT_EQ(r.map.to_source(0), 0u);  // `h = where(c, ` stands for the `if`
  EXPECT_EQ(r.map.to_source(22, Side::End), 35u);
}

TEST(SourceMap, CopyAnchorThatDiffersIsInvalid) {
  Edit e = Edit::replace(0, 6, "xyz");
  e.anchors.push_back({0, 0, 2});  // claims "xy" copies "ab"
  auto r = apply_all("abcdef", {e});
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(r.invalid, 1u);
}

// A copied expression over several lines keeps each line's columns though
// the copy indents its continuation lines anew; a first line found only
// inside a longer name is not placed.
TEST(SourceMap, CopyAnchorFollowsReindentedLines) {
  // `f(a,` at 14, `b)` at 29.
  const std::string t0 = "if c:\n    h = f(a,\n          b)\n";
  const std::string rep = "h = where(c, f(a,\n    b), h)";
  Edit e = Edit::replace(0, 31, rep);
  anchor_copy(e, t0, 14, 31);
  ASSERT_EQ(e.anchors.size(), 2u);
  EXPECT_EQ(e.anchors[0], (Anchor{13, 14, 4}));  // `f(a,`
  EXPECT_EQ(e.anchors[1], (Anchor{22, 29, 2}));  // `b)` on the next line
  auto r = apply_all(t0, {e});
  ASSERT_EQ(r.applied, 1u);
  EXPECT_EQ(r.map.to_source(22), 29u);
  EXPECT_EQ(r.map.to_source(24, Side::End), 31u);

  Edit inside = Edit::replace(0, 31, "h = gf(a,\n b)");
  anchor_copy(inside, t0, 14, 31);
  EXPECT_TRUE(inside.anchors.empty());
}

// Every byte copied through all rounds maps to the byte it was copied from;
// the map is monotone and a non-empty range maps to a range.
TEST(SourceMap, RandomRoundsKeepEveryCopiedByte) {
  std::mt19937 rng(12345);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text(static_cast<std::size_t>(rng() % 40), 'a');
    for (auto& c : text) c = static_cast<char>('a' + rng() % 26);
    std::vector<long> origin(text.size());
    for (std::size_t k = 0; k < origin.size(); ++k) origin[k] = static_cast<long>(k);
    SourceMap total;
    const int rounds = 1 + static_cast<int>(rng() % 4);
    for (int round = 0; round < rounds; ++round) {
      std::vector<Edit> edits;
      std::uint32_t pos = 0;
      while (pos <= text.size() && edits.size() < 5) {
        pos += static_cast<std::uint32_t>(rng() % 6);
        if (pos > text.size()) break;
        const std::uint32_t len = std::min<std::uint32_t>(
            static_cast<std::uint32_t>(rng() % 4), static_cast<std::uint32_t>(text.size()) - pos);
        std::string rep(static_cast<std::size_t>(rng() % 4), 'Z');
        if (len == 0 && rep.empty()) rep = "Q";
        Edit e = Edit::replace(pos, pos + len, rep);
        if (len > 0 && rng() % 3 == 0) {  // a copy of some of the replaced text
          const std::uint32_t from = pos + static_cast<std::uint32_t>(rng() % len);
          const auto n = 1 + static_cast<std::uint32_t>(rng() % (pos + len - from));
          e.replacement = rep + text.substr(from, n) + "Z";
          e.anchors.push_back({static_cast<std::uint32_t>(rep.size()), from, n});
        } else if (rng() % 3 == 0) {  // an anchor somewhere inside
          e.anchors.push_back({static_cast<std::uint32_t>(rng() % (rep.size() + 1)),
                               pos + static_cast<std::uint32_t>(rng() % (len + 1))});
        }
        edits.push_back(std::move(e));
        pos += len + 1;
      }
      auto r = apply_all(text, edits);
      ASSERT_EQ(r.conflicts, 0u);
      std::vector<long> next;
      std::uint32_t at = 0;
      for (const auto& mk : r.map.markers()) {
        for (; at < mk.src_begin; ++at) next.push_back(origin[at]);
        next.insert(next.end(), mk.dest_end - mk.dest_begin, -1);
        at = mk.src_end;
      }
      for (; at < text.size(); ++at) next.push_back(origin[at]);
      ASSERT_EQ(next.size(), r.text.size());
      total = SourceMap::compose(total, r.map);
      text = r.text;
      origin = std::move(next);
    }
    std::uint32_t prev_b = 0, prev_e = 0;
    for (std::uint32_t k = 0; k <= text.size(); ++k) {
      const auto b = total.to_source(k, Side::Begin);
      const auto e = total.to_source(k, Side::End);
      EXPECT_LE(prev_b, b);
      EXPECT_LE(prev_e, e);
      if (k < text.size()) {  // a non-empty range stays one
        EXPECT_LE(b, total.to_source(k + 1, Side::End));
      }
      prev_b = b;
      prev_e = e;
      if (k < text.size() && origin[k] >= 0) {
        EXPECT_EQ(b, static_cast<std::uint32_t>(origin[k])) << "trial " << trial << " at " << k;
        EXPECT_EQ(total.to_source(k + 1, Side::End), static_cast<std::uint32_t>(origin[k] + 1));
      }
    }
  }
}

}  // namespace
}  // namespace gm::edits

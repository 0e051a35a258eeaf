#include "edits/source_map.h"

#include <algorithm>
#include <cstdint>

namespace gm::edits {

std::uint32_t SourceMap::to_source(std::uint32_t dest, Side side) const {
  // Begin: the last marker starting at or before `dest`; a start inside its
  // replacement maps to the replaced text's start. End: the last marker
  // starting strictly before `dest`; an end inside (or at the end of) its
  // replacement maps to the replaced text's end.
  const auto it = side == Side::Begin
                      ? std::upper_bound(
                            markers_.begin(), markers_.end(), dest,
                            [](std::uint32_t d, const SourceMarker& m) { return d < m.dest_begin; })
                      : std::lower_bound(markers_.begin(), markers_.end(), dest,
                                         [](const SourceMarker& m, std::uint32_t d) {
                                           return m.dest_begin < d;
                                         });
  if (it == markers_.begin()) return dest;
  const SourceMarker& m = *std::prev(it);
  if (side == Side::Begin ? dest < m.dest_end : dest <= m.dest_end)
    return side == Side::Begin ? m.src_begin : m.src_end;
  return m.src_end + (dest - m.dest_end);
}

SourceMap SourceMap::compose(const SourceMap& first, const SourceMap& second) {
  if (second.empty()) return first;
  if (first.empty()) return second;
  // Regions in text 1: the destination ranges of `first` and the source
  // ranges of `second`, merged where they overlap or touch.
  struct Region {
    std::uint32_t begin, end;
  };
  std::vector<Region> regions;
  const auto& a = first.markers_;
  const auto& b = second.markers_;
  regions.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    Region r;
    if (j >= b.size() || (i < a.size() && a[i].dest_begin <= b[j].src_begin)) {
      r = {a[i].dest_begin, a[i].dest_end};
      ++i;
    } else {
      r = {b[j].src_begin, b[j].src_end};
      ++j;
    }
    if (!regions.empty() && r.begin <= regions.back().end)
      regions.back().end = std::max(regions.back().end, r.end);
    else
      regions.push_back(r);
  }
  // A region's ends lie outside every marker of either map (a marker that
  // reaches them belongs to the region), so they map by the shift of the
  // markers before them: text 1 -> text 0 through `first`, text 1 -> text 2
  // by inverting `second`.
  SourceMap out;
  out.markers_.reserve(regions.size());
  std::int64_t shift_a = 0;  // text0 - text1 before the current point
  std::int64_t shift_b = 0;  // text2 - text1 before the current point
  i = j = 0;
  for (const Region& r : regions) {
    while (i < a.size() && a[i].dest_end <= r.begin && a[i].dest_begin < r.begin) {
      shift_a += std::int64_t(a[i].src_end - a[i].src_begin) - (a[i].dest_end - a[i].dest_begin);
      ++i;
    }
    while (j < b.size() && b[j].src_end <= r.begin && b[j].src_begin < r.begin) {
      shift_b += std::int64_t(b[j].dest_end - b[j].dest_begin) - (b[j].src_end - b[j].src_begin);
      ++j;
    }
    SourceMarker m;
    m.src_begin = static_cast<std::uint32_t>(r.begin + shift_a);
    m.dest_begin = static_cast<std::uint32_t>(r.begin + shift_b);
    // Every marker inside the region: consume and accumulate.
    while (i < a.size() && a[i].dest_begin <= r.end && a[i].dest_begin >= r.begin &&
           a[i].dest_end <= r.end) {
      shift_a += std::int64_t(a[i].src_end - a[i].src_begin) - (a[i].dest_end - a[i].dest_begin);
      ++i;
    }
    while (j < b.size() && b[j].src_begin <= r.end && b[j].src_begin >= r.begin &&
           b[j].src_end <= r.end) {
      shift_b += std::int64_t(b[j].dest_end - b[j].dest_begin) - (b[j].src_end - b[j].src_begin);
      ++j;
    }
    m.src_end = static_cast<std::uint32_t>(r.end + shift_a);
    m.dest_end = static_cast<std::uint32_t>(r.end + shift_b);
    out.markers_.push_back(m);
  }
  return out;
}

}  // namespace gm::edits

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
  // Each marker claims a range of text 1: `first`'s destination ranges,
  // `second`'s source ranges. Ranges that overlap become one region, the
  // output's marker; ranges that only touch stay apart, so a finer map of
  // one round (an anchored edit) survives the next. A region's ends lie
  // outside every marker, so they map by the shifts of the markers before
  // them: text 1 -> text 0 through `first`, text 1 -> text 2 by inverting
  // `second`.
  const auto& a = first.markers_;
  const auto& b = second.markers_;
  SourceMap out;
  out.markers_.reserve(a.size() + b.size());
  std::int64_t shift_a = 0;  // text0 - text1 after the markers consumed
  std::int64_t shift_b = 0;  // text2 - text1 after the markers consumed
  std::size_t i = 0, j = 0;
  const auto take_a = [&] {
    if (j >= b.size()) return true;
    if (i >= a.size()) return false;
    const std::uint32_t ab = a[i].dest_begin, bb = b[j].src_begin;
    if (ab != bb) return ab < bb;
    // At one point an empty range comes first: it lies before the bytes
    // the other range covers.
    const bool a_empty = a[i].dest_end == ab, b_empty = b[j].src_end == bb;
    return a_empty || !b_empty;
  };
  const auto consume_a = [&] {
    shift_a += std::int64_t(a[i].src_end - a[i].src_begin) - (a[i].dest_end - a[i].dest_begin);
    return a[i++].dest_end;
  };
  const auto consume_b = [&] {
    shift_b += std::int64_t(b[j].dest_end - b[j].dest_begin) - (b[j].src_end - b[j].src_begin);
    return b[j++].src_end;
  };
  while (i < a.size() || j < b.size()) {
    const bool from_a = take_a();
    const std::uint32_t begin = from_a ? a[i].dest_begin : b[j].src_begin;
    SourceMarker m;
    m.src_begin = static_cast<std::uint32_t>(begin + shift_a);
    m.dest_begin = static_cast<std::uint32_t>(begin + shift_b);
    std::uint32_t end = from_a ? consume_a() : consume_b();
    // Every marker that starts inside the region joins it.
    for (;;) {
      if (i < a.size() && a[i].dest_begin < end)
        end = std::max(end, consume_a());
      else if (j < b.size() && b[j].src_begin < end)
        end = std::max(end, consume_b());
      else
        break;
    }
    m.src_end = static_cast<std::uint32_t>(end + shift_a);
    m.dest_end = static_cast<std::uint32_t>(end + shift_b);
    out.markers_.push_back(m);
  }
  return out;
}

}  // namespace gm::edits

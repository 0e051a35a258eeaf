// Where each byte of an edited text came from: a source map of edit markers,
// after Ruff's ruff_diagnostics::SourceMap (crates/ruff_diagnostics/src/source_map.rs).
//
// One marker per edit region: bytes [dest_begin, dest_end) of the edited
// ("destination") text replaced bytes [src_begin, src_end) of the text the
// edits were applied to ("source"). Everything between markers is copied
// unchanged, so an offset there maps by a constant shift. An offset inside a
// marker's replacement has no counterpart of its own: a range's start maps
// to the start of the replaced text and a range's end to its end, so the
// mapped range covers what the edit replaced.
//
// Maps of successive rounds compose (compose()): the fix loop keeps one map
// from the final text back to its input, whatever the number of rounds.
#pragma once

#include <cstdint>
#include <vector>

namespace gm::edits {

struct SourceMarker {
  std::uint32_t dest_begin = 0;
  std::uint32_t dest_end = 0;
  std::uint32_t src_begin = 0;
  std::uint32_t src_end = 0;
  friend bool operator==(const SourceMarker&, const SourceMarker&) = default;
};

class SourceMap {
 public:
  enum class Side : std::uint8_t { Begin, End };

  // Markers must come in order (both ranges non-decreasing, not overlapping).
  void push(SourceMarker m) { markers_.push_back(m); }

  const std::vector<SourceMarker>& markers() const { return markers_; }
  bool empty() const { return markers_.empty(); }

  // The source offset of destination offset `dest`, as the start (Begin) or
  // the end (End) of a range. Monotone: a <= b implies map(a) <= map(b) for
  // the same side, and for a < b, map(a, Begin) <= map(b, End). (At a
  // deletion point an empty range maps to the deleted text's end and start.)
  std::uint32_t to_source(std::uint32_t dest, Side side = Side::Begin) const;

  // The map of `second` applied after `first`: `first` maps text 1 back to
  // text 0, `second` text 2 back to text 1; the result maps text 2 back to
  // text 0. Regions of the two maps that overlap in text 1 become one
  // marker; regions that only touch stay apart.
  static SourceMap compose(const SourceMap& first, const SourceMap& second);

 private:
  std::vector<SourceMarker> markers_;
};

}  // namespace gm::edits

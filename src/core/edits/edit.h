// Byte-range edits and fixes, and applying a batch of fixes in one splice.
//
// Offsets are byte offsets into the UTF-8 text a rule saw (Source::text(),
// BOM included). An edit replaces [begin, end) with `replacement`; begin ==
// end is an insertion, an empty replacement a deletion.
//
// Invariants apply_fixes() enforces (a fix that breaks one is Invalid, never
// applied):
//  - begin <= end <= text size;
//  - neither end of an edit falls inside a UTF-8 sequence or between the \r
//    and \n of a CRLF;
//  - the replacement is valid UTF-8;
//  - a fix's own edits do not overlap one another (two insertions at the same
//    point count as overlapping: their order would be ambiguous).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edits/source_map.h"

namespace gm::edits {

// A point where an edit's replacement lines up with the text it replaces:
// replacement bytes from `dest` on stand for source bytes from `src` on. It
// changes no text, only the source map (one marker per stretch between
// anchors): `_graphmend_rt.warn_if(c, m)` replacing `if c:\n    warnings.warn(m)`
// anchors its start at `warnings.warn`, so under the import hook the warning
// it issues reports the call's line, not the `if`'s. With `copied` > 0 the
// replacement's bytes [dest, dest + copied) are the source's [src, src +
// copied), byte for byte, and map exactly (no marker covers them): a branch's
// value copied into a `where` keeps its own line and columns.
struct Anchor {
  std::uint32_t dest = 0;    // offset in the replacement
  std::uint32_t src = 0;     // offset in the source text
  std::uint32_t copied = 0;  // length of a verbatim copy starting there
  friend bool operator==(const Anchor&, const Anchor&) = default;
};

struct Edit {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::string replacement;
  std::vector<Anchor> anchors;  // increasing in both offsets, inside the edit

  static Edit replace(std::uint32_t begin, std::uint32_t end, std::string text) {
    return Edit{begin, end, std::move(text)};
  }
  static Edit insert(std::uint32_t at, std::string text) { return Edit{at, at, std::move(text)}; }
  static Edit remove(std::uint32_t begin, std::uint32_t end) { return Edit{begin, end, {}}; }
  bool is_insertion() const { return begin == end; }
  friend bool operator==(const Edit&, const Edit&) = default;
};

// Anchors `e` at the first occurrence of `landmark` in its replacement after
// the last anchor: that text stands for the source from offset `src` on.
// Does nothing when the landmark is missing or would break the anchors'
// order (the map is then only coarser; the text is the same either way).
void anchor(Edit& e, std::string_view landmark, std::uint32_t src);

// Anchors the copy of the source's [begin, end) in `e`'s replacement, after
// the last anchor, as `copied` stretches: the first line of that text where it
// stands as whole tokens, each later line on the replacement's next line
// whatever its new indentation. A first line that is only a name, a number or
// a dotted name is too common to place and is left out; so is whatever is not
// found (the map is then only coarser; the text is the same either way).
void anchor_copy(Edit& e, std::string_view source, std::uint32_t begin, std::uint32_t end);

// Ordered from least to most trusted, as Ruff's Applicability.
enum class Applicability : std::uint8_t {
  DisplayOnly,  // shown to the user, never applied
  Unsafe,       // applied only with --unsafe-fixes (may change behaviour)
  Safe,         // applied by `graphmend fix`
};

std::string_view applicability_name(Applicability a);  // "safe", ...

struct Fix {
  std::vector<Edit> edits;
  Applicability applicability = Applicability::Safe;
  std::string description;  // imperative, e.g. "Replace `== None` with `is None`"

  static Fix safe(std::string description, std::vector<Edit> edits) {
    return Fix{std::move(edits), Applicability::Safe, std::move(description)};
  }
  static Fix unsafe(std::string description, std::vector<Edit> edits) {
    return Fix{std::move(edits), Applicability::Unsafe, std::move(description)};
  }
  static Fix display_only(std::string description, std::vector<Edit> edits) {
    return Fix{std::move(edits), Applicability::DisplayOnly, std::move(description)};
  }
  // Smallest begin / largest end over the edits (0 when there are none).
  std::uint32_t begin() const;
  std::uint32_t end() const;
};

enum class FixStatus : std::uint8_t {
  Applied,
  Conflict,  // overlaps a fix accepted earlier in this pass: retry next round
  Invalid,   // breaks an invariant above (a bug in the rule): never applied
  Empty,     // has no edits
};

struct ApplyResult {
  std::string text;
  std::vector<FixStatus> status;  // one per input fix, in input order
  std::size_t applied = 0;
  std::size_t conflicts = 0;
  std::size_t invalid = 0;
  SourceMap map;  // text -> the input: one marker per accepted edit
};

// Why `fix` cannot be applied to `text`; empty when it can.
std::string validate_fix(std::string_view text, const Fix& fix);

// Applies the fixes in one pass. Fixes are considered in order of their
// smallest begin (ties: input order); a fix is accepted when none of its
// edits overlaps an edit of an accepted fix. An edit identical to an accepted
// one (two rules adding the same import) is shared, not applied twice.
// Ranges that merely touch ([a,b) and [b,c)) do not overlap; an insertion at
// b goes before a range starting at b and after one ending at b.
ApplyResult apply_fixes(std::string_view text, std::span<const Fix> fixes);

// UTF-8 helpers shared by the edit code.
bool is_char_boundary(std::string_view text, std::size_t offset);
bool is_valid_utf8(std::string_view s);

}  // namespace gm::edits

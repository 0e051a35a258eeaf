#include "edits/edit.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "syntax/scan.h"

namespace gm::edits {

std::string_view applicability_name(Applicability a) {
  switch (a) {
    case Applicability::DisplayOnly: return "display-only";
    case Applicability::Unsafe: return "unsafe";
    case Applicability::Safe: return "safe";
  }
  return "?";
}

std::uint32_t Fix::begin() const {
  if (edits.empty()) return 0;
  std::uint32_t b = edits.front().begin;
  for (const auto& e : edits) b = std::min(b, e.begin);
  return b;
}

std::uint32_t Fix::end() const {
  std::uint32_t e = 0;
  for (const auto& ed : edits) e = std::max(e, ed.end);
  return e;
}

bool is_char_boundary(std::string_view text, std::size_t offset) {
  if (offset == 0 || offset >= text.size()) return offset <= text.size();
  const auto c = static_cast<unsigned char>(text[offset]);
  if ((c & 0xC0) == 0x80) return false;  // continuation byte
  if (text[offset] == '\n' && text[offset - 1] == '\r') return false;
  return true;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else
      return false;
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return false;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

namespace {

// Do two edits conflict? Proper overlap, an insertion strictly inside the
// other's range, or two insertions at the same point.
bool overlaps(const Edit& a, const Edit& b) {
  if (a.is_insertion() && b.is_insertion()) return a.begin == b.begin;
  if (a.is_insertion()) return b.begin < a.begin && a.begin < b.end;
  if (b.is_insertion()) return a.begin < b.begin && b.begin < a.end;
  return a.begin < b.end && b.begin < a.end;
}

bool edit_less(const Edit& a, const Edit& b) {
  if (a.begin != b.begin) return a.begin < b.begin;
  return a.end < b.end;  // an insertion at b goes before [b, c)
}

}  // namespace

std::string validate_fix(std::string_view text, const Fix& fix) {
  for (std::size_t i = 0; i < fix.edits.size(); ++i) {
    const Edit& e = fix.edits[i];
    if (e.begin > e.end || e.end > text.size()) return "edit range out of bounds";
    if (!is_char_boundary(text, e.begin) || !is_char_boundary(text, e.end))
      return "edit splits a UTF-8 sequence or a CRLF";
    if (!is_valid_utf8(e.replacement)) return "replacement is not valid UTF-8";
    Anchor prev{0, e.begin};
    for (const Anchor& an : e.anchors) {
      if (an.dest < prev.dest + prev.copied || an.src < prev.src + prev.copied ||
          an.dest + an.copied > e.replacement.size() || an.src + an.copied > e.end)
        return "an anchor lies outside its edit or out of order";
      if (text.substr(an.src, an.copied) !=
          std::string_view(e.replacement).substr(an.dest, an.copied))
        return "an anchored copy differs from the text it copies";
      prev = an;
    }
    for (std::size_t j = 0; j < i; ++j)
      if (overlaps(e, fix.edits[j]) || e == fix.edits[j]) return "edits of one fix overlap";
  }
  return {};
}

namespace {

// Where the next anchor of `e` may start: past the last one (and its copy).
std::pair<std::size_t, std::uint32_t> next_anchor_point(const Edit& e) {
  if (e.anchors.empty()) return {0, e.begin};
  const Anchor& last = e.anchors.back();
  return {last.dest + std::max<std::uint32_t>(last.copied, 1), last.src + last.copied};
}

bool word_char(char c) { return scan::is_ident_byte(static_cast<unsigned char>(c)); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

}  // namespace

void anchor(Edit& e, std::string_view landmark, std::uint32_t src) {
  const auto [from, min_src] = next_anchor_point(e);
  const std::size_t at = e.replacement.find(landmark, from);
  if (at == std::string::npos || src < min_src || src > e.end) return;
  e.anchors.push_back({static_cast<std::uint32_t>(at), src});
}

void anchor_copy(Edit& e, std::string_view source, std::uint32_t begin, std::uint32_t end) {
  const auto [from, min_src] = next_anchor_point(e);
  if (begin < min_src || begin >= end || end > e.end || end > source.size()) return;
  // The lines of the copied text, each without its indentation.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> lines;
  for (std::uint32_t b = begin; b < end;) {
    std::uint32_t l = b;
    while (l < end && source[l] != '\n' && source[l] != '\r') ++l;
    if (l > b) lines.emplace_back(b, l);
    for (b = l; b < end && (source[b] == '\n' || source[b] == '\r' || is_space(source[b]));) ++b;
  }
  if (lines.empty()) return;
  const std::string_view r = e.replacement;
  const auto text_of = [&](std::size_t k) {
    return source.substr(lines[k].first, lines[k].second - lines[k].first);
  };
  const std::string_view first = text_of(0);
  if (std::all_of(first.begin(), first.end(), [](char c) { return word_char(c) || c == '.'; }))
    return;
  std::size_t at = from;
  for (;; ++at) {
    at = r.find(first, at);
    if (at == std::string_view::npos) return;
    const std::size_t after = at + first.size();
    const bool starts =
        !word_char(first.front()) || at == 0 || (!word_char(r[at - 1]) && r[at - 1] != '.');
    const bool ends = !word_char(first.back()) || after == r.size() || !word_char(r[after]);
    if (starts && ends) break;
  }
  const auto push = [&](std::size_t dest, std::size_t k) {
    e.anchors.push_back(
        {static_cast<std::uint32_t>(dest), lines[k].first, lines[k].second - lines[k].first});
  };
  push(at, 0);
  std::size_t pos = at + first.size();
  for (std::size_t k = 1; k < lines.size(); ++k) {
    bool newline = false;
    while (pos < r.size() && (r[pos] == '\n' || r[pos] == '\r' || is_space(r[pos])))
      newline = newline || r[pos] == '\n' || r[pos] == '\r', ++pos;
    if (!newline || r.substr(pos, text_of(k).size()) != text_of(k)) return;
    push(pos, k);
    pos += text_of(k).size();
  }
}

ApplyResult apply_fixes(std::string_view text, std::span<const Fix> fixes) {
  ApplyResult out;
  out.status.assign(fixes.size(), FixStatus::Conflict);

  std::vector<std::size_t> order(fixes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Inner first: where fixes nest (a fix of `x` inside a fix of the
  // expression holding `x`), the one with the smaller main edit wins the
  // round, so siblings inside one outer fix all apply together and the outer
  // one, re-reported on the mended text, follows. Fixes that do not overlap
  // all apply whatever the order.
  auto main_span = [&](const Fix& f) {
    std::uint32_t span = 0;
    for (const Edit& e : f.edits) span = std::max(span, e.end - e.begin);
    return span;
  };
  std::vector<std::uint32_t> spans(fixes.size());
  for (std::size_t i = 0; i < fixes.size(); ++i) spans[i] = main_span(fixes[i]);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (spans[a] != spans[b]) return spans[a] < spans[b];
    return fixes[a].begin() < fixes[b].begin();
  });

  std::vector<Edit> accepted;  // kept sorted by edit_less
  for (std::size_t idx : order) {
    const Fix& fix = fixes[idx];
    if (fix.edits.empty()) {
      out.status[idx] = FixStatus::Empty;
      continue;
    }
    if (!validate_fix(text, fix).empty()) {
      out.status[idx] = FixStatus::Invalid;
      ++out.invalid;
      continue;
    }
    bool conflict = false;
    std::vector<const Edit*> fresh;
    for (const Edit& e : fix.edits) {
      bool shared = false;
      for (const Edit& a : accepted) {
        if (a == e) {
          shared = true;
          break;
        }
        if (overlaps(a, e)) {
          conflict = true;
          break;
        }
      }
      if (conflict) break;
      if (!shared) fresh.push_back(&e);
    }
    if (conflict) {
      ++out.conflicts;
      continue;
    }
    for (const Edit* e : fresh)
      accepted.insert(std::upper_bound(accepted.begin(), accepted.end(), *e, edit_less), *e);
    out.status[idx] = FixStatus::Applied;
    ++out.applied;
  }

  std::size_t size = text.size();
  for (const Edit& e : accepted) size = size - (e.end - e.begin) + e.replacement.size();
  out.text.reserve(size);
  std::size_t pos = 0;
  for (const Edit& e : accepted) {
    out.text.append(text.substr(pos, e.begin - pos));
    const auto dest = static_cast<std::uint32_t>(out.text.size());
    out.text.append(e.replacement);
    // One marker per stretch between anchors; an anchored copy needs none
    // (nor does a stretch empty on both sides).
    const auto push = [&](const SourceMarker& mk) {
      if (mk.dest_end > mk.dest_begin || mk.src_end > mk.src_begin) out.map.push(mk);
    };
    SourceMarker m{dest, 0, e.begin, 0};
    for (const Anchor& an : e.anchors) {
      m.dest_end = dest + an.dest;
      m.src_end = an.src;
      push(m);
      m = {m.dest_end + an.copied, 0, an.src + an.copied, 0};
    }
    m.dest_end = static_cast<std::uint32_t>(out.text.size());
    m.src_end = e.end;
    push(m);
    pos = e.end;
  }
  out.text.append(text.substr(pos));
  return out;
}

}  // namespace gm::edits

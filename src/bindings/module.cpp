// The Python extension: a thin door into the C++ core. Work happens with the
// GIL released so callers can parse and lint files on several threads.
//
// Results cross the boundary as plain Python objects (dicts, lists, str,
// bytes, int, None) so the Python shell owns presentation; the shapes are
// documented on each function and in python/graphmend/lint.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "ast/dump.h"
#include "lint/engine.h"
#include "lint/package_check.h"
#include "lint/registry.h"
#include "lint/selection.h"
#include "parser/parse.h"
#include "semantic/model.h"
#include "semantic/package.h"
#include "syntax/source.h"

namespace nb = nanobind;

namespace {

// (ok, text, error_kind, line, col): on success text is the dump; on failure
// text is the message.
using DumpResult = std::tuple<bool, std::string, std::string, int, int>;

DumpResult dump_ast(nb::bytes data, int minor) {
  std::string bytes(data.c_str(), data.size());
  nb::gil_scoped_release release;
  auto decoded = gm::Source::decode(std::move(bytes));
  if (auto* err = std::get_if<gm::SyntaxError>(&decoded))
    return {false, err->message, err->kind, static_cast<int>(err->line),
            static_cast<int>(err->col)};
  const auto& source = std::get<gm::Source>(decoded);
  gm::ParseOptions options;
  options.version = {3, minor};
  auto result = gm::parse_module(source, options);
  if (result.error)
    return {false, result.error->message, result.error->kind, static_cast<int>(result.error->line),
            static_cast<int>(result.error->col)};
  gm::ast::DumpOptions dump_options;
  dump_options.minor = minor;
  return {true, gm::ast::dump(result.tree, result.tree.root(), dump_options), "", 0, 0};
}

// ------------------------------------------------------------------ lint

// Line starts of `text` (line 1 starts after a BOM), for positions of edits
// and syntax errors.
gm::LineIndex index_lines(std::string_view text, std::uint32_t body_offset) {
  gm::LineIndex lines;
  lines.starts.push_back(body_offset);
  for (std::size_t i = body_offset; i < text.size(); ++i) {
    if (text[i] == '\n') {
      lines.starts.push_back(static_cast<std::uint32_t>(i + 1));
    } else if (text[i] == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      lines.starts.push_back(static_cast<std::uint32_t>(i + 1));
    }
  }
  return lines;
}

// 1-based code-point column of a 0-based byte column on a 1-based line.
std::uint32_t char_column(std::string_view text, const gm::LineIndex& lines, std::uint32_t line,
                          std::uint32_t col) {
  if (line == 0 || line > lines.starts.size()) return col + 1;
  const std::size_t start = lines.line_start(line);
  const std::size_t stop = std::min(text.size(), start + col);
  std::uint32_t n = 0;
  for (std::size_t i = start; i < stop; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n + 1;
}

gm::lint::LintOptions make_options(int minor, const std::vector<std::string>& select,
                                   const std::vector<std::string>& ignore, bool unsafe_fixes,
                                   bool all_regions, std::vector<std::string> extra_roots = {}) {
  if (minor < 8 || minor > 13)
    throw std::invalid_argument("unsupported Python version 3." + std::to_string(minor) +
                                ": graphmend reads 3.8 to 3.13");
  for (const auto* list : {&select, &ignore})
    for (const auto& s : *list)
      if (!gm::lint::is_valid_selector(s))
        throw std::invalid_argument("invalid rule selector '" + s +
                                    "': expected ALL or GM followed by up to 3 digits");
  gm::lint::LintOptions options;
  options.parse.version = {3, minor};
  options.selection.select = select;
  options.selection.ignore = ignore;
  options.unsafe_fixes = unsafe_fixes;
  gm::sema::AnalyzeOptions analyze_options;
  analyze_options.all_functions = all_regions;
  analyze_options.extra_roots = std::move(extra_roots);
  analyze_options.facts_need_regions = true;
  options.build_model = [analyze_options](const gm::Source& source, const gm::ParseResult& parsed) {
    return std::make_shared<const gm::sema::Model>(
        gm::sema::analyze(parsed.tree, source, analyze_options));
  };
  return options;
}

// Decoded input: a Source, or the decoding error.
std::variant<gm::Source, gm::SyntaxError> decode(std::string bytes, bool is_text) {
  return is_text ? gm::Source::from_utf8(std::move(bytes)) : gm::Source::decode(std::move(bytes));
}

// What is computed without the GIL, converted to Python objects with it.
struct Located {
  gm::lint::Diagnostic diag;
  std::vector<gm::lint::Location> edit_locs;  // one per fix edit
};

struct Outcome {
  std::string encoding = "utf-8";
  bool had_bom = false;
  std::string text;  // fix: the mended text (UTF-8, BOM kept)
  std::vector<Located> diagnostics;
  std::optional<gm::SyntaxError> syntax_error;
  std::uint32_t syntax_char_col = 0;
  std::vector<gm::lint::RuleError> rule_errors;
  std::size_t suppressed = 0;
  std::vector<gm::lint::UnusedSuppression> unused;
  std::vector<gm::lint::Location> unused_locs;
  // fix only
  std::string status;
  std::vector<gm::lint::AppliedFix> applied, culprits, invalid;
  int rounds = 0;
  // The source map, as (line, col) pairs: the mended range, then the
  // original range it replaced (0-based UTF-8 byte columns, 1-based lines).
  std::vector<std::pair<gm::lint::Location, gm::lint::Location>> source_map;
};

std::vector<Located> locate_all(std::vector<gm::lint::Diagnostic> diags, std::string_view text,
                                const gm::LineIndex& lines) {
  std::vector<Located> out;
  out.reserve(diags.size());
  for (auto& d : diags) {
    Located l;
    if (d.fix)
      for (const auto& e : d.fix->edits)
        l.edit_locs.push_back(gm::lint::locate(text, lines, e.begin, e.end));
    l.diag = std::move(d);
    out.push_back(std::move(l));
  }
  return out;
}

void set_syntax_error(Outcome& o, const std::optional<gm::SyntaxError>& e, std::string_view text,
                      const gm::LineIndex* lines) {
  o.syntax_error = e;
  if (!e) return;
  o.syntax_char_col = lines ? char_column(text, *lines, e->line, e->col) : e->col + 1;
}

nb::dict location_dict(const gm::lint::Location& l) {
  nb::dict d;
  d["line"] = l.line;
  d["col"] = l.col;
  d["char_col"] = l.char_col;
  d["end_line"] = l.end_line;
  d["end_col"] = l.end_col;
  d["end_char_col"] = l.end_char_col;
  return d;
}

bool applies(const gm::lint::Diagnostic& d, bool unsafe) {
  if (!d.fix || d.fix->edits.empty()) return false;
  return d.fix->applicability == gm::edits::Applicability::Safe ||
         (unsafe && d.fix->applicability == gm::edits::Applicability::Unsafe);
}

nb::dict diagnostic_dict(const Located& l, bool unsafe) {
  const auto& d = l.diag;
  nb::dict out = location_dict(d.loc);
  out["code"] = d.code;
  out["message"] = d.message;
  out["why"] = d.why;
  out["begin"] = d.begin;
  out["end"] = d.end;
  out["applicability"] = std::string(gm::edits::applicability_name(d.applicability()));
  out["declined_reason"] = d.declined_reason;
  out["fix_applies"] = applies(d, unsafe);
  if (d.fix) {
    nb::dict fix;
    fix["description"] = d.fix->description;
    fix["applicability"] = std::string(gm::edits::applicability_name(d.fix->applicability));
    nb::list edits;
    for (std::size_t i = 0; i < d.fix->edits.size(); ++i) {
      const auto& e = d.fix->edits[i];
      nb::dict ed = location_dict(l.edit_locs[i]);
      ed["begin"] = e.begin;
      ed["end"] = e.end;
      ed["replacement"] = e.replacement;
      edits.append(ed);
    }
    fix["edits"] = edits;
    out["fix"] = fix;
  } else {
    out["fix"] = nb::none();
  }
  return out;
}

nb::list applied_list(const std::vector<gm::lint::AppliedFix>& v) {
  nb::list out;
  for (const auto& a : v) {
    nb::dict d;
    d["code"] = a.code;
    d["description"] = a.description;
    d["round"] = a.round;
    d["begin"] = a.begin;
    d["end"] = a.end;
    out.append(d);
  }
  return out;
}

nb::dict outcome_dict(const Outcome& o, bool unsafe, bool is_fix) {
  nb::dict out;
  out["encoding"] = o.encoding;
  out["had_bom"] = o.had_bom;
  nb::list diags;
  for (const auto& l : o.diagnostics) diags.append(diagnostic_dict(l, unsafe));
  out["diagnostics"] = diags;
  if (o.syntax_error) {
    nb::dict e;
    e["kind"] = o.syntax_error->kind;
    e["message"] = o.syntax_error->message;
    e["line"] = o.syntax_error->line;
    e["col"] = o.syntax_error->col;
    e["char_col"] = o.syntax_char_col;
    e["end_line"] = o.syntax_error->end_line;
    e["end_col"] = o.syntax_error->end_col;
    out["syntax_error"] = e;
  } else {
    out["syntax_error"] = nb::none();
  }
  nb::list errors;
  for (const auto& r : o.rule_errors) {
    nb::dict e;
    e["code"] = r.code;
    e["message"] = r.message;
    errors.append(e);
  }
  out["rule_errors"] = errors;
  out["suppressed"] = o.suppressed;
  nb::list unused;
  for (std::size_t i = 0; i < o.unused.size(); ++i) {
    nb::dict u = location_dict(o.unused_locs[i]);
    u["codes"] = o.unused[i].codes;
    unused.append(u);
  }
  out["unused_suppressions"] = unused;
  if (is_fix) {
    out["status"] = o.status;
    out["text"] = nb::bytes(o.text.data(), o.text.size());
    out["applied"] = applied_list(o.applied);
    std::map<std::string, int> per_code;
    for (const auto& a : o.applied) ++per_code[a.code];
    nb::dict per;
    for (const auto& [code, n] : per_code) per[code.c_str()] = n;
    out["applied_per_code"] = per;
    out["culprits"] = applied_list(o.culprits);
    out["invalid"] = applied_list(o.invalid);
    out["rounds"] = o.rounds;
    nb::list markers;
    for (const auto& [dest, src] : o.source_map)
      markers.append(nb::make_tuple(dest.line, dest.col, dest.end_line, dest.end_col, src.line,
                                    src.col, src.end_line, src.end_col));
    out["source_map"] = markers;
  }
  return out;
}

// What check() reports of one decoded file.
Outcome check_outcome(const gm::Source& source, gm::lint::CheckResult r) {
  Outcome o;
  o.encoding = source.encoding();
  o.had_bom = source.had_bom();
  const auto lines = index_lines(source.text(), source.body_offset());
  set_syntax_error(o, r.syntax_error, source.text(), &lines);
  o.diagnostics = locate_all(std::move(r.diagnostics), source.text(), lines);
  o.rule_errors = std::move(r.rule_errors);
  o.suppressed = r.suppressed;
  o.unused = std::move(r.unused_suppressions);
  for (const auto& u : o.unused)
    o.unused_locs.push_back(gm::lint::locate(source.text(), lines, u.begin, u.end));
  return o;
}

// check(data, minor, select, ignore, unsafe_fixes, is_text, all_regions, extra_roots) -> dict
nb::dict check(nb::bytes data, int minor, std::vector<std::string> select,
               std::vector<std::string> ignore, bool unsafe_fixes, bool is_text, bool all_regions,
               std::vector<std::string> extra_roots) {
  std::string bytes(data.c_str(), data.size());
  const auto options =
      make_options(minor, select, ignore, unsafe_fixes, all_regions, std::move(extra_roots));
  Outcome o;
  {
    nb::gil_scoped_release release;
    auto decoded = decode(std::move(bytes), is_text);
    if (auto* err = std::get_if<gm::SyntaxError>(&decoded)) {
      set_syntax_error(o, *err, {}, nullptr);
    } else {
      const auto& source = std::get<gm::Source>(decoded);
      o = check_outcome(source, gm::lint::check_source(source, options));
    }
  }
  return outcome_dict(o, unsafe_fixes, false);
}

// fix(data, minor, select, ignore, unsafe_fixes, is_text, all_regions, extra_roots) -> dict
nb::dict fix(nb::bytes data, int minor, std::vector<std::string> select,
             std::vector<std::string> ignore, bool unsafe_fixes, bool is_text, bool all_regions,
             std::vector<std::string> extra_roots) {
  std::string bytes(data.c_str(), data.size());
  const auto options =
      make_options(minor, select, ignore, unsafe_fixes, all_regions, std::move(extra_roots));
  Outcome o;
  {
    nb::gil_scoped_release release;
    auto decoded = decode(std::move(bytes), is_text);
    if (auto* err = std::get_if<gm::SyntaxError>(&decoded)) {
      o.status = "input-syntax-error";
      set_syntax_error(o, *err, {}, nullptr);
    } else {
      const auto& source = std::get<gm::Source>(decoded);
      o.encoding = source.encoding();
      o.had_bom = source.had_bom();
      auto r = gm::lint::fix_to_fixpoint(source, options);
      o.status = std::string(gm::lint::status_name(r.status));
      o.text = std::move(r.text);
      // Positions of what remains refer to the resulting text; a syntax
      // error refers to the input (InputSyntaxError) or to a reverted
      // round's text (FixBrokeSyntax), whose columns we cannot map: bytes.
      const auto lines = index_lines(o.text, source.body_offset());
      const bool input_error = r.status == gm::lint::FixResult::Status::InputSyntaxError;
      set_syntax_error(o, r.syntax_error, o.text, input_error ? &lines : nullptr);
      o.diagnostics = locate_all(std::move(r.remaining), o.text, lines);
      o.rule_errors = std::move(r.rule_errors);
      o.applied = std::move(r.applied);
      o.culprits = std::move(r.culprits);
      o.invalid = std::move(r.invalid);
      o.rounds = r.rounds;
      if (!r.source_map.empty()) {
        const auto original_lines = index_lines(source.text(), source.body_offset());
        for (const auto& m : r.source_map.markers())
          o.source_map.emplace_back(
              gm::lint::locate(o.text, lines, m.dest_begin, m.dest_end),
              gm::lint::locate(source.text(), original_lines, m.src_begin, m.src_end));
      }
    }
  }
  return outcome_dict(o, unsafe_fixes, true);
}

// package_roots([(module, is_package, data)], minor, include_own, jobs)
//   -> [(roots, regions)]
// per file: the dotted names of the functions compiled code anywhere in the
// package reaches beyond the file's own regions (semantic/package.h), and
// whether the file holds any compiled region at all (its own or those):
// None for a file that does not decode or parse (it contributes nothing).
std::vector<std::pair<std::vector<std::string>, std::optional<bool>>> package_roots(
    std::vector<std::tuple<std::string, bool, nb::bytes>> files, int minor, bool include_own,
    int jobs) {
  // The bytes objects are immutable and `files` holds them: read in place.
  std::vector<gm::lint::PackageFile> inputs;
  inputs.reserve(files.size());
  for (auto& [module, is_package, data] : files)
    inputs.push_back({module, is_package, {data.c_str(), data.size()}, std::nullopt});
  nb::gil_scoped_release release;
  gm::lint::PackageOptions options;
  options.parse.version = {3, minor};
  options.jobs = jobs;
  options.include_own = include_own;
  auto results = gm::lint::check_package(inputs, options);
  std::vector<std::pair<std::vector<std::string>, std::optional<bool>>> out(results.size());
  for (std::size_t i = 0; i < results.size(); ++i)
    out[i] = {std::move(results[i].roots), results[i].regions};
  return out;
}

// package_check([(module, is_package, data, select, ignore, unsafe_fixes)], minor, jobs)
//   -> [(roots, regions, check dict or None)]
// package_roots and, per file, what check(data, minor, select, ignore,
// unsafe_fixes, False, False, roots) returns, each file parsed once
// (lint/package_check.h). None: the bytes do not decode (a codec only
// Python has, maybe: the caller checks that file alone).
nb::list package_check(
    std::vector<std::tuple<std::string, bool, nb::bytes, std::vector<std::string>,
                           std::vector<std::string>, bool>>
        files,
    int minor, int jobs) {
  std::vector<gm::lint::PackageFile> inputs;
  std::vector<bool> unsafe;
  inputs.reserve(files.size());
  for (auto& [module, is_package, data, select, ignore, unsafe_fixes] : files) {
    const auto options = make_options(minor, select, ignore, unsafe_fixes, false);
    inputs.push_back({module, is_package, {data.c_str(), data.size()}, options.selection});
    unsafe.push_back(unsafe_fixes);
  }
  std::vector<gm::lint::PackageFileResult> results;
  std::vector<std::optional<Outcome>> outcomes(inputs.size());
  {
    nb::gil_scoped_release release;
    gm::lint::PackageOptions options;
    options.parse.version = {3, minor};
    options.jobs = jobs;
    results = gm::lint::check_package(
        inputs, options, [&](std::size_t i, const gm::Source& source, gm::lint::CheckResult r) {
          outcomes[i] = check_outcome(source, std::move(r));
        });
  }
  nb::list out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    nb::object regions = results[i].regions ? nb::cast(*results[i].regions) : nb::none();
    nb::object check =
        outcomes[i] ? nb::object(outcome_dict(*outcomes[i], unsafe[i], false)) : nb::none();
    out.append(nb::make_tuple(nb::cast(results[i].roots), regions, check));
  }
  return out;
}

nb::list rules() {
  nb::list out;
  for (const gm::lint::Rule* r : gm::lint::rules()) {
    nb::dict d;
    d["code"] = std::string(r->code());
    d["name"] = std::string(r->name());
    d["summary"] = std::string(r->summary());
    d["documentation"] = std::string(r->documentation());
    out.append(d);
  }
  return out;
}

// ------------------------------------------------------------ positions
//
// The import hook's position remapping of one code object (CPython 3.11 to
// 3.13 location tables, Objects/locations.md), done here because it is a
// loop over every instruction: python/graphmend/hook.py's PositionMap and
// _linetable are the reference (and the route on other versions).

struct Pos {
  std::int64_t line, col;
  bool operator<(const Pos& o) const { return line != o.line ? line < o.line : col < o.col; }
  bool operator<=(const Pos& o) const { return !(o < *this); }
};

struct Marker {
  Pos dest_begin, dest_end, src_begin, src_end;
};

struct PositionMap {
  std::vector<Marker> markers;
  struct Segment {
    std::int64_t first, last;
    bool clean;
    std::int64_t shift;
  };
  std::vector<Segment> segments;

  // `raw`: 8 native int64 per marker, as hook.PositionMap.packed.
  explicit PositionMap(std::string_view raw) {
    for (std::size_t at = 0; at + 64 <= raw.size(); at += 64) {
      std::array<std::int64_t, 8> m;
      std::memcpy(m.data(), raw.data() + at, 64);
      markers.push_back({{m[0], m[1]}, {m[2], m[3]}, {m[4], m[5]}, {m[6], m[7]}});
    }
    std::int64_t line = 1, shift = 0;
    for (const auto& m : markers) {
      if (m.dest_begin.line > line) segments.push_back({line, m.dest_begin.line - 1, true, shift});
      if (m.dest_end.line >= line) {
        segments.push_back({std::max(line, m.dest_begin.line), m.dest_end.line, false, 0});
        line = m.dest_end.line + 1;
      }
      shift = m.src_end.line - m.dest_end.line;
    }
    segments.push_back({line, std::int64_t{1} << 62, true, shift});
  }

  static Pos after(const Marker& m, Pos p) {
    if (p.line == m.dest_end.line)
      return {m.src_end.line, m.src_end.col + (p.col - m.dest_end.col)};
    return {m.src_end.line + (p.line - m.dest_end.line), p.col};
  }
  Pos begin(Pos p) const {
    auto it = std::upper_bound(markers.begin(), markers.end(), p,
                               [](const Pos& q, const Marker& m) { return q < m.dest_begin; });
    if (it == markers.begin()) return p;
    const Marker& m = *std::prev(it);
    return p < m.dest_end ? m.src_begin : after(m, p);
  }
  Pos end(Pos p) const {
    auto it = std::lower_bound(markers.begin(), markers.end(), p,
                               [](const Marker& m, const Pos& q) { return m.dest_begin < q; });
    if (it == markers.begin()) return p;
    const Marker& m = *std::prev(it);
    return p <= m.dest_end ? m.src_end : after(m, p);
  }
  // The shift of lines first..last when no edit touches them.
  std::optional<std::int64_t> shift(std::int64_t first, std::int64_t last) const {
    auto it = std::upper_bound(segments.begin(), segments.end(), first,
                               [](std::int64_t l, const Segment& s) { return l < s.first; });
    if (it == segments.begin()) return std::nullopt;
    const Segment& s = *std::prev(it);
    if (!s.clean || last > s.last) return std::nullopt;
    return s.shift;
  }
};

struct Entry {
  int units;
  bool none;  // no location
  std::int64_t line, end_line, col, end_col;  // -1: None (columns)
};

std::optional<std::vector<Entry>> decode_linetable(std::string_view t, std::int64_t first) {
  std::vector<Entry> out;
  std::size_t i = 0;
  std::int64_t line = first;
  const auto byte = [&]() -> std::optional<std::uint8_t> {
    if (i >= t.size()) return std::nullopt;
    return static_cast<std::uint8_t>(t[i++]);
  };
  const auto varint = [&]() -> std::optional<std::int64_t> {
    std::int64_t v = 0;
    int shift = 0;
    for (;;) {
      auto b = byte();
      if (!b || shift > 56) return std::nullopt;
      v |= std::int64_t(*b & 63) << shift;
      shift += 6;
      if (!(*b & 64)) return v;
    }
  };
  while (i < t.size()) {
    const auto head = static_cast<std::uint8_t>(t[i++]);
    if (!(head & 0x80)) return std::nullopt;
    const int code = (head >> 3) & 15;
    Entry e{(head & 7) + 1, false, 0, 0, -1, -1};
    if (code == 15) {
      e.none = true;
    } else if (code == 14 || code == 13) {
      auto d = varint();
      if (!d) return std::nullopt;
      line += (*d & 1) ? -(*d >> 1) : (*d >> 1);
      e.line = e.end_line = line;
      if (code == 14) {
        auto el = varint(), c = varint(), ec = varint();
        if (!el || !c || !ec) return std::nullopt;
        e.end_line = line + *el;
        e.col = *c - 1;
        e.end_col = *ec - 1;
      }
    } else if (code >= 10) {
      line += code - 10;
      auto c = byte(), ec = byte();
      if (!c || !ec) return std::nullopt;
      e.line = e.end_line = line;
      e.col = *c;
      e.end_col = *ec;
    } else {
      auto b = byte();
      if (!b) return std::nullopt;
      e.line = e.end_line = line;
      e.col = code * 8 + ((*b >> 4) & 7);
      e.end_col = e.col + (*b & 15);
    }
    out.push_back(e);
  }
  return out;
}

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 64) {
    out.push_back(static_cast<char>(0x40 | (v & 63)));
    v >>= 6;
  }
  out.push_back(static_cast<char>(v));
}

// remap_linetable(linetable, firstlineno, markers) -> (firstlineno, linetable | None)
// None: no edit touches the code object's lines; only firstlineno moves.
// Raises ValueError for a table it cannot read (the caller falls back).
nb::tuple remap_linetable(nb::bytes table, std::int64_t firstlineno, nb::bytes raw) {
  std::string_view t(table.c_str(), table.size());
  const PositionMap map(std::string_view(raw.c_str(), raw.size()));
  auto entries = decode_linetable(t, firstlineno);
  if (!entries) throw std::invalid_argument("unreadable location table");
  std::int64_t lo = firstlineno, hi = firstlineno;
  for (const auto& e : *entries) {
    if (e.none) continue;
    lo = std::min(lo, e.line);
    hi = std::max(hi, std::max(e.line, e.end_line));
  }
  if (auto shift = map.shift(lo, hi)) return nb::make_tuple(firstlineno + *shift, nb::none());
  const std::int64_t first = map.begin({firstlineno, 0}).line;
  std::string out;
  out.reserve(t.size() + t.size() / 2);
  std::int64_t line = first;
  for (const auto& e : *entries) {
    const int size = e.units - 1;
    if (e.none) {
      out.push_back(static_cast<char>(0xF8 | size));
      continue;
    }
    std::int64_t start_line, end_line, col = -1, end_col = -1;
    auto s1 = map.shift(e.line, e.line);
    if (s1 && (e.end_line == e.line || map.shift(e.end_line, e.end_line) == s1)) {
      start_line = e.line + *s1;
      end_line = e.end_line + *s1;
      col = e.col;
      end_col = e.end_col;
    } else if (e.col < 0) {
      start_line = map.begin({e.line, 0}).line;
      end_line =
          e.end_line == e.line ? start_line : std::max(map.begin({e.end_line, 0}).line, start_line);
    } else {
      Pos a = map.begin({e.line, e.col});
      Pos b = map.end({e.end_line, e.end_col >= 0 ? e.end_col : e.col});
      if (b < a) b = a;
      start_line = a.line;
      end_line = b.line;
      col = a.col;
      end_col = e.end_col >= 0 ? b.col : -1;
    }
    const std::int64_t delta = start_line - line;
    line = start_line;
    const std::uint64_t zig =
        delta < 0 ? (std::uint64_t(-delta) << 1) | 1 : std::uint64_t(delta) << 1;
    if (col < 0 && end_line == start_line) {
      out.push_back(static_cast<char>(0xE8 | size));
      put_varint(out, zig);
    } else {
      out.push_back(static_cast<char>(0xF0 | size));
      put_varint(out, zig);
      put_varint(out, static_cast<std::uint64_t>(std::max<std::int64_t>(end_line - start_line, 0)));
      put_varint(out, static_cast<std::uint64_t>(col + 1));
      put_varint(out, static_cast<std::uint64_t>(end_col + 1));
    }
  }
  return nb::make_tuple(first, nb::bytes(out.data(), out.size()));
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "graphmend's C++ core";
  m.def("dump_ast", &dump_ast, nb::arg("data"), nb::arg("minor"),
        "Parse source bytes as CPython 3.<minor> would and return "
        "(ok, dump_or_message, error_kind, line, col).");
  m.def("check", &check, nb::arg("data"), nb::arg("minor"), nb::arg("select"), nb::arg("ignore"),
        nb::arg("unsafe_fixes") = false, nb::arg("is_text") = false, nb::arg("all_regions") = false,
        nb::arg("extra_roots") = std::vector<std::string>{},
        "Lint source bytes (decoded per PEP 263; is_text: already UTF-8, cookie ignored). "
        "Returns a dict: encoding, had_bom, diagnostics, syntax_error, rule_errors, "
        "suppressed, unused_suppressions. Raises ValueError for a bad selector or version. "
        "all_regions: every function is a compiled region (library mode); extra_roots: "
        "dotted names of functions that are regions because of other modules (package_roots).");
  m.def("fix", &fix, nb::arg("data"), nb::arg("minor"), nb::arg("select"), nb::arg("ignore"),
        nb::arg("unsafe_fixes") = false, nb::arg("is_text") = false, nb::arg("all_regions") = false,
        nb::arg("extra_roots") = std::vector<std::string>{},
        "Fix source bytes to a fixpoint. Returns check's dict (diagnostics: what remains) "
        "plus status, text (mended, UTF-8 bytes, BOM kept), applied, applied_per_code, "
        "culprits, invalid, rounds, and source_map: one (line, col, end_line, end_col, "
        "orig_line, orig_col, orig_end_line, orig_end_col) per edit region, in order: that "
        "range of text replaced that range of the input (all rounds composed; columns are "
        "0-based UTF-8 bytes); text between regions is the input's, unchanged.");
  m.def("remap_linetable", &remap_linetable, nb::arg("linetable"), nb::arg("firstlineno"),
        nb::arg("markers"),
        "The import hook's position remapping of one code object (CPython 3.11-3.13 "
        "location table): returns (firstlineno, new_table), new_table None when no edit "
        "touches the code object (only firstlineno moves). markers: FixResult.source_map "
        "packed as 8 native int64 per marker.");
  m.def("package_roots", &package_roots, nb::arg("files"), nb::arg("minor"),
        nb::arg("include_own") = false, nb::arg("jobs") = 1,
        "Package-wide regions: for [(module, is_package, source bytes)], per file (roots, "
        "regions): the dotted names of functions reached from compiled code elsewhere in the "
        "package (pass them to check/fix as extra_roots) and whether the file holds any "
        "compiled region (None: it does not decode or parse). jobs: threads for the per-file "
        "summaries. include_own: every reached function, each file's own regions too.");
  m.def("package_check", &package_check, nb::arg("files"), nb::arg("minor"), nb::arg("jobs") = 1,
        "package_roots and check together, each file parsed once: for [(module, is_package, "
        "source bytes, select, ignore, unsafe_fixes)], per file (roots, regions, the dict "
        "check() returns with extra_roots=roots, or None when the bytes do not decode).");
  m.def("rules", &rules, "Every shipped rule: [{code, name, summary, documentation}].");
  m.def(
      "is_valid_selector", [](const std::string& s) { return gm::lint::is_valid_selector(s); },
      nb::arg("selector"), "Is this a valid --select/--ignore selector?");
}

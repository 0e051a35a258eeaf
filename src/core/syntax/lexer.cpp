// The lexer, modelled on CPython's Parser/lexer/lexer.c (3.12+ f-string
// modes). See lexer.h for the token conventions.
#include "syntax/lexer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "syntax/scan.h"
#include "syntax/unicode_printable.h"
#include "syntax/unicode_tables.h"

namespace gm {

std::string_view token_spelling(Tok kind) {
  switch (kind) {
#define GM_X(k, spelling) \
  case Tok::k: return spelling;
    GM_TOKEN_KINDS(GM_X)
#undef GM_X
  }
  return "?";
}

std::uint32_t LineIndex::line_of(std::uint32_t offset) const {
  // First start greater than offset; the line is the one before it.
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  if (it == starts.begin()) return 1;
  return static_cast<std::uint32_t>(it - starts.begin());
}

namespace {

constexpr int kTabSize = 8;
constexpr int kMaxIndent = 100;       // CPython's MAXINDENT
constexpr std::size_t kMaxLevel = 200;       // MAXLEVEL: bracket nesting
constexpr std::size_t kMaxFStringLevel = 150;  // MAXFSTRINGLEVEL (mode stack, incl. base)
constexpr int kMaxExprNesting = 3;    // MAX_EXPR_NESTING

constexpr bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
constexpr bool is_xdigit(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr bool is_ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 128;
}
constexpr bool is_ident_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c >= 128;
}

// What the byte at a token's start begins, for normal_token's dispatch.
enum class Start : std::uint8_t {
  Other,
  Space,
  Hash,
  LineBreak,
  Ident,
  Digit,
  Dot,
  Quote,
  Backslash,
  End,
  Comma,
  EqualOrColon,
  Open,
  Close
};
struct StartTable {
  Start v[256];
};
constexpr StartTable make_start_table() {
  StartTable t{};
  for (int i = 0; i < 256; ++i) {
    const auto c = static_cast<unsigned char>(i);
    Start k = Start::Other;
    if (c == ' ' || c == '\t' || c == '\f')
      k = Start::Space;
    else if (c == '#')
      k = Start::Hash;
    else if (c == '\n' || c == '\r')
      k = Start::LineBreak;
    else if (is_ident_start(c))
      k = Start::Ident;
    else if (is_digit(c))
      k = Start::Digit;
    else if (c == '.')
      k = Start::Dot;
    else if (c == '"' || c == '\'')
      k = Start::Quote;
    else if (c == '\\')
      k = Start::Backslash;
    else if (c == 0)
      k = Start::End;
    else if (c == ',')
      k = Start::Comma;
    else if (c == '=' || c == ':')
      k = Start::EqualOrColon;
    else if (c == '(' || c == '[' || c == '{')
      k = Start::Open;
    else if (c == ')' || c == ']' || c == '}')
      k = Start::Close;
    t.v[i] = k;
  }
  return t;
}
constexpr StartTable kStartClass = make_start_table();

// Hard keywords by a perfect hash of (first byte, last byte, length): one
// table probe and at most one compare per identifier, instead of a chain of
// compares per length. The constants were searched for offline;
// make_keyword_table() fails to compile if two keywords ever collide.
struct KeywordEntry {
  const char* text = nullptr;
  std::uint8_t len = 0;
  Tok kind = Tok::Name;
};
constexpr std::size_t kKeywordSlots = 128;
constexpr std::size_t keyword_slot(unsigned char first, unsigned char last, std::size_t len) {
  return (first + 11u * last + len) % kKeywordSlots;
}
struct KeywordTable {
  KeywordEntry slot[kKeywordSlots];
};
constexpr std::size_t cstr_len(const char* s) {
  std::size_t n = 0;
  while (s[n]) ++n;
  return n;
}
constexpr KeywordTable make_keyword_table() {
  const KeywordEntry all[] = {
      {"False", 0, Tok::KwFalse},
      {"None", 0, Tok::KwNone},
      {"True", 0, Tok::KwTrue},
      {"and", 0, Tok::KwAnd},
      {"as", 0, Tok::KwAs},
      {"assert", 0, Tok::KwAssert},
      {"async", 0, Tok::KwAsync},
      {"await", 0, Tok::KwAwait},
      {"break", 0, Tok::KwBreak},
      {"class", 0, Tok::KwClass},
      {"continue", 0, Tok::KwContinue},
      {"def", 0, Tok::KwDef},
      {"del", 0, Tok::KwDel},
      {"elif", 0, Tok::KwElif},
      {"else", 0, Tok::KwElse},
      {"except", 0, Tok::KwExcept},
      {"finally", 0, Tok::KwFinally},
      {"for", 0, Tok::KwFor},
      {"from", 0, Tok::KwFrom},
      {"global", 0, Tok::KwGlobal},
      {"if", 0, Tok::KwIf},
      {"import", 0, Tok::KwImport},
      {"in", 0, Tok::KwIn},
      {"is", 0, Tok::KwIs},
      {"lambda", 0, Tok::KwLambda},
      {"nonlocal", 0, Tok::KwNonlocal},
      {"not", 0, Tok::KwNot},
      {"or", 0, Tok::KwOr},
      {"pass", 0, Tok::KwPass},
      {"raise", 0, Tok::KwRaise},
      {"return", 0, Tok::KwReturn},
      {"try", 0, Tok::KwTry},
      {"while", 0, Tok::KwWhile},
      {"with", 0, Tok::KwWith},
      {"yield", 0, Tok::KwYield},
  };
  KeywordTable t{};
  for (KeywordEntry k : all) {
    k.len = static_cast<std::uint8_t>(cstr_len(k.text));
    const std::size_t h = keyword_slot(static_cast<unsigned char>(k.text[0]),
                                       static_cast<unsigned char>(k.text[k.len - 1]), k.len);
    if (t.slot[h].text) throw "keyword hash collision";  // not a constant expression
    t.slot[h] = k;
  }
  return t;
}
constexpr KeywordTable kKeywords = make_keyword_table();

Tok keyword(const char* p, std::size_t len) {
  if (len < 2 || len > 8) return Tok::Name;
  const KeywordEntry& k = kKeywords.slot[keyword_slot(static_cast<unsigned char>(p[0]),
                                                      static_cast<unsigned char>(p[len - 1]), len)];
  if (k.len != len || k.text[0] != p[0] || std::memcmp(k.text, p, len) != 0) return Tok::Name;
  return k.kind;
}

std::string format_u(const char* fmt, std::uint32_t cp) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, static_cast<unsigned>(cp));
  return buf;
}

// One f-string on the mode stack (CPython's tokenizer_mode).
struct FMode {
  bool regular = false;  // lexing a replacement-field expression
  bool in_format_spec = false;
  bool raw = false;
  char quote = '"';
  std::uint8_t quote_size = 1;
  std::uint8_t flags = 0;  // token flags of the FStringStart
  int curly_depth = 0;
  int expr_start_depth = -1;
  std::uint32_t start = 0;  // FStringStart begin offset
};

struct Paren {
  char c;
  std::uint32_t offset;
};

class Lexer {
 public:
  Lexer(const Source& source, LexResult& out)
      : s_(source.text().data()),
        n_(static_cast<std::uint32_t>(source.text().size())),
        pos_(source.body_offset()),
        out_(out) {}

  void run();

 private:
  // ---- helpers
  unsigned char at(std::uint32_t p) const { return p < n_ ? static_cast<unsigned char>(s_[p]) : 0; }
  bool eof(std::uint32_t p) const { return p >= n_; }
  bool is_nl(std::uint32_t p) const { return p < n_ && (s_[p] == '\n' || s_[p] == '\r'); }
  std::uint32_t nl_len(std::uint32_t p) const {
    return (s_[p] == '\r' && p + 1 < n_ && s_[p + 1] == '\n') ? 2 : 1;
  }
  // Offset of the line break (or EOF) ending the physical line containing p.
  std::uint32_t eol(std::uint32_t p) const { return p < n_ ? scan::line_end(s_, p, n_) : n_; }
  // Token lines come from a cursor over the line starts that only moves
  // forward (token offsets are non-decreasing, bar an error token that
  // points back, which gets the cursor's line as before): one predictable
  // compare per token instead of a second pass over the tokens.
  std::uint32_t advance_line(std::uint32_t off) {
    while (off >= next_line_start_) {
      ++line_;
      next_line_start_ = line_ < nlines_ ? line_starts_[line_] : UINT32_MAX;
    }
    return line_;
  }
  void emit(Tok kind, std::uint32_t b, std::uint32_t e, std::uint8_t flags = 0) {
    Token t;
    t.kind = kind;
    t.flags = flags;
    t.begin = b;
    t.end = e;
    t.line = advance_line(b);
    t.end_line = advance_line(e > b ? e - 1 : b);
    out_.tokens.push_back(t);
  }
  void trivia(Trivia::Kind k, std::uint32_t b, std::uint32_t e) {
    out_.trivia.push_back(Trivia{k, b, e});
  }
  std::uint32_t line_of(std::uint32_t off) const { return out_.lines.line_of(off); }
  std::uint32_t col_of(std::uint32_t off) const {
    return off - out_.lines.line_start(line_of(off));
  }

  // Record the error and end the stream with an Error token at `token_at`.
  // Returns false so callers can `return fail(...)`.
  bool fail_at(std::uint32_t line, std::uint32_t col, std::uint32_t end_line, std::uint32_t end_col,
               std::string message, std::uint32_t token_at, const char* kind = "SyntaxError") {
    SyntaxError e;
    e.kind = kind;
    e.message = std::move(message);
    e.line = line;
    e.col = col;
    e.end_line = end_line;
    e.end_col = end_col;
    out_.error = std::move(e);
    emit(Tok::Error, token_at, token_at);
    done_ = true;
    return false;
  }
  // CPython's _PyTokenizer_syntaxerror with the cursor at `cur`: the error
  // points at the character before the cursor.
  bool error_cur(std::uint32_t cur, std::string message) {
    std::uint32_t at = cur > 0 ? cur - 1 : 0;
    if (at < out_.lines.starts[0]) at = out_.lines.starts[0];
    std::uint32_t line = line_of(at);
    std::uint32_t col = at - out_.lines.line_start(line);
    return fail_at(line, col, line, col, std::move(message), at);
  }
  // An error at offset `at` covering [at, end).
  bool error_range(std::uint32_t at, std::uint32_t end, std::string message) {
    std::uint32_t line = line_of(at), end_line = line_of(end);
    return fail_at(line, col_of(at), end_line, end - out_.lines.line_start(end_line),
                   std::move(message), at);
  }
  // Errors CPython places at the end of the current physical line
  // (E_DEDENT, E_TOODEEP, E_EOF after a continuation).
  bool error_eol(std::uint32_t p, std::string message, const char* kind) {
    std::uint32_t e = eol(p);
    std::uint32_t line = line_of(p);
    std::uint32_t ls = out_.lines.line_start(line);
    std::uint32_t col = e >= ls ? e - ls : 0;
    return fail_at(line, col, line, col, std::move(message), std::min(p, n_), kind);
  }

  bool normal_step();
  [[gnu::always_inline]] bool normal_token();
  bool fstring_step();
  bool indentation();
  bool at_eof();
  bool continuation();
  bool identifier_or_string();
  bool number();
  bool string(std::uint32_t start, std::uint32_t quote_pos, std::uint8_t flags);
  bool fstring_start(std::uint32_t start, std::uint32_t quote_pos, std::uint8_t flags);
  bool verify_identifier(std::uint32_t start, std::uint32_t end);
  bool verify_end_of_number(std::uint32_t p, const char* kind);
  bool decimal_tail(std::uint32_t& p);
  bool operator_token();

  const char* s_;
  std::uint32_t n_;
  std::uint32_t pos_;
  LexResult& out_;
  bool done_ = false;
  bool atbol_ = true;
  std::uint32_t buf_ = 0;  // CPython's tok->buf (see continuation())
  bool blankline_ = false;
  int indstack_[kMaxIndent + 1] = {0};
  int altindstack_[kMaxIndent + 1] = {0};
  int indent_ = 0;
  std::vector<Paren> parens_;
  std::vector<FMode> modes_;
  // emit()'s line cursor (see advance_line)
  const std::uint32_t* line_starts_ = nullptr;
  std::uint32_t nlines_ = 0;
  std::uint32_t line_ = 1;
  std::uint32_t next_line_start_ = UINT32_MAX;
};

void Lexer::run() {
  // Line index first: one pass over the bytes.
  auto& starts = out_.lines.starts;
  starts.reserve(n_ / 24 + 16);
  starts.push_back(pos_);
  if (!std::memchr(s_ + pos_, '\r', n_ - pos_)) {
    scan::lf_line_starts(s_, pos_, n_, starts);  // LF only: the common case
  } else {
    for (std::uint32_t i = pos_; i < n_; ++i) {
      char c = s_[i];
      if (c == '\n') {
        starts.push_back(i + 1);
      } else if (c == '\r') {
        if (i + 1 < n_ && s_[i + 1] == '\n') ++i;
        starts.push_back(i + 1);
      }
    }
  }
  // Tokens per byte over the 3.11 stdlib: median 0.17, 99th percentile
  // 0.29 (regrowing copies every token so far; unwritten capacity costs no
  // memory pages). About one trivia per 60 bytes.
  out_.tokens.reserve(n_ * 3 / 10 + 16);
  out_.trivia.reserve(n_ / 48 + 16);
  line_starts_ = starts.data();
  nlines_ = static_cast<std::uint32_t>(starts.size());
  line_ = 1;
  next_line_start_ = nlines_ > 1 ? starts[1] : UINT32_MAX;

  while (!done_) {
    if (!modes_.empty() && !modes_.back().regular) {
      if (!fstring_step()) break;
    } else {
      if (!normal_step()) break;
    }
  }
}

// Indentation at the beginning of a logical line (CPython's atbol block).
bool Lexer::indentation() {
  atbol_ = false;
  int col = 0, altcol = 0;
  int cont_line_col = 0;
  const std::uint32_t line_begin = pos_;
  {
    const int spaces = static_cast<int>(scan::space_run(s_, pos_, n_));
    col = altcol = spaces;
    pos_ += static_cast<std::uint32_t>(spaces);
  }
  for (;;) {
    unsigned char c = at(pos_);
    if (pos_ >= n_) break;
    if (c == ' ') {
      ++col, ++altcol;
    } else if (c == '\t') {
      col = (col / kTabSize + 1) * kTabSize;
      altcol = altcol + 1;
    } else if (c == '\f') {
      col = altcol = 0;
    } else if (c == '\\') {
      // Indentation cannot be split over physical lines with backslashes:
      // the column of the first backslash decides (CPython 3.11.x+).
      if (!cont_line_col) cont_line_col = col;
      if (!continuation()) return false;
      continue;
    } else {
      break;
    }
    ++pos_;
  }
  if (cont_line_col) col = altcol = cont_line_col;
  unsigned char c = at(pos_);
  if (pos_ < n_ && (c == '#' || c == '\n' || c == '\r')) {
    blankline_ = true;
    return true;
  }
  if (pos_ >= n_) col = altcol = 0;  // EOF: dedent everything
  if (!parens_.empty()) return true;
  if (col == indstack_[indent_]) {
    if (altcol != altindstack_[indent_]) {
      return fail_at(line_of(line_begin), 0, line_of(line_begin), 0,
                     "inconsistent use of tabs and spaces in indentation", pos_, "TabError");
    }
  } else if (col > indstack_[indent_]) {
    if (indent_ + 1 >= kMaxIndent) {
      return error_eol(pos_, "too many levels of indentation", "IndentationError");
    }
    if (altcol <= altindstack_[indent_]) {
      return fail_at(line_of(line_begin), 0, line_of(line_begin), 0,
                     "inconsistent use of tabs and spaces in indentation", pos_, "TabError");
    }
    ++indent_;
    indstack_[indent_] = col;
    altindstack_[indent_] = altcol;
    emit(Tok::Indent, line_begin, pos_);
  } else {
    int dedents = 0;
    while (indent_ > 0 && col < indstack_[indent_]) {
      --indent_;
      ++dedents;
    }
    if (col != indstack_[indent_]) {
      return error_eol(pos_, "unindent does not match any outer indentation level",
                       "IndentationError");
    }
    if (altcol != altindstack_[indent_]) {
      return fail_at(line_of(line_begin), 0, line_of(line_begin), 0,
                     "inconsistent use of tabs and spaces in indentation", pos_, "TabError");
    }
    for (int i = 0; i < dedents; ++i) emit(Tok::Dedent, pos_, pos_);
  }
  return true;
}

bool Lexer::at_eof() {
  if (!parens_.empty()) {
    const Paren& p = parens_.back();
    std::uint32_t line = line_of(p.offset);
    std::uint32_t col = col_of(p.offset);
    std::string msg = "'";
    msg += p.c;
    msg += "' was never closed";
    return fail_at(line, col, line, col + 1, std::move(msg), n_);
  }
  if (!blankline_ && !out_.tokens.empty()) {
    Tok last = out_.tokens.back().kind;
    if (last != Tok::Newline && last != Tok::Dedent && last != Tok::Indent) {
      // CPython appends a newline to an unterminated last line.
      emit(Tok::Newline, n_, n_);
      atbol_ = true;
      return true;
    }
  }
  if (indent_ > 0) {
    for (; indent_ > 0; --indent_) emit(Tok::Dedent, n_, n_);
  }
  emit(Tok::EndMarker, n_, n_);
  done_ = true;
  return false;
}

// Outside f-strings, lex token after token here rather than returning to
// run() for each one (a big function's call and return per token); inside a
// replacement field, one token at a time, since any token may switch the
// f-string mode.
bool Lexer::normal_step() {
  do {
    if (!normal_token()) return false;
  } while (modes_.empty());
  return true;
}

[[gnu::always_inline]] inline bool Lexer::normal_token() {
  for (;;) {  // nextline
    blankline_ = false;
    if (atbol_) {
      buf_ = pos_;
      if (!indentation()) return false;
    }
    for (;;) {  // again
      // One table lookup and one jump per token start (and per space)
      // instead of a chain of tests whose outcome changes from token to
      // token.
      const unsigned char c = at(pos_);
      const std::uint32_t b = pos_;
      switch (kStartClass.v[c]) {
        case Start::Space: ++pos_; continue;
        case Start::Hash: {
          if (pos_ >= n_) return at_eof();  // (a NUL is never in the text)
          const std::uint32_t e = eol(pos_);
          trivia(Trivia::Kind::Comment, b, e);
          pos_ = e;
          if (pos_ >= n_) return at_eof();
          continue;  // at the line break
        }
        case Start::LineBreak:
          pos_ += nl_len(pos_);
          atbol_ = true;
          if (blankline_ || !parens_.empty()) {
            trivia(Trivia::Kind::NonLogicalNewline, b, pos_);
            break;  // nextline
          }
          emit(Tok::Newline, b, pos_);
          return true;
        case Start::Ident: return identifier_or_string();
        case Start::Digit: return number();
        case Start::Dot:
          if (is_digit(at(pos_ + 1))) return number();
          if (at(pos_ + 1) == '.' && at(pos_ + 2) == '.') {
            emit(Tok::Ellipsis, b, b + 3);
            pos_ = b + 3;
            return true;
          }
          emit(Tok::Dot, b, b + 1);
          pos_ = b + 1;
          return true;
        case Start::Quote: return string(b, b, 0);
        case Start::Backslash:
          if (!continuation()) return false;
          continue;
        case Start::End:
          if (pos_ >= n_) return at_eof();
          return operator_token();  // a NUL inside the text: rejected there
        // The commonest operators, outside f-strings: what operator_token()
        // does for them, without its f-string and error cases. (The text is
        // NUL-terminated, so s_[b + 1] is readable.)
        case Start::Comma:
          if (!modes_.empty()) return operator_token();
          emit(Tok::Comma, b, b + 1);
          pos_ = b + 1;
          return true;
        case Start::EqualOrColon:
          if (!modes_.empty() || s_[b + 1] == '=') return operator_token();
          emit(c == '=' ? Tok::Equal : Tok::Colon, b, b + 1);
          pos_ = b + 1;
          return true;
        case Start::Open:
          if (!modes_.empty() || parens_.size() >= kMaxLevel) return operator_token();
          parens_.push_back(Paren{static_cast<char>(c), b});
          emit(c == '(' ? Tok::LPar : c == '[' ? Tok::LSqb : Tok::LBrace, b, b + 1);
          pos_ = b + 1;
          return true;
        case Start::Close: {
          const char open = c == ')' ? '(' : c == ']' ? '[' : '{';
          if (!modes_.empty() || parens_.empty() || parens_.back().c != open)
            return operator_token();
          parens_.pop_back();
          emit(c == ')' ? Tok::RPar : c == ']' ? Tok::RSqb : Tok::RBrace, b, b + 1);
          pos_ = b + 1;
          return true;
        }
        case Start::Other: return operator_token();
      }
      break;  // nextline (only LineBreak gets here)
    }
  }
}

// A backslash at pos_: must be followed by a line break and more text.
bool Lexer::continuation() {
  std::uint32_t b = pos_;
  std::uint32_t p = pos_ + 1;
  if (at(p) == '\r') {
    ++p;
    if (at(p) == '\n') ++p;
  } else if (at(p) == '\n') {
    ++p;
  } else {
    if (p >= n_) return error_eol(b, "unexpected EOF while parsing", "SyntaxError");
    // E_LINECONT: CPython measures the column from tok->buf, the start of
    // the line where the current run of tokens began (a multi-line string
    // or a continued line keeps the earlier line), not from the line start.
    std::uint32_t line = line_of(p);
    std::uint32_t col = p - std::min(buf_, p);
    return fail_at(line, col, line, col + 1,
                   "unexpected character after line continuation character", p);
  }
  if (p >= n_) return error_eol(b, "unexpected EOF while parsing", "SyntaxError");
  trivia(Trivia::Kind::Continuation, b, p);
  pos_ = p;
  return true;
}

bool Lexer::verify_identifier(std::uint32_t start, std::uint32_t end) {
  const char* p = s_ + start;
  const char* e = s_ + end;
  bool first = true;
  while (p < e) {
    char32_t cp;
    int len = unicode::decode_utf8(p, e, cp);
    bool ok = first ? (cp == '_' || unicode::is_xid_start(cp)) : unicode::is_xid_continue(cp);
    if (!ok) {
      std::uint32_t off = static_cast<std::uint32_t>(p - s_);
      std::uint32_t line = line_of(off);
      std::uint32_t col = col_of(off);
      std::string msg;
      if (unicode::is_printable(cp, unicode::kNewestMinor)) {
        msg = "invalid character '";
        unicode::append_utf8(msg, cp);
        msg += format_u("' (U+%04X)", cp);
      } else {
        msg = format_u("invalid non-printable character U+%04X", cp);
      }
      return fail_at(line, col, line, col + 1, std::move(msg), off);
    }
    first = false;
    p += len;
  }
  return true;
}

bool Lexer::identifier_or_string() {
  const std::uint32_t start = pos_;
  bool saw_b = false, saw_r = false, saw_u = false, saw_f = false;
  std::uint32_t p = pos_;
  for (;;) {
    unsigned char c = at(p);
    if (!(saw_b || saw_u || saw_f) && (c == 'b' || c == 'B')) {
      saw_b = true;
    } else if (!(saw_b || saw_u || saw_r || saw_f) && (c == 'u' || c == 'U')) {
      saw_u = true;
    } else if (!(saw_r || saw_u) && (c == 'r' || c == 'R')) {
      saw_r = true;
    } else if (!(saw_f || saw_b || saw_u) && (c == 'f' || c == 'F')) {
      saw_f = true;
    } else {
      break;
    }
    ++p;
    unsigned char q = at(p);
    if (q == '"' || q == '\'') {
      std::uint8_t flags = 0;
      if (saw_b) flags |= kPrefixBytes;
      if (saw_r) flags |= kPrefixRaw;
      if (saw_u) flags |= kPrefixUnicode;
      if (saw_f) return fstring_start(start, p, flags | kPrefixFormat);
      return string(start, p, flags);
    }
  }
  unsigned acc = 0;
  p = scan::ident_end(s_, p, n_, acc);
  const bool nonascii = (acc & 0x80) != 0;
  if (nonascii && !verify_identifier(start, p)) return false;
  Tok kind = nonascii ? Tok::Name : keyword(s_ + start, p - start);
  emit(kind, start, p, nonascii ? kNonAscii : 0);
  pos_ = p;
  return true;
}

// CPython's tok_decimal_tail: p is at a digit; consumes digits with single
// underscores between them.
bool Lexer::decimal_tail(std::uint32_t& p) {
  for (;;) {
    while (is_digit(at(p))) ++p;
    if (at(p) != '_') return true;
    ++p;
    if (!is_digit(at(p))) return error_cur(p, "invalid decimal literal");
  }
}

bool Lexer::verify_end_of_number(std::uint32_t p, const char* kind) {
  unsigned char c = at(p);
  auto look = [&](const char* rest) {
    std::uint32_t q = p + 1;
    for (const char* r = rest; *r; ++r, ++q)
      if (at(q) != static_cast<unsigned char>(*r)) return false;
    return !(q < n_ && is_ident_char(at(q)));
  };
  bool r = false;
  if (c == 'a') {
    r = look("nd");
  } else if (c == 'e') {
    r = look("lse");
  } else if (c == 'f') {
    r = look("or");
  } else if (c == 'i') {
    unsigned char c2 = at(p + 1);
    r = c2 == 'f' || c2 == 'n' || c2 == 's';
  } else if (c == 'o') {
    r = look("r");
  } else if (c == 'n') {
    r = look("ot");
  }
  if (r) return true;  // only a SyntaxWarning in CPython
  if (p < n_ && c < 128 && is_ident_char(c)) {
    std::string msg = "invalid ";
    msg += kind;
    msg += " literal";
    return error_cur(p, std::move(msg));
  }
  return true;
}

bool Lexer::number() {
  const std::uint32_t start = pos_;
  std::uint32_t p = pos_;
  unsigned char c = at(p);
  auto finish = [&](std::uint32_t end) {
    emit(Tok::Number, start, end);
    pos_ = end;
    return true;
  };
  bool fraction = false;
  if (c == '.') {
    // ".5": fraction.
    ++p;
    fraction = true;
  } else if (c == '0') {
    ++p;
    c = at(p);
    if (c == 'x' || c == 'X') {
      ++p;
      do {
        if (at(p) == '_') ++p;
        if (!is_xdigit(at(p))) return error_cur(p, "invalid hexadecimal literal");
        while (is_xdigit(at(p))) ++p;
      } while (at(p) == '_');
      if (!verify_end_of_number(p, "hexadecimal")) return false;
      return finish(p);
    }
    if (c == 'o' || c == 'O') {
      ++p;
      do {
        if (at(p) == '_') ++p;
        unsigned char d = at(p);
        if (d < '0' || d >= '8') {
          if (is_digit(d)) {
            std::string m = "invalid digit '";
            m += static_cast<char>(d);
            m += "' in octal literal";
            return error_cur(p + 1, std::move(m));
          }
          return error_cur(p, "invalid octal literal");
        }
        while (at(p) >= '0' && at(p) < '8') ++p;
      } while (at(p) == '_');
      if (is_digit(at(p))) {
        std::string m = "invalid digit '";
        m += static_cast<char>(at(p));
        m += "' in octal literal";
        return error_cur(p + 1, std::move(m));
      }
      if (!verify_end_of_number(p, "octal")) return false;
      return finish(p);
    }
    if (c == 'b' || c == 'B') {
      ++p;
      do {
        if (at(p) == '_') ++p;
        unsigned char d = at(p);
        if (d != '0' && d != '1') {
          if (is_digit(d)) {
            std::string m = "invalid digit '";
            m += static_cast<char>(d);
            m += "' in binary literal";
            return error_cur(p + 1, std::move(m));
          }
          return error_cur(p, "invalid binary literal");
        }
        while (at(p) == '0' || at(p) == '1') ++p;
      } while (at(p) == '_');
      if (is_digit(at(p))) {
        std::string m = "invalid digit '";
        m += static_cast<char>(at(p));
        m += "' in binary literal";
        return error_cur(p + 1, std::move(m));
      }
      if (!verify_end_of_number(p, "binary")) return false;
      return finish(p);
    }
    // Zeros, maybe old-style octal.
    bool nonzero = false;
    for (;;) {
      if (at(p) == '_') {
        ++p;
        if (!is_digit(at(p))) return error_cur(p, "invalid decimal literal");
      }
      if (at(p) != '0') break;
      ++p;
    }
    std::uint32_t zeros_end = p;
    if (is_digit(at(p))) {
      nonzero = true;
      if (!decimal_tail(p)) return false;
    }
    c = at(p);
    if (c == '.') {
      ++p;
      fraction = true;
    } else if (c == 'e' || c == 'E' || c == 'j' || c == 'J') {
      // handled below
    } else if (nonzero) {
      std::uint32_t line = line_of(start);
      std::uint32_t ls = out_.lines.line_start(line);
      return fail_at(line, start - ls, line, zeros_end - ls,
                     "leading zeros in decimal integer literals are not permitted; use an 0o "
                     "prefix for octal integers",
                     start);
    } else {
      if (!verify_end_of_number(p, "decimal")) return false;
      return finish(p);
    }
  } else {
    if (!decimal_tail(p)) return false;
    if (at(p) == '.') {
      ++p;
      fraction = true;
    }
  }
  if (fraction) {
    if (is_digit(at(p))) {
      if (!decimal_tail(p)) return false;
    }
  }
  c = at(p);
  if (c == 'e' || c == 'E') {
    std::uint32_t e = p;
    ++p;
    unsigned char d = at(p);
    if (d == '+' || d == '-') {
      ++p;
      if (!is_digit(at(p))) return error_cur(p, "invalid decimal literal");
    } else if (!is_digit(d)) {
      if (!verify_end_of_number(e, "decimal")) return false;
      return finish(e);
    }
    if (!decimal_tail(p)) return false;
    c = at(p);
  }
  if (c == 'j' || c == 'J') {
    ++p;
    if (!verify_end_of_number(p, "imaginary")) return false;
  } else if (!verify_end_of_number(p, "decimal")) {
    return false;
  }
  return finish(p);
}

bool Lexer::string(std::uint32_t start, std::uint32_t quote_pos, std::uint8_t flags) {
  const char quote = s_[quote_pos];
  std::uint32_t p = quote_pos + 1;
  int quote_size = 1;
  int end_quote_size = 0;
  if (at(p) == static_cast<unsigned char>(quote)) {
    ++p;
    if (at(p) == static_cast<unsigned char>(quote)) {
      ++p;
      quote_size = 3;
    } else {
      end_quote_size = 1;  // empty string
    }
  }
  if (quote_size == 3) flags |= kTripleQuoted;
  bool escaped_quote = false;
  while (end_quote_size != quote_size) {
    // Fast skip over ordinary characters.
    if (end_quote_size == 0) p = scan::string_stop(s_, p, n_, quote);
    if (p >= n_ || (quote_size == 1 && (s_[p] == '\n' || s_[p] == '\r'))) {
      // Unterminated: reported at the start of the token.
      std::uint32_t detected = p >= n_ ? line_of(n_ > 0 ? n_ - 1 : 0) : line_of(p);
      if (p >= n_ && n_ > 0 && !is_nl(n_ - 1)) detected = line_of(n_ - 1);
      std::uint32_t line = line_of(start);
      std::uint32_t col = col_of(start);
      if (!modes_.empty()) {
        const FMode& m = modes_.back();
        if (m.quote == quote && m.quote_size == quote_size) {
          return fail_at(line, col, line, col, "f-string: expecting '}'", start);
        }
      }
      std::string msg;
      if (quote_size == 3) {
        msg = "unterminated triple-quoted string literal (detected at line " +
              std::to_string(detected) + ")";
      } else if (escaped_quote) {
        msg = "unterminated string literal (detected at line " + std::to_string(detected) +
              "); perhaps you escaped the end quote?";
      } else {
        msg = "unterminated string literal (detected at line " + std::to_string(detected) + ")";
      }
      return fail_at(line, col, line, col, std::move(msg), start);
    }
    char c = s_[p++];
    if (c == quote) {
      ++end_quote_size;
    } else {
      end_quote_size = 0;
      if (c == '\r') flags |= kEscapes;
      if (c == '\\' && p < n_) {
        flags |= kEscapes;
        char d = s_[p++];
        if (d == quote) escaped_quote = true;
        if (d == '\r' && p < n_ && s_[p] == '\n') ++p;
      }
    }
  }
  emit(Tok::String, start, p, flags);
  pos_ = p;
  return true;
}

bool Lexer::fstring_start(std::uint32_t start, std::uint32_t quote_pos, std::uint8_t flags) {
  const char quote = s_[quote_pos];
  std::uint32_t p = quote_pos + 1;
  int quote_size = 1;
  if (at(p) == static_cast<unsigned char>(quote) &&
      at(p + 1) == static_cast<unsigned char>(quote)) {
    p += 2;
    quote_size = 3;
    flags |= kTripleQuoted;
  }
  if (modes_.size() + 1 >= kMaxFStringLevel) {
    return error_cur(p, "too many nested f-strings");
  }
  FMode m;
  m.quote = quote;
  m.quote_size = static_cast<std::uint8_t>(quote_size);
  m.raw = (flags & kPrefixRaw) != 0;
  m.flags = flags;
  m.start = start;
  modes_.push_back(m);
  emit(Tok::FStringStart, start, p, flags);
  pos_ = p;
  return true;
}

bool Lexer::fstring_step() {
  FMode& m = modes_.back();
  const std::uint32_t start = pos_;
  const std::uint8_t mflags = m.flags;
  // A replacement field starts right here.
  if (at(pos_) == '{' && at(pos_ + 1) != '{' && pos_ < n_) {
    ++m.expr_start_depth;
    if (m.expr_start_depth >= kMaxExprNesting) {
      return error_cur(pos_, "f-string: expressions nested too deeply");
    }
    m.regular = true;
    return normal_step();
  }
  // The closing quote(s)?
  {
    bool end = true;
    for (int i = 0; i < m.quote_size; ++i) {
      if (at(pos_ + i) != static_cast<unsigned char>(m.quote) || pos_ + i >= n_) {
        end = false;
        break;
      }
    }
    if (end) {
      emit(Tok::FStringEnd, pos_, pos_ + m.quote_size, mflags);
      pos_ += m.quote_size;
      modes_.pop_back();
      return true;
    }
  }
  auto middle = [&](std::uint32_t b, std::uint32_t e) {
    if (e > b) emit(Tok::FStringMiddle, b, e, mflags);
  };
  std::uint32_t p = pos_;
  int end_quote_size = 0;
  bool unicode_escape = false;
  while (end_quote_size != m.quote_size) {
    bool in_format_spec = m.in_format_spec && m.expr_start_depth >= 0;
    if (p >= n_ || (m.quote_size == 1 && (s_[p] == '\n' || s_[p] == '\r'))) {
      if (in_format_spec && p < n_) {
        // A newline ends a single-quoted f-string's format spec.
        m.regular = true;
        m.in_format_spec = false;
        middle(start, p);
        pos_ = p;
        return true;
      }
      std::uint32_t detected = p >= n_ ? line_of(n_ > 0 ? n_ - 1 : 0) : line_of(p);
      std::uint32_t line = line_of(m.start);
      std::uint32_t col = col_of(m.start);
      std::string msg = m.quote_size == 3 ? "unterminated triple-quoted f-string literal"
                                          : "unterminated f-string literal";
      msg += " (detected at line " + std::to_string(detected) + ")";
      return fail_at(line, col, line, col, std::move(msg), m.start);
    }
    char c = s_[p++];
    if (c == m.quote) {
      ++end_quote_size;
      continue;
    }
    end_quote_size = 0;
    if (c == '{') {
      if (at(p) != '{' || in_format_spec || p >= n_) {
        // Start of a replacement field: emit the text before it.
        --p;
        ++m.expr_start_depth;
        if (m.expr_start_depth >= kMaxExprNesting) {
          return error_cur(p, "f-string: expressions nested too deeply");
        }
        m.regular = true;
        m.in_format_spec = false;
        middle(start, p);
        pos_ = p;
        return true;
      }
      // "{{": the middle ends after the first brace; the second is skipped.
      middle(start, p);
      pos_ = p + 1;
      return true;
    }
    if (c == '}') {
      if (unicode_escape) {
        middle(start, p);
        pos_ = p;
        return true;
      }
      if (at(p) == '}' && p < n_ && !in_format_spec && m.curly_depth == 0) {
        middle(start, p);
        pos_ = p + 1;
        return true;
      }
      --p;
      m.regular = true;
      m.in_format_spec = false;
      middle(start, p);
      pos_ = p;
      return true;
    }
    if (c == '\\' && p < n_) {
      unsigned char peek = at(p);
      std::uint32_t q = p + 1;
      if (peek == '\r') {
        peek = at(q);
        if (peek == '\n') ++q;
      }
      if (peek == '{' || peek == '}') continue;  // the brace is handled next round
      if (!m.raw && peek == 'N') {
        if (at(q) == '{') {
          unicode_escape = true;
          ++q;
        }
      }
      p = q;
    }
  }
  // Closing quotes reached: emit the text before them.
  p -= m.quote_size;
  middle(start, p);
  pos_ = p;
  return true;
}

bool Lexer::operator_token() {
  const std::uint32_t b = pos_;
  const unsigned char c = at(pos_);
  const unsigned char c2 = at(pos_ + 1);
  const unsigned char c3 = at(pos_ + 2);
  FMode* m = modes_.empty() ? nullptr : &modes_.back();

  // ':' at the top level of a replacement field starts the format spec.
  if (c == ':' && m && m->expr_start_depth >= 0 && m->curly_depth - 1 == m->expr_start_depth) {
    m->regular = false;
    m->in_format_spec = true;
    emit(Tok::Colon, b, b + 1);
    pos_ = b + 1;
    return true;
  }

  Tok kind;
  std::uint32_t len = 1;
  switch (c) {
    case '(':
    case '[':
    case '{': {
      if (parens_.size() >= kMaxLevel) return error_cur(b + 1, "too many nested parentheses");
      parens_.push_back(Paren{static_cast<char>(c), b});
      if (m) ++m->curly_depth;
      emit(c == '(' ? Tok::LPar : c == '[' ? Tok::LSqb : Tok::LBrace, b, b + 1);
      pos_ = b + 1;
      return true;
    }
    case ')':
    case ']':
    case '}': {
      if (m && m->curly_depth == 0 && c == '}') {
        return error_cur(b + 1, "f-string: single '}' is not allowed");
      }
      if (parens_.empty()) {
        std::string msg = "unmatched '";
        msg += static_cast<char>(c);
        msg += "'";
        return error_cur(b + 1, std::move(msg));
      }
      Paren open = parens_.back();
      parens_.pop_back();
      if (!((open.c == '(' && c == ')') || (open.c == '[' && c == ']') ||
            (open.c == '{' && c == '}'))) {
        if (m && open.c == '{' && m->curly_depth - 1 == m->expr_start_depth) {
          std::string msg = "f-string: unmatched '";
          msg += static_cast<char>(c);
          msg += "'";
          return error_cur(b + 1, std::move(msg));
        }
        std::string msg = "closing parenthesis '";
        msg += static_cast<char>(c);
        msg += "' does not match opening parenthesis '";
        msg += open.c;
        msg += "'";
        std::uint32_t open_line = line_of(open.offset);
        if (open_line != line_of(b)) msg += " on line " + std::to_string(open_line);
        return error_cur(b + 1, std::move(msg));
      }
      if (m) {
        --m->curly_depth;
        if (m->curly_depth < 0) {
          std::string msg = "f-string: unmatched '";
          msg += static_cast<char>(c);
          msg += "'";
          return error_cur(b + 1, std::move(msg));
        }
        if (c == '}' && m->curly_depth == m->expr_start_depth) {
          --m->expr_start_depth;
          m->regular = false;
          m->in_format_spec = false;
        }
      }
      emit(c == ')' ? Tok::RPar : c == ']' ? Tok::RSqb : Tok::RBrace, b, b + 1);
      pos_ = b + 1;
      return true;
    }
    case ':':
      if (c2 == '=') {
        kind = Tok::ColonEqual, len = 2;
      } else {
        kind = Tok::Colon;
      }
      break;
    case ',': kind = Tok::Comma; break;
    case ';': kind = Tok::Semi; break;
    case '~': kind = Tok::Tilde; break;
    case '+':
      if (c2 == '=')
        kind = Tok::PlusEqual, len = 2;
      else
        kind = Tok::Plus;
      break;
    case '-':
      if (c2 == '=')
        kind = Tok::MinEqual, len = 2;
      else if (c2 == '>')
        kind = Tok::RArrow, len = 2;
      else
        kind = Tok::Minus;
      break;
    case '*':
      if (c2 == '*') {
        if (c3 == '=')
          kind = Tok::DoubleStarEqual, len = 3;
        else
          kind = Tok::DoubleStar, len = 2;
      } else if (c2 == '=') {
        kind = Tok::StarEqual, len = 2;
      } else {
        kind = Tok::Star;
      }
      break;
    case '/':
      if (c2 == '/') {
        if (c3 == '=')
          kind = Tok::DoubleSlashEqual, len = 3;
        else
          kind = Tok::DoubleSlash, len = 2;
      } else if (c2 == '=') {
        kind = Tok::SlashEqual, len = 2;
      } else {
        kind = Tok::Slash;
      }
      break;
    case '|':
      if (c2 == '=')
        kind = Tok::VBarEqual, len = 2;
      else
        kind = Tok::VBar;
      break;
    case '&':
      if (c2 == '=')
        kind = Tok::AmperEqual, len = 2;
      else
        kind = Tok::Amper;
      break;
    case '<':
      if (c2 == '<') {
        if (c3 == '=')
          kind = Tok::LeftShiftEqual, len = 3;
        else
          kind = Tok::LeftShift, len = 2;
      } else if (c2 == '=') {
        kind = Tok::LessEqual, len = 2;
      } else if (c2 == '>') {
        kind = Tok::NotEqual, len = 2;  // "<>": the parser rejects it
      } else {
        kind = Tok::Less;
      }
      break;
    case '>':
      if (c2 == '>') {
        if (c3 == '=')
          kind = Tok::RightShiftEqual, len = 3;
        else
          kind = Tok::RightShift, len = 2;
      } else if (c2 == '=') {
        kind = Tok::GreaterEqual, len = 2;
      } else {
        kind = Tok::Greater;
      }
      break;
    case '=':
      if (c2 == '=')
        kind = Tok::EqEqual, len = 2;
      else
        kind = Tok::Equal;
      break;
    case '!':
      if (c2 == '=')
        kind = Tok::NotEqual, len = 2;
      else
        kind = Tok::Exclamation;
      break;
    case '%':
      if (c2 == '=')
        kind = Tok::PercentEqual, len = 2;
      else
        kind = Tok::Percent;
      break;
    case '^':
      if (c2 == '=')
        kind = Tok::CircumflexEqual, len = 2;
      else
        kind = Tok::Circumflex;
      break;
    case '@':
      if (c2 == '=')
        kind = Tok::AtEqual, len = 2;
      else
        kind = Tok::At;
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        return error_cur(b + 1, format_u("invalid non-printable character U+%04X", c));
      }
      // '$', '?', '`': CPython makes an OP token the parser cannot use.
      kind = Tok::Unknown;
      break;
  }
  emit(kind, b, b + len);
  pos_ = b + len;
  return true;
}

}  // namespace

LexResult lex(const Source& source) {
  LexResult out;
  Lexer lexer(source, out);
  lexer.run();
  return out;
}

}  // namespace gm

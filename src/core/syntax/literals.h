// Decoding of literal tokens for the parser: string and bytes values,
// f-string literal text, numbers, and identifier normalisation.
//
// All functions are pure and never throw; errors come back as a
// LiteralError whose message is CPython's (3.12 wording), e.g.
//   "(unicode error) 'unicodeescape' codec can't decode bytes in position
//    0-2: truncated \xXX escape"
//   "bytes can only contain ASCII literal characters"
//   "(value error) invalid \x escape at position 0"
// CPython reports string errors at the string token (the parser's job).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gm::literals {

struct LiteralError {
  std::string message;
};

// A STRING (or FStringStart) token split into its parts.
struct StringParts {
  std::string_view prefix;  // "", "r", "Rb", "f", ...
  std::string_view body;    // between the quotes
  std::uint8_t flags = 0;   // TokenFlags: kPrefixRaw/Bytes/Unicode/Format, kTripleQuoted
  int quote_size = 1;
};
// `token` must be the full text of a String token (prefix, quotes, body).
StringParts split_string_token(std::string_view token);

// The value of a plain (non-f) string or bytes literal body. `flags` are the
// token's flags (kPrefixRaw, kPrefixBytes). Appends to `out`: for str the
// value as WTF-8 (lone surrogates from \ud800 as 3-byte sequences), for bytes
// the raw bytes. Newlines (CRLF, CR) inside the body become LF; `\` + newline
// is removed; invalid escapes like `\d` are kept as written.
std::optional<LiteralError> decode_body(std::string_view body, std::uint8_t flags,
                                        std::string& out);

// decode_body on a whole String token's text.
std::optional<LiteralError> decode_string(std::string_view token, std::string& out);

// The value of f-string literal text (one or more FStringMiddle tokens'
// source text). Same escapes as str (none when `raw`). With
// `collapse_braces`, "{{" and "}}" become "{" and "}" — needed when the text
// spans the source of several middles (the lexer's FStringMiddle tokens
// already exclude the second brace of a doubled pair).
std::optional<LiteralError> decode_fstring_middle(std::string_view text, bool raw, std::string& out,
                                                  bool collapse_braces = false);

// A NUMBER token's value.
struct Number {
  enum class Kind : std::uint8_t { Int, Float, Complex };
  Kind kind = Kind::Int;
  std::string digits;  // Int: decimal digits, no sign, no leading zeros ("0")
  double value = 0.0;  // Float: the value; Complex: the imaginary part
};
// Errors: a decimal int over 4300 digits (CPython's int_max_str_digits
// limit) gives CPython's "Exceeds the limit ..." message.
std::optional<LiteralError> parse_number(std::string_view text, Number& out);

// Identifier text as CPython stores it: NFKC when it has non-ASCII
// characters, else unchanged.
std::string normalize_identifier(std::string_view name);

}  // namespace gm::literals

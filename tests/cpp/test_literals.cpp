// Literal decoding: strings, bytes, f-string text, numbers, identifiers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "syntax/literals.h"
#include "syntax/token.h"
#include "syntax/unicode_printable.h"
#include "syntax/unicode_tables.h"

namespace gm::literals {
namespace {

std::string value(std::string_view token) {
  std::string out;
  auto e = decode_string(token, out);
  EXPECT_FALSE(e) << token << ": " << (e ? e->message : "");
  return out;
}

std::string error(std::string_view token) {
  std::string out;
  auto e = decode_string(token, out);
  EXPECT_TRUE(e) << token;
  return e ? e->message : "";
}

TEST(Literals, SplitToken) {
  StringParts p = split_string_token("Rb'''abc'''");
  EXPECT_EQ(p.prefix, "Rb");
  EXPECT_EQ(p.body, "abc");
  EXPECT_EQ(p.quote_size, 3);
  EXPECT_EQ(p.flags, kPrefixRaw | kPrefixBytes | kTripleQuoted);
  StringParts q = split_string_token("''");
  EXPECT_EQ(q.body, "");
  EXPECT_EQ(q.quote_size, 1);
  StringParts r = split_string_token("''''''");
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.quote_size, 3);
}

TEST(Literals, SimpleEscapes) {
  EXPECT_EQ(value(R"('a\nb\tc\\d\'e\"f')"), "a\nb\tc\\d'e\"f");
  EXPECT_EQ(value(R"('\a\b\f\v\r')"), "\a\b\f\v\r");
  EXPECT_EQ(value(R"('\0\12\101\777')"), std::string("\0\nA", 3) + "\xC7\xBF");
  EXPECT_EQ(value(R"('\x41\u00e9\U0001F600')"), "A\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(value("'a\\\nb'"), "ab");
  EXPECT_EQ(value("'a\\\r\nb'"), "ab");
  EXPECT_EQ(value("'''a\r\nb\rc'''"), "a\nb\nc");
  EXPECT_EQ(value("\"\"\"x\ny\"\"\""), "x\ny");
}

TEST(Literals, InvalidEscapesAreKept) {
  EXPECT_EQ(value(R"('\d\w\ ')"), "\\d\\w\\ ");
  EXPECT_EQ(value(R"('\é')"), "\\\xC3\xA9");
  EXPECT_EQ(value(R"(b'\N{DASH}\u1234')"), "\\N{DASH}\\u1234");
}

TEST(Literals, Surrogates) {
  // Lone surrogates are kept as WTF-8.
  EXPECT_EQ(value(R"('\ud800x')"), "\xED\xA0\x80x");
  EXPECT_EQ(value(R"('\udfff')"), "\xED\xBF\xBF");
}

TEST(Literals, NamedEscapes) {
  EXPECT_EQ(value(R"('\N{EM DASH}')"), "\xE2\x80\x94");
  EXPECT_EQ(value(R"('\N{latin small letter a}')"), "a");
  EXPECT_EQ(value(R"('\N{CJK UNIFIED IDEOGRAPH-4E00}')"), "\xE4\xB8\x80");
  EXPECT_EQ(value(R"('\N{HANGUL SYLLABLE GAG}')"), "\xEA\xB0\x81");
  EXPECT_EQ(value(R"('\N{BOM}')"), "\xEF\xBB\xBF");         // alias
  EXPECT_EQ(value(R"('\N{LINE FEED}')"), "\n");             // control alias
  EXPECT_EQ(value(R"('\N{GRINNING FACE}')"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(value(R"('\N{SPACE}\N{DIGIT ZERO}')"), " 0");
  char32_t cp = 0;
  EXPECT_TRUE(unicode::lookup_name("LATIN CAPITAL LETTER A", cp));
  EXPECT_EQ(cp, U'A');
  EXPECT_FALSE(unicode::lookup_name("NOT A CHARACTER NAME", cp));
  EXPECT_FALSE(unicode::lookup_name("CJK UNIFIED IDEOGRAPH-0041", cp));
}

TEST(Literals, StringErrors) {
  const std::string p = "(unicode error) 'unicodeescape' codec can't decode bytes in position ";
  EXPECT_EQ(error(R"('\x1')"), p + "0-2: truncated \\xXX escape");
  EXPECT_EQ(error(R"('\x')"), p + "0-1: truncated \\xXX escape");
  EXPECT_EQ(error(R"('ab\xZZ')"), p + "2-3: truncated \\xXX escape");
  EXPECT_EQ(error(R"('\u12')"), p + "0-3: truncated \\uXXXX escape");
  EXPECT_EQ(error(R"('ab\u12zz')"), p + "2-5: truncated \\uXXXX escape");
  EXPECT_EQ(error(R"('\U1234')"), p + "0-5: truncated \\UXXXXXXXX escape");
  EXPECT_EQ(error(R"('\U0011ffff')"), p + "0-9: illegal Unicode character");
  EXPECT_EQ(error(R"('\N{foo}')"), p + "0-6: unknown Unicode character name");
  EXPECT_EQ(error(R"('\N{LATIN SMALL LETTER A')"), p + "0-22: malformed \\N character escape");
  EXPECT_EQ(error(R"('\N')"), p + "0-1: malformed \\N character escape");
  EXPECT_EQ(error(R"('\Nx')"), p + "0-1: malformed \\N character escape");
  EXPECT_EQ(error(R"('\N{}')"), p + "0-2: malformed \\N character escape");
  // Named sequences are not characters.
  EXPECT_EQ(error(R"('\N{LATIN CAPITAL LETTER A WITH MACRON AND GRAVE}')"),
            p + "0-47: unknown Unicode character name");
  // Positions count a non-ASCII character as 10 (CPython's \U rewrite).
  EXPECT_EQ(error(R"('é\x1')"), p + "10-12: truncated \\xXX escape");
}

TEST(Literals, Raw) {
  EXPECT_EQ(value(R"(r'\n\x\N{foo}\'')"), "\\n\\x\\N{foo}\\'");
  EXPECT_EQ(value("r'a\\\r\nb'"), "a\\\nb");
  EXPECT_EQ(value("R'''a\r\nb'''"), "a\nb");
  EXPECT_EQ(value(R"(rb'\x\n')"), "\\x\\n");
}

TEST(Literals, Bytes) {
  EXPECT_EQ(value(R"(b'a\x00\xff\777\n')"), std::string("a\0\xFF\xFF\n", 5));
  EXPECT_EQ(error("b'\xC3\xA9'"), "bytes can only contain ASCII literal characters");
  EXPECT_EQ(error("rb'\xC3\xA9'"), "bytes can only contain ASCII literal characters");
  EXPECT_EQ(error(R"(b'\x1')"), "(value error) invalid \\x escape at position 0");
  EXPECT_EQ(error(R"(b'ab\xg0')"), "(value error) invalid \\x escape at position 2");
}

TEST(Literals, FStringMiddle) {
  std::string out;
  EXPECT_FALSE(decode_fstring_middle("a\\n{", false, out));
  EXPECT_EQ(out, "a\n{");
  out.clear();
  EXPECT_FALSE(decode_fstring_middle("a{{b}}c\\t", false, out, true));
  EXPECT_EQ(out, "a{b}c\t");
  out.clear();
  EXPECT_FALSE(decode_fstring_middle("a\\n{{", true, out, true));
  EXPECT_EQ(out, "a\\n{");
  out.clear();
  EXPECT_FALSE(decode_fstring_middle("\\N{EM DASH}", false, out));
  EXPECT_EQ(out, "\xE2\x80\x94");
  out.clear();
  auto e = decode_fstring_middle("\\x1", false, out);
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("truncated \\xXX escape"), std::string::npos);
}

Number num(std::string_view text) {
  Number n;
  auto e = parse_number(text, n);
  EXPECT_FALSE(e) << text;
  return n;
}

TEST(Literals, Integers) {
  EXPECT_EQ(num("0").digits, "0");
  EXPECT_EQ(num("000").digits, "0");
  EXPECT_EQ(num("0_0").digits, "0");
  EXPECT_EQ(num("1_000_000").digits, "1000000");
  EXPECT_EQ(num("0xff").digits, "255");
  EXPECT_EQ(num("0X_F_F").digits, "255");
  EXPECT_EQ(num("0o777").digits, "511");
  EXPECT_EQ(num("0b1010").digits, "10");
  EXPECT_EQ(num("0xffffffffffffffffffffffffffffffff").digits,
            "340282366920938463463374607431768211455");
  EXPECT_EQ(num("123456789012345678901234567890").digits, "123456789012345678901234567890");
  EXPECT_EQ(num("0b" + std::string(128, '1')).digits, "340282366920938463463374607431768211455");
  EXPECT_EQ(num("1_0").kind, Number::Kind::Int);
  EXPECT_EQ(num(std::string(4300, '9')).digits.size(), 4300u);
  Number n;
  auto e = parse_number(std::string(4301, '9'), n);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message,
            "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 "
            "digits; use sys.set_int_max_str_digits() to increase the limit - Consider "
            "hexadecimal for huge integer literals to avoid decimal conversion limits.");
  // Huge hex literals are fine.
  EXPECT_FALSE(parse_number("0x" + std::string(5000, 'f'), n));
}

TEST(Literals, Floats) {
  EXPECT_EQ(num("1.5").kind, Number::Kind::Float);
  EXPECT_EQ(num("1.5").value, 1.5);
  EXPECT_EQ(num("1.").value, 1.0);
  EXPECT_EQ(num(".5").value, 0.5);
  EXPECT_EQ(num("1e10").value, 1e10);
  EXPECT_EQ(num("1_0.0_1e-1_0").value, 10.01e-10);
  EXPECT_EQ(num("0.1").value, 0.1);
  EXPECT_EQ(num("1.7976931348623157e308").value, 1.7976931348623157e308);
  EXPECT_EQ(num("4.9e-324").value, 4.9e-324);
  EXPECT_TRUE(std::isinf(num("1e400").value));
  EXPECT_TRUE(std::isinf(num("1.8e308").value));
  EXPECT_EQ(num("1e-400").value, 0.0);
  EXPECT_EQ(num("0e0").value, 0.0);
  EXPECT_EQ(num("09.5").value, 9.5);
}

TEST(Literals, Imaginary) {
  Number n = num("1j");
  EXPECT_EQ(n.kind, Number::Kind::Complex);
  EXPECT_EQ(n.value, 1.0);
  EXPECT_EQ(num("1.5J").value, 1.5);
  EXPECT_EQ(num("1_0e1j").value, 100.0);
  EXPECT_EQ(num("09j").value, 9.0);
  EXPECT_TRUE(std::isinf(num("1e999j").value));
}

TEST(Literals, Identifiers) {
  EXPECT_EQ(normalize_identifier("abc"), "abc");
  EXPECT_EQ(normalize_identifier("\xEF\xAC\x81"), "fi");          // ﬁ
  EXPECT_EQ(normalize_identifier("e\xCC\x81"), "\xC3\xA9");       // e + U+0301 -> é
  EXPECT_EQ(normalize_identifier("\xE2\x84\x8C"), "H");           // ℌ
  EXPECT_EQ(normalize_identifier("\xC2\xB5"), "\xCE\xBC");        // µ -> μ
  EXPECT_EQ(normalize_identifier("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), "\xEA\xB0\x81");  // jamo
  EXPECT_EQ(normalize_identifier("\xEF\xBD\x81"), "a");  // fullwidth a
}

TEST(Unicode, Properties) {
  EXPECT_TRUE(unicode::is_xid_start(U'a'));
  EXPECT_TRUE(unicode::is_xid_start(U'\u00E9'));
  EXPECT_TRUE(unicode::is_xid_start(U'\u540D'));
  EXPECT_FALSE(unicode::is_xid_start(U'1'));
  EXPECT_FALSE(unicode::is_xid_start(U'\u0301'));
  EXPECT_TRUE(unicode::is_xid_continue(U'\u0301'));
  EXPECT_TRUE(unicode::is_xid_continue(U'\u00B7'));
  EXPECT_FALSE(unicode::is_xid_continue(U'\u20AC'));
  EXPECT_TRUE(unicode::is_printable(U'\u20AC', unicode::kNewestMinor));
  EXPECT_FALSE(unicode::is_printable(U'\u00A0', unicode::kNewestMinor));
  EXPECT_FALSE(unicode::is_printable(U'\uFEFF', unicode::kNewestMinor));
  EXPECT_TRUE(unicode::is_printable(U' ', unicode::kNewestMinor));
}

}  // namespace
}  // namespace gm::literals

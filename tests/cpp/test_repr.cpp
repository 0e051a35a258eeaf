// repr() of constants, byte for byte; expected values are CPython's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ast/repr.h"
#include "syntax/unicode_printable.h"

namespace {

using gm::ast::repr_bytes;
using gm::ast::repr_complex_imag;
using gm::ast::repr_float;
using gm::ast::repr_str;

TEST(Repr, StrQuotes) {
  EXPECT_EQ(repr_str("x", 11), "'x'");
  EXPECT_EQ(repr_str("", 11), "''");
  EXPECT_EQ(repr_str("'", 11), "\"'\"");
  EXPECT_EQ(repr_str("\"", 11), "'\"'");
  EXPECT_EQ(repr_str("'\"", 11), "'\\'\"'");
  EXPECT_EQ(repr_str("it's", 11), "\"it's\"");
  EXPECT_EQ(repr_str("\\", 11), "'\\\\'");
}

TEST(Repr, StrEscapes) {
  EXPECT_EQ(repr_str("\t\n\r", 11), "'\\t\\n\\r'");
  EXPECT_EQ(repr_str(std::string("\x00\x01\x1f\x7f", 4), 11), "'\\x00\\x01\\x1f\\x7f'");
  EXPECT_EQ(repr_str(" ~", 11), "' ~'");
  // U+0080..U+009F are Cc, U+00A0 is Zs, U+00AD is Cf: escaped as \xhh.
  EXPECT_EQ(repr_str("\xc2\x80\xc2\xa0\xc2\xad\xc3\xa9", 11), "'\\x80\\xa0\\xadé'");
  // U+2028 (Zl), U+200B (Cf), U+3000 (Zs), U+E000 (Co), U+FFFF (Cn)
  EXPECT_EQ(repr_str("\xe2\x80\xa8\xe2\x80\x8b\xe3\x80\x80\xee\x80\x80\xef\xbf\xbf", 11),
            "'\\u2028\\u200b\\u3000\\ue000\\uffff'");
  // U+E0001 (Cf), U+10FFFF (Cn), U+1F600 (printable emoji)
  EXPECT_EQ(repr_str("\xf3\xa0\x80\x81\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80", 11),
            "'\\U000e0001\\U0010ffff\xf0\x9f\x98\x80'");
}

TEST(Repr, LoneSurrogates) {
  // WTF-8: U+D800 = ED A0 80, U+DFFF = ED BF BF; each escaped on its own.
  EXPECT_EQ(repr_str("\xed\xa0\x80", 11), "'\\ud800'");
  EXPECT_EQ(repr_str("a\xed\xa0\xbd\xed\xb8\x80z", 13), "'a\\ud83d\\ude00z'");
}

TEST(Repr, PrintabilityFollowsEachVersionsUnicode) {
  // U+1F6DD (Unicode 14) printable from 3.11; U+1FAE8 (Unicode 15) from 3.12;
  // U+2FFC (Unicode 15.1) from 3.13; U+1FAD0 (Unicode 13) from 3.9.
  EXPECT_FALSE(gm::unicode::is_printable(0x1F6DD, 10));
  EXPECT_TRUE(gm::unicode::is_printable(0x1F6DD, 11));
  EXPECT_FALSE(gm::unicode::is_printable(0x1FAE8, 11));
  EXPECT_TRUE(gm::unicode::is_printable(0x1FAE8, 12));
  EXPECT_FALSE(gm::unicode::is_printable(0x2FFC, 12));
  EXPECT_TRUE(gm::unicode::is_printable(0x2FFC, 13));
  EXPECT_FALSE(gm::unicode::is_printable(0x1FAD0, 8));
  EXPECT_TRUE(gm::unicode::is_printable(0x1FAD0, 9));
  EXPECT_EQ(repr_str("\xf0\x9f\x9b\x9d", 10), "'\\U0001f6dd'");
  EXPECT_EQ(repr_str("\xf0\x9f\x9b\x9d", 11), "'\xf0\x9f\x9b\x9d'");
  EXPECT_TRUE(gm::unicode::is_printable(' ', 8));
  EXPECT_FALSE(gm::unicode::is_printable(0xD800, 13));
  EXPECT_STREQ(gm::unicode::unicode_version_for(13), "15.1.0");
}

TEST(Repr, Bytes) {
  EXPECT_EQ(repr_bytes(""), "b''");
  EXPECT_EQ(repr_bytes("abc"), "b'abc'");
  EXPECT_EQ(repr_bytes("'"), "b\"'\"");
  EXPECT_EQ(repr_bytes("'\""), "b'\\'\"'");
  EXPECT_EQ(repr_bytes(std::string("\x00\t\n\r\x7f\x80\xff\\", 8)),
            "b'\\x00\\t\\n\\r\\x7f\\x80\\xff\\\\'");
}

TEST(Repr, Float) {
  EXPECT_EQ(repr_float(1.0), "1.0");
  EXPECT_EQ(repr_float(0.0), "0.0");
  EXPECT_EQ(repr_float(-0.0), "-0.0");
  EXPECT_EQ(repr_float(0.1), "0.1");
  EXPECT_EQ(repr_float(2.5), "2.5");
  EXPECT_EQ(repr_float(1e16), "1e+16");
  EXPECT_EQ(repr_float(1e15), "1000000000000000.0");
  EXPECT_EQ(repr_float(1.5e16), "1.5e+16");
  EXPECT_EQ(repr_float(1234567890123456.7), "1234567890123456.8");
  EXPECT_EQ(repr_float(0.0001), "0.0001");
  EXPECT_EQ(repr_float(0.00001), "1e-05");
  EXPECT_EQ(repr_float(0.00012345), "0.00012345");
  EXPECT_EQ(repr_float(1.5e-5), "1.5e-05");
  EXPECT_EQ(repr_float(1e308), "1e+308");
  EXPECT_EQ(repr_float(5e-324), "5e-324");
  EXPECT_EQ(repr_float(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(repr_float(1e22), "1e+22");
  EXPECT_EQ(repr_float(123.456e-10), "1.23456e-08");
  EXPECT_EQ(repr_float(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(repr_float(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(repr_float(std::nan("")), "nan");
}

TEST(Repr, ComplexImaginary) {
  EXPECT_EQ(repr_complex_imag(1.0), "1j");
  EXPECT_EQ(repr_complex_imag(1.5), "1.5j");
  EXPECT_EQ(repr_complex_imag(0.0), "0j");
  EXPECT_EQ(repr_complex_imag(1e16), "1e+16j");
  EXPECT_EQ(repr_complex_imag(1e15), "1000000000000000j");
  EXPECT_EQ(repr_complex_imag(1e-5), "1e-05j");
  EXPECT_EQ(repr_complex_imag(std::numeric_limits<double>::infinity()), "infj");
}

}  // namespace

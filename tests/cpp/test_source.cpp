// Source decoding: BOM, PEP 263 cookies, UTF-8 validation, NUL bytes.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <variant>

#include "syntax/lexer.h"
#include "syntax/source.h"

namespace gm {
namespace {

Source ok(std::string bytes) {
  auto r = Source::decode(std::move(bytes));
  if (auto* e = std::get_if<SyntaxError>(&r)) {
    ADD_FAILURE() << "unexpected error: " << e->message;
    return Source();
  }
  return std::get<Source>(std::move(r));
}

SyntaxError err(std::string bytes) {
  auto r = Source::decode(std::move(bytes));
  if (auto* e = std::get_if<SyntaxError>(&r)) return *e;
  ADD_FAILURE() << "expected an error";
  return {};
}

TEST(Source, PlainUtf8) {
  Source s = ok("x = 'é'\n");
  EXPECT_EQ(s.text(), "x = 'é'\n");
  EXPECT_EQ(s.encoding(), "utf-8");
  EXPECT_FALSE(s.had_bom());
  EXPECT_EQ(s.body_offset(), 0u);
}

TEST(Source, Empty) {
  Source s = ok("");
  EXPECT_EQ(s.text(), "");
}

TEST(Source, BomIsSkipped) {
  Source s = ok("\xEF\xBB\xBFx = 1\n");
  EXPECT_TRUE(s.had_bom());
  EXPECT_EQ(s.body_offset(), 3u);
  EXPECT_EQ(s.text().substr(s.body_offset()), "x = 1\n");
  LexResult r = lex(s);
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.tokens[0].kind, Tok::Name);
  EXPECT_EQ(r.tokens[0].begin, 3u);
  EXPECT_EQ(r.lines.line_start(1), 3u);
}

TEST(Source, BomWithUtf8Cookie) {
  Source s = ok("\xEF\xBB\xBF# -*- coding: utf-8 -*-\nx = 1\n");
  EXPECT_EQ(s.encoding(), "utf-8");
}

TEST(Source, BomWithOtherCookie) {
  EXPECT_EQ(err("\xEF\xBB\xBF# coding: latin-1\nx=1\n").message,
            "encoding problem: iso-8859-1 with BOM");
  // "utf8" is not normalised by get_normal_name, as in CPython.
  EXPECT_EQ(err("\xEF\xBB\xBF# coding: utf8\nx=1\n").message, "encoding problem: utf8 with BOM");
}

TEST(Source, Latin1CookieTranscodes) {
  Source s = ok("# -*- coding: latin-1 -*-\nx = '\xE9'\n");
  EXPECT_EQ(s.encoding(), "latin-1");
  EXPECT_EQ(s.text(), "# -*- coding: latin-1 -*-\nx = '\xC3\xA9'\n");
  for (const char* name : {"latin1", "l1", "iso-8859-1", "ISO8859-1", "iso_8859_1", "latin",
                           "iso-latin-1", "latin-1-unix"}) {
    Source t = ok(std::string("# coding=") + name + "\nx = '\xE9'\n");
    EXPECT_EQ(t.encoding(), "latin-1") << name;
    EXPECT_NE(t.text().find("\xC3\xA9"), std::string_view::npos) << name;
  }
}

TEST(Source, Utf8CookieAliases) {
  for (const char* name : {"utf-8", "UTF-8", "utf8", "UTF_8", "utf-8-sig", "u8", "utf"}) {
    Source t = ok(std::string("# coding: ") + name + "\nx = 1\n");
    EXPECT_EQ(t.encoding(), "utf-8") << name;
  }
}

TEST(Source, CookieOnSecondLine) {
  Source s = ok("#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\nx='\xE9'\n");
  EXPECT_EQ(s.encoding(), "latin-1");
  // A blank first line also lets line 2 count.
  EXPECT_EQ(err("\n# coding: foo\n").message, "unknown encoding: foo");
  // After code on line 1, line 2 is not a cookie.
  Source t = ok("x = 1\n# coding: foo\n");
  EXPECT_EQ(t.encoding(), "utf-8");
  // Not a comment line: no cookie.
  Source u = ok("x = 1  # coding: foo\n");
  EXPECT_EQ(u.encoding(), "utf-8");
  // Whitespace before the comment is fine.
  EXPECT_EQ(err("  \t# coding: foo\n").message, "unknown encoding: foo");
  // Third line never counts.
  Source v = ok("#\n#\n# coding: foo\n");
  EXPECT_EQ(v.encoding(), "utf-8");
}

TEST(Source, UnknownEncoding) {
  EXPECT_EQ(err("# coding: foo\n").message, "unknown encoding: foo");
  EXPECT_EQ(err("# coding: foo\n").kind, "SyntaxError");
}

TEST(Source, AsciiCookie) {
  Source s = ok("# coding: ascii\nx = 1\n");
  EXPECT_EQ(s.encoding(), "ascii");
  EXPECT_EQ(err("# coding: ascii\n'\xC3\xA9'\n").message,
            "'ascii' codec can't decode byte 0xc3 in position 17: ordinal not in range(128)");
}

TEST(Source, SingleByteCodecs) {
  Source s = ok("# coding: cp1252\nx = '\x80'\n");
  EXPECT_EQ(s.encoding(), "cp1252");
  EXPECT_NE(s.text().find("\xE2\x82\xAC"), std::string_view::npos);  // U+20AC
  Source k = ok("# -*- coding: koi8-r -*-\nx = '\xC1'\n");
  EXPECT_EQ(k.encoding(), "koi8_r");
  EXPECT_NE(k.text().find("\xD0\xB0"), std::string_view::npos);  // U+0430
  EXPECT_EQ(err("# coding: cp1252\nx = '\x81'\n").message,
            "'charmap' codec can't decode byte 0x81 in position 22: character maps to "
            "<undefined>");
}

TEST(Source, InvalidUtf8) {
  SyntaxError e = err("a\nb\n\xFF\n");
  EXPECT_EQ(e.message,
            "(unicode error) 'utf-8' codec can't decode byte 0xff in position 0: invalid start "
            "byte");
  EXPECT_EQ(e.line, 3u);
  EXPECT_EQ(err("x = '\xC3'\n").message,
            "(unicode error) 'utf-8' codec can't decode byte 0xc3 in position 0: invalid "
            "continuation byte");
  EXPECT_EQ(err("x = '\xC3").message,
            "(unicode error) 'utf-8' codec can't decode byte 0xc3 in position 0: unexpected end "
            "of data");
  // Surrogates and overlongs are invalid.
  EXPECT_NE(err("x = '\xED\xA0\x80'\n").message.find("invalid continuation byte"),
            std::string::npos);
  EXPECT_NE(err("x = '\xC0\x80'\n").message.find("invalid start byte"), std::string::npos);
  EXPECT_NE(err("x = '\xF4\x90\x80\x80'\n").message.find("invalid continuation byte"),
            std::string::npos);
  EXPECT_NE(err("x = '\xF0\x9F\x98").message.find("bytes in position 0-2: unexpected end"),
            std::string::npos);
}

TEST(Source, NulBytes) {
  SyntaxError e = err(std::string("x = 1\ny = \0\n", 12));
  EXPECT_EQ(e.message, "source code cannot contain null bytes");
  EXPECT_EQ(e.line, 2u);
  auto r = Source::from_utf8(std::string("x\0", 2));
  ASSERT_TRUE(std::holds_alternative<SyntaxError>(r));
  EXPECT_EQ(std::get<SyntaxError>(r).message, "source code string cannot contain null bytes");
}

TEST(Source, FromUtf8KeepsBom) {
  // A str with a BOM: CPython reports the U+FEFF character.
  auto r = Source::from_utf8("\xEF\xBB\xBFx = 1\n");
  ASSERT_TRUE(std::holds_alternative<Source>(r));
  const Source& s = std::get<Source>(r);
  EXPECT_EQ(s.body_offset(), 0u);
  LexResult l = lex(s);
  ASSERT_TRUE(l.error);
  EXPECT_EQ(l.error->message, "invalid non-printable character U+FEFF");
}

TEST(Source, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  static const char kAlphabet[] =
      "\x00\x80\xC3\xA9\xEF\xBB\xBF\xFF\t\n\r\f \\'\"#{}()[]:!=fbru0x1e_.";
  const std::string alphabet(kAlphabet, sizeof kAlphabet - 1);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes;
    int len = static_cast<int>(rng() % 64);
    for (int i = 0; i < len; ++i) {
      if (rng() % 3 == 0) {
        bytes += static_cast<char>(rng() % 256);
      } else {
        bytes += alphabet[rng() % alphabet.size()];
      }
    }
    auto r = Source::decode(bytes);
    if (auto* s = std::get_if<Source>(&r)) {
      LexResult l = lex(*s);
      ASSERT_FALSE(l.tokens.empty());
      Tok last = l.tokens.back().kind;
      EXPECT_TRUE(last == Tok::EndMarker || last == Tok::Error);
      EXPECT_EQ(last == Tok::Error, l.error.has_value());
    }
  }
}

}  // namespace
}  // namespace gm

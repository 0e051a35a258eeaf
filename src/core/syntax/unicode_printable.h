// Which code points CPython 3.<minor> treats as printable
// (Py_UNICODE_ISPRINTABLE, i.e. str.isprintable()): everything except the
// categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than U+0020. repr(str)
// escapes the rest. The tables are generated per Unicode database version by
// scripts/gen_printable_table.py. (The lexer, which is version-independent,
// words its "invalid character" errors with the newest table.)
#pragma once

namespace gm::unicode {

bool is_printable(char32_t cp, int minor);
// The newest version with its own table (later minors use it too).
inline constexpr int kNewestMinor = 13;
// The Unicode database version CPython 3.<minor> ships ("15.1.0"), or "".
const char* unicode_version_for(int minor);

}  // namespace gm::unicode

#!/usr/bin/env python3
"""Tricky snippets for the differential harness: constants whose repr is
hard (floats, complex, big ints, every Unicode code point in str, every
byte in bytes, surrogates, quotes), 3.8's Index/ExtSlice, optional and empty
fields, every node kind of 3.8–3.13, deep nesting, non-ASCII positions.

    tricky.py [--out DIR] [differential.py options...]

writes one file per snippet into DIR (default: a temporary directory) and
runs differential.py over them (pass --check-dumper to test only the dumper;
without it the parser is tested too). Snippets that a version rejects simply
count as rejects there, so every version checks them all.
"""

from __future__ import annotations

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

SNIPPETS: dict[str, str] = {}


def snippet(name: str, text: str) -> None:
    SNIPPETS[name] = text


snippet("floats", "\n".join("x = %s" % f for f in [
    "1.0", "0.0", "1e16", "1e15", "1e17", "123456789012345678.0", "1234567890123456.0", "12345678901234567.0",
    "1.5e-5", "0.0001", "0.00001", "0.00012345", "1e-4", "1e-5", "1e308", "1.7976931348623157e308",
    "1e-320", "5e-324", "2.2250738585072014e-308", "1e400", "0.1", "0.3", "2.5", "1_000.5", "1e22", "1e23",
    "9007199254740993.0", "3.141592653589793", "100.", ".5", "1.e5", "0e0", "0.000", "1E+5", "6.02214076e23",
    "1e-7", "123.456e-10", "99999999999999999999.0", "1e16 - 1", "4.35", "1/3.0",
]) + "\n")
snippet("complex", "\n".join("x = %s" % f for f in [
    "1j", "1.5j", "1e16j", "1e15j", "1e400j", "0j", "0.0j", "1e-5j", "0.0001j", "1_0j", "10.J", "3.14e-10j",
    "1 + 2j", "-1j", "123456789012345678j",
]) + "\n")
snippet("ints", "\n".join("x = %s" % f for f in [
    "0", "1", "00", "0x7fffffff", "0xffffffffffffffffffffffff", "0o777", "0b1010", "1_000_000", "0O17",
    "0B1", "0XdeadBEEF", "2147483648", "9223372036854775808", "18446744073709551616",
    "1" + "0" * 300, "-5", "~5",
]) + "\n")
snippet("bigint_hex", "x = 0x" + "f" * 4000 + "\n")  # CPython cannot repr: skipped
snippet("bigint_dec_limit", "x = " + "9" * 4300 + "\n")
snippet("bigint_dec_over", "x = " + "9" * 4301 + "\n")  # a SyntaxError in every version
snippet("bytes_all", "x = b'" + "".join("\\x%02x" % b for b in range(256)) + "'\n"
        "y = b'\"'\nz = b\"'\"\nw = b'\\'\"'\nv = b''\nu = rb'\\d\\\\'\n")
snippet("str_quotes", "\n".join([
    "a = 'x'", "b = \"'\"", "c = '\"'", "d = '\\'\"'", "e = ''", "f = '\\\\'", "g = '\\t\\n\\r\\x00\\x1f\\x7f'",
    "h = r'\\n'", "i = u'unicode'", "j = U'x'", "k = '''multi\nline'''", "l = 'con' 'cat'", "m = 'a' u'b'",
    "n = u'a' 'b'", "o = '\\N{BULLET}'", "p = '\\u00e9t\\u00e9'", "q = 'été'", "r = '\\\ncontinued'",
]) + "\n")
snippet("str_surrogates", "a = '\\ud800'\nb = '\\udfff'\nc = '\\ud83d\\ude00'\nd = 'x\\udc80y'\n"
        "e = '\\U0001F600'\nf = '\U0001F600'\ng = '\\ud800\\U00010000'\n")
snippet("str_specials", "\n".join("x%d = '%s'" % (i, s) for i, s in enumerate([
    "\\x80\\x9f\\xa0\\xa1\\xad\\xff", "\\u00a0", "\\u1680", "\\u2000\\u200a\\u200b\\u200c\\u200d\\u200e",
    "\\u2028\\u2029", "\\u202f\\u205f\\u3000", "\\ue000\\uf8ff", "\\ufeff\\ufff9\\ufffd\\ufffe\\uffff",
    "\\U000e0001\\U000e007f\\U000e0100", "\\U000f0000\\U0010ffff", "\\U0001d173", "\\u0378", "\\u0600",
    "\\u061c", "\\u180e", "\\u0300a\\u0301", "\\u1f600",
])) + "\n")
# Every code point, as escapes, plane by plane (exhaustive check of the
# per-version printable tables; unassigned code points differ by version).
for plane in range(17):
    lines = []
    base = plane * 0x10000
    for row in range(0, 0x10000, 512):
        cps = range(base + row, base + row + 512)
        lines.append("s%05x = '%s'" % (row, "".join("\\U%08x" % c for c in cps)))
    snippet("codepoints_plane%02d" % plane, "\n".join(lines) + "\n")

snippet("identifiers", "é = 1\nℌ = 2\nﬁ = 3\nΩ = ω = 4\n_x1 = 5\nclass Ça: pass\ndef ŝ(ŷ): return ŷ\n"
        "import os as ö\nfrom x import y as ẑ\n")
snippet("positions_unicode", "x = 'éé' + f(ü, 'Ω'); y = [ 'ï' , 'ö' ]\nz = \"𝒳\" + ab\n")

snippet("subscripts", "\n".join([
    "x[1]", "x[1:2]", "x[1:2, 3]", "x[1:2,]", "x[...]", "x[:, None]", "x[::2]", "x[a, b]", "x[(a, b)]",
    "x[()]", "x[1:2, ::3, ...]", "x[a:b:c]", "x[:]", "x[::]", "x[(1, 2), 3:4]", "x[a][b:c][d, e:f]",
    "x[1:2] = y", "del x[a, 1:]", "x[y:=1]", "x[[1,2]]", "x[{1}]", "x[lambda: 1]", "x[-1:]",
    "x[1:2, 3][4]", "x[x[1:2]:x[3, 4:5]]",
]) + "\n")
snippet("subscripts_311", "x[*a]\nx[*a, b]\nx[1:2, *a]\n")

snippet("statements_38", '''
import a, b.c as d
from . import x
from ..m import (y as z, w)
from m import *
global g
def f(a, b=1, *args, c, d=2, **kw) -> int:
    """doc"""
    nonlocal q
    return
def g(a, /, b, *, c): pass
async def h():
    await x
    async for i in y: pass
    async with a as b, c: pass
    return [i async for i in y]
@dec
@dec.attr(1)
class C(B, metaclass=M, **kw):
    x: int
    y: int = 1
    (z): int
    a.b: int
    def m(self): yield; yield 1; yield from x
while x:
    break
else:
    continue
for a, (b, c) in d: pass
else: pass
if a: pass
elif b: pass
else: pass
with a as (b, c), d: pass
try: pass
except E as e: pass
except (A, B): pass
except: pass
else: pass
finally: pass
raise
raise E
raise E from c
assert x
assert x, "msg"
del a, b[1], c.d
x = y = z
x += 1; x -= 1; x *= 1; x @= 1; x /= 1; x %= 1; x **= 1; x <<= 1; x >>= 1; x |= 1; x ^= 1; x &= 1; x //= 1
a, *b = c
[a, b] = c
x = a if b else c
x = lambda: 0
x = lambda a, *b, c=1, **d: 0
x = lambda a, /, b: 0
x = (y := 5)
x = not a and b or c
x = -a + +b - ~c
x = a < b <= c > d >= e == f != g is h is not i in j not in k
x = a | b ^ c & d << e >> f + g - h * i @ j / k % l // m ** n
x = {1: 2, **d, 3: 4}
x = {1, 2, *s}
x = [1, *l]
x = (1, *t)
x = ()
x = {}
x = [a for b in c if d if e for f in g]
x = {a for b in c}
x = {a: b for c in d}
x = (a for b in c)
x = f(a, *b, c=d, **e)
x = f(a for a in b)
x = f'{a}'
x = f'{a!r:>{w}} {b!s} {c!a} {d=} {{}}'
x = f'a' 'b' f'{c}'
x = f"{'nested'}"
x = a.b.c
x = ...
x = None, True, False
print(*a, sep='')
''')
snippet("statements_310", '''
match x:
    case 1 | 2: pass
    case None: pass
    case True: pass
    case "s" | b"b" | -1 | 1+2j | -1-2j: pass
    case [a, *rest]: pass
    case [*_]: pass
    case (a, b): pass
    case {"k": v, **rest}: pass
    case {}: pass
    case Point(x=0, y=yy) as p: pass
    case Point(1, 2): pass
    case a.b.c: pass
    case _ if cond: pass
    case (1 as one) | (2 as one): pass
with (a as b, c as d): pass
with (a, b): pass
''')
snippet("statements_311", '''
try: pass
except* E: pass
except* (A, B) as e: pass
def f(*args: *Ts): pass
''')
snippet("statements_312", '''
type X = int
type Y[T] = list[T]
def f[T, *Ts, **P](x: T) -> T: pass
class C[T: int, U: (str, bytes)]: pass
x = f"{'a' + f"{b}"}"
x = f"{x
}"
''')
snippet("statements_313", '''
type X[T = int] = T
def f[T: int = bool, *Ts = *tuple[int], **P = [int]](): pass
class C[T = str]: pass
''')
snippet("empty_and_none", '''
def f(): pass
class C: pass
f()
lambda: 0
def g(*, a, b=1): pass
def h(*, a=None): pass
return_ = None
x = [None]
try:
    pass
finally:
    pass
''')
snippet("deep_nesting", "x = " + "(" * 150 + "1" + ")" * 150 + "\n" + "y = " + "[" * 90 + "]" * 90 + "\n")
snippet("long_chain", "x = " + " + ".join(["a"] * 3000) + "\n")
snippet("crlf", "x = 1\r\nif x:\r\n    y = 'a\\\r\nb'\r\n")
snippet("bom", "\ufeffx = 'bom'\n")
snippet("latin1_cookie", "# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n")
snippet("tabs", "if x:\n\ty = 1\n\tif z:\n\t\tw = 2\n")
# `<>`: rejected by every CPython 3 in a file, even after the Barry future
# import (only a compile flag enables it); `!=` stays valid there.
snippet("ne_py2", "x = 1 <> 2\n")
snippet("ne_barry_rejected", "from __future__ import barry_as_FLUFL\nx = (1 <>\n 2)\n")
snippet("ne_barry_bang", "from __future__ import barry_as_FLUFL\nx = 1 != 2\n")
snippet("type_comments", "def f(a):  # type: (int) -> int\n    x = 1  # type: int\n    return x\n")


def write_snippets(out: str) -> list[str]:
    os.makedirs(out, exist_ok=True)
    paths = []
    for name, text in SNIPPETS.items():
        p = os.path.join(out, name + ".py")
        enc = "latin-1" if "latin1" in name else "utf-8"
        with open(p, "wb") as f:
            f.write(text.encode(enc, "surrogatepass"))
        paths.append(p)
    return paths


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = None
    if "--out" in argv:
        i = argv.index("--out")
        out = argv[i + 1]
        del argv[i:i + 2]
    out = out or tempfile.mkdtemp(prefix="gm-tricky-")
    write_snippets(out)
    sys.path.insert(0, HERE)
    import differential
    return differential.main(["--paths", out, "--no-cache", "--detail-limit", "1000"] + argv)


if __name__ == "__main__":
    sys.exit(main())


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

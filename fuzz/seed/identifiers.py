é = 1
ℌ = 2
ﬁ = 3
Ω = ω = 4
_x1 = 5
class Ça: pass
def ŝ(ŷ): return ŷ
import os as ö
from x import y as ẑ

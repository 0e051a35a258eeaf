
type X[T = int] = T
def f[T: int = bool, *Ts = *tuple[int], **P = [int]](): pass
class C[T = str]: pass

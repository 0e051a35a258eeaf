
type X = int
type Y[T] = list[T]
def f[T, *Ts, **P](x: T) -> T: pass
class C[T: int, U: (str, bytes)]: pass
x = f"{'a' + f"{b}"}"
x = f"{x
}"

def f(a):  # type: (int) -> int
    x = 1  # type: int
    return x

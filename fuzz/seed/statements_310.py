
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

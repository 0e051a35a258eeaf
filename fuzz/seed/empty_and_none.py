
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

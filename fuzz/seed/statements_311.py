
try: pass
except* E: pass
except* (A, B) as e: pass
def f(*args: *Ts): pass

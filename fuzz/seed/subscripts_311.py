x[*a]
x[*a, b]
x[1:2, *a]

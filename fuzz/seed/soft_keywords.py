match = 1
case = 2
type = 3
match(x)

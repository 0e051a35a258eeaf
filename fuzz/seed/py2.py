print "py2"
exec "x"

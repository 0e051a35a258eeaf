# -*- coding: latin-1 -*-
x = 'café'

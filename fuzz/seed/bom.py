x = 'bom'

Route #1: 1 2
Route #2: 3 4
Cost 40

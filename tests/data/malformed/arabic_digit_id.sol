Route #1: 1 2
Route #2: 3 4
Route #3: ٥
Cost 52

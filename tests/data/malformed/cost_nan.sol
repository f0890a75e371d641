Route #1: 1 2
Route #2: 3 4
Route #3: 5
Cost nan

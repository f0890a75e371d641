Route #1: 1 2
Route #2: 3 99999999999999999999
Route #3: 5
Cost 52

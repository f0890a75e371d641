Route #1: 1 2
Route #2: 3 4
this line is not a route
Route #3: 5
Cost 52

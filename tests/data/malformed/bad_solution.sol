Route #1: 1 two 3
Cost 10

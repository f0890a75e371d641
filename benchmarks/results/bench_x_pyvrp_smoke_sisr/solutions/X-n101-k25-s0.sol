# written by routecli
Route #1: 86 54 68
Route #2: 4 18
Route #3: 35 46
Route #4: 65 49 6 37 72 57
Route #5: 8 17
Route #6: 55 9 92
Route #7: 25 10 39
Route #8: 14 28 42 78
Route #9: 15 22 41 20
Route #10: 74 69 16 76
Route #11: 12 58
Route #12: 19 97 27
Route #13: 21 61 23
Route #14: 24 31 32
Route #15: 38 47 26 48 96
Route #16: 7 2 45 43 29 36 87
Route #17: 30 85 11 79
Route #18: 95 73 53 33 50
Route #19: 34 64 3 94 56
Route #20: 80 77 63
Route #21: 83 51 81
Route #22: 91 52 100
Route #23: 59 60 82
Route #24: 66 84 90 13
Route #25: 40 67 88 44
Route #26: 70 1 5
Route #27: 75 93
Route #28: 89 98 99 62 71
Cost 28643

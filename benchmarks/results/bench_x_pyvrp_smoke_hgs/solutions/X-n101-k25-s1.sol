# written by routecli
Route #1: 80 94 56 21
Route #2: 38 47 26 48 96
Route #3: 75 93
Route #4: 67 77 44
Route #5: 50 79
Route #6: 14 28 42 63
Route #7: 69 16 92
Route #8: 17 8
Route #9: 40 59 3 64 34
Route #10: 27 97 19
Route #11: 9 90 84 66
Route #12: 7 2 49 6 78 65
Route #13: 22 70 1
Route #14: 71 62 99 98 89
Route #15: 46 24 31 32
Route #16: 95 73 53 33 30
Route #17: 4 18
Route #18: 82 72 57 60 88
Route #19: 39 10 25
Route #20: 52 91 11 85
Route #21: 86 54 68
Route #22: 23 61 100
Route #23: 37 29 36 45 43 87
Route #24: 83 51 81
Route #25: 13 74 55 76
Route #26: 35 20 41 15
Route #27: 58 12 5
Cost 28169

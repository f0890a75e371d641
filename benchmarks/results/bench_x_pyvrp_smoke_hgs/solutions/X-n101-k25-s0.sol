# written by routecli
Route #1: 7 2 45 49 6 28
Route #2: 18 4
Route #3: 56 26 48 47 38
Route #4: 46 31 24
Route #5: 22 70 1
Route #6: 40 67 59
Route #7: 89 98 99 62 71
Route #8: 86 54 68
Route #9: 61 23 50
Route #10: 87 43 29 36 37 72
Route #11: 52 27 21
Route #12: 100 94 8
Route #13: 83 51 81
Route #14: 97 91 19
Route #15: 35 20 41 15
Route #16: 79 11 85 30
Route #17: 75 93
Route #18: 5 12 58
Route #19: 13 90 84 66
Route #20: 74 69 16 76
Route #21: 63 10 39
Route #22: 33 53 73 95 32
Route #23: 17 80
Route #24: 44 82 57 60
Route #25: 34 64 3 96 88 77
Route #26: 25 65 78 42 14
Route #27: 92 9 55
Cost 28104

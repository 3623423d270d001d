from stats import mean

assert mean([1, 2]) == 1.5, mean([1, 2])
assert mean([4]) == 4
print("ok")

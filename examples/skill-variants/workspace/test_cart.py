from cart import total

assert total([1250, 5, 100]) == 1355, total([1250, 5, 100])
assert total([]) == 0
print("ok")

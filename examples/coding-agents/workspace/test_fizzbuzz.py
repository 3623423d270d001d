from fizzbuzz import fizzbuzz

assert fizzbuzz(5) == ["1", "2", "Fizz", "4", "Buzz"], fizzbuzz(5)
assert fizzbuzz(15)[-1] == "FizzBuzz"
print("ok")

from prices import parse_price

assert parse_price("12.50") == 1250, parse_price("12.50")
assert isinstance(parse_price("0.10"), int), type(parse_price("0.10"))
print("ok")

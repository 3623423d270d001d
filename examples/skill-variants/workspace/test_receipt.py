from receipt import format_price

assert format_price(1250) == "12.50 EUR", format_price(1250)
assert format_price(5) == "0.05 EUR", format_price(5)
print("ok")

from slug import slugify

assert slugify("Hello, World!") == "hello-world"
assert slugify("  Evals 4 agents ") == "evals-4-agents"
print("ok")

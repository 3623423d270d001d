"""A deterministic cli agent: `echo` answers with the prompt, `upper` with it upper-cased,
`fail` exits 1."""

import json
import sys

mode, prompt, output_file = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "fail":
    sys.exit("this agent always fails")
answer = prompt.upper() if mode == "upper" else f"you said: {prompt}"
with open(output_file, "w") as handle:
    json.dump({"text": answer}, handle)

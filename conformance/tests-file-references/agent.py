"""A deterministic agent that repeats its prompt: `agent.py PROMPT_FILE OUTPUT_FILE`."""

import json
import sys

prompt_file, output_file = sys.argv[1:3]
prompt = open(prompt_file, encoding="utf-8").read().strip()
with open(output_file, "w", encoding="utf-8") as out:
    json.dump({"text": prompt}, out)

"""A deterministic cli agent: answers each turn from its text alone (AgentV sends no history)."""

import json
import sys

prompt, output_file = sys.argv[1], sys.argv[2]
answers = {"ping": "pong", "colour?": "The sky is blue."}
with open(output_file, "w") as handle:
    json.dump({"text": answers.get(prompt.strip(), f"echo: {prompt}")}, handle)

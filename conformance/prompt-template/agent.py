"""A deterministic cli agent: a fixed answer per question."""

import json
import sys

prompt, output_file = sys.argv[1], sys.argv[2]
answers = {
    "capital": "The capital of France is Paris.",
    "TypeScript": "TypeScript adds static types and better editor support.",
    "async": "Async/await is syntax over Promises.",
}
answer = next((text for key, text in answers.items() if key in prompt), "I cannot help.")
with open(output_file, "w") as handle:
    json.dump({"text": answer}, handle)

"""A deterministic agent: fails (exit 3) for tests whose id starts with `broken`, otherwise
answers `done <id>`. Called as `agent.py PROMPT_FILE OUTPUT_FILE EVAL_ID`."""

import json
import sys

prompt_file, output_file, eval_id = sys.argv[1:4]
if eval_id.startswith("broken"):
    print(f"agent: {eval_id} cannot be done", file=sys.stderr)
    sys.exit(3)
with open(output_file, "w", encoding="utf-8") as out:
    json.dump({"text": f"done {eval_id}"}, out)

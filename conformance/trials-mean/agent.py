"""A deterministic agent whose answer depends on how many times it has run for a test (its
trial, counted in `.calls/<id>` next to this file: AgentV's {ATTEMPT} is a retry counter, 0 for
every trial). Test `late` is right from the 2nd run, `partial` half right until its 4th run,
`never` never right. Each run reports a cost of $0.01. `agent.py PROMPT_FILE OUTPUT_FILE ID`."""

import json
import sys
from pathlib import Path

prompt_file, output_file, eval_id = sys.argv[1:4]
counter = Path(__file__).parent / ".calls" / eval_id
counter.parent.mkdir(exist_ok=True)
run = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(run + 1))
right = {"late": run >= 1, "partial": run >= 3, "never": False}.get(eval_id, True)
words = "alpha beta" if right else ("alpha" if eval_id == "partial" else "nothing")
with open(output_file, "w", encoding="utf-8") as out:
    json.dump({"text": words, "cost_usd": 0.01}, out)

"""A deterministic agent that reports a cost of $0.02 a run: `agent.py PROMPT_FILE OUTPUT_FILE`."""

import json
import sys
from pathlib import Path

prompt_file, output_file = sys.argv[1:3]
Path(output_file).write_text(json.dumps({"text": "done", "cost_usd": 0.02}), encoding="utf-8")

"""A deterministic agent that repeats its prompt: `agent.py PROMPT_FILE OUTPUT_FILE`."""

import json
import sys
from pathlib import Path

prompt_file, output_file = sys.argv[1:3]
prompt = Path(prompt_file).read_text(encoding="utf-8").strip()
Path(output_file).write_text(json.dumps({"text": prompt}), encoding="utf-8")

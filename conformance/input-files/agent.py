"""A deterministic agent that repeats its prompt with the file references reduced to file names:
`agent.py PROMPT_FILE OUTPUT_FILE` (the absolute paths differ between runs)."""

import json
import re
import sys
from pathlib import Path

prompt_file, output_file = sys.argv[1:3]
prompt = Path(prompt_file).read_text(encoding="utf-8").strip()
prompt = re.sub(r'<file: path="[^"]*/([^"/]+)">', r"[file \1]", prompt)
Path(output_file).write_text(json.dumps({"text": prompt}), encoding="utf-8")

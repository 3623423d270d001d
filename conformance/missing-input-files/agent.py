"""A deterministic agent that says what it was given: `agent.py PROMPT_FILE OUTPUT_FILE FILES...`.

Its answer is two lines: `FILES=` the arguments after the output file, each reduced to its file
name (the absolute paths differ between runs) and joined by `|`; `PROMPT=` the prompt with each
file reference reduced the same way.
"""

import json
import re
import sys
from pathlib import Path

prompt_file, output_file, *files = sys.argv[1:]
prompt = Path(prompt_file).read_text(encoding="utf-8").strip()
prompt = re.sub(r'<file: path="[^"]*/([^"/]+)">', r"[file \1]", prompt).replace("\n", " ")
names = [name if name.startswith("--") else Path(name).name for name in files]
answer = f"FILES={'|'.join(names)}\nPROMPT={prompt}"
Path(output_file).write_text(json.dumps({"text": answer}), encoding="utf-8")

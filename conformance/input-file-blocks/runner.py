"""A batch runner that says what it was given: `runner.py EVAL_FILE OUTPUT_FILE FILES...`.

One JSONL record per test of the eval file, each answering `FILES=` the file names of every
argument after the output file, joined by `|` (one invocation gets every test's files).
"""

import json
import sys
from pathlib import Path

import yaml

eval_file, output_file, *files = sys.argv[1:]
names = "|".join(Path(name).name for name in files)
tests = yaml.safe_load(Path(eval_file).read_text(encoding="utf-8"))["tests"]
with open(output_file, "w", encoding="utf-8") as out:
    for test in tests:
        out.write(json.dumps({"id": test["id"], "text": f"FILES={names}\nPROMPT=batch"}) + "\n")

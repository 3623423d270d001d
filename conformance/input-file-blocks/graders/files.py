"""Checks a test's input files three ways, one assertion each (score = the share that pass):
the payload's `input_files` are absolute and, by file name, exactly `expect` (in order, repeats
kept); the agent's `FILES=` line names each of them; a per-test agent got each file once, in
order (a batch runner gets every test's files, so it only has to include them); and only the
`formatted` target's files came through its files_format (`--file={basename}`).
"""

import json
import sys
from pathlib import Path

payload = json.load(sys.stdin)
config = payload.get("config") or {}
expected = config["expect"]
files = payload["input_files"]
output = payload["output"]
if output is None and payload.get("output_path"):
    output = Path(payload["output_path"]).read_text(encoding="utf-8")
answer = output if isinstance(output, str) else json.dumps(output)
line = next((ln for ln in answer.splitlines() if ln.startswith("FILES=")), "FILES=")
raw = [name for name in line.removeprefix("FILES=").split("|") if name]
given = [name.removeprefix("--file=") for name in raw]
trace = payload.get("trace")
if trace is None and payload.get("trace_path"):
    trace = json.loads(Path(payload["trace_path"]).read_text(encoding="utf-8"))
target = ((trace or {}).get("metadata") or {}).get("target")
names = [Path(f).name for f in files]
once = list(dict.fromkeys(names))
batch = answer.endswith("PROMPT=batch")
checks = [
    ("input_files are absolute", all(Path(f).is_absolute() for f in files)),
    (f"input_files are {expected}", names == expected),
    ("the agent got every input file", set(names) <= set(given)),
    ("each file once, in order", batch or given == once),
    ("files_format applied", all(n.startswith("--file=") == (target == "formatted") for n in raw)),
]
print(
    json.dumps(
        {
            "score": sum(ok for _, ok in checks) / len(checks),
            "assertions": [{"text": f"{text}: {given}", "passed": ok} for text, ok in checks],
        }
    )
)

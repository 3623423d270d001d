"""Checks that input files which do not exist were left out everywhere, one assertion each (score
= the share that pass): the payload's `input_files` are, by file name, exactly `expect`; the agent's
`FILES=` line names exactly them; its prompt refers to each of them; and no name in `absent`
appears in the prompt, the payload's input messages or its expected output.
"""

import json
import sys
from pathlib import Path

payload = json.load(sys.stdin)
config = payload.get("config") or {}
expected = config["expect"]
absent = config["absent"]
output = payload["output"]
if output is None and payload.get("output_path"):
    output = Path(payload["output_path"]).read_text(encoding="utf-8")
answer = output if isinstance(output, str) else json.dumps(output)
lines = answer.splitlines()
files_line = next((ln for ln in lines if ln.startswith("FILES=")), "FILES=")
prompt = next((ln for ln in lines if ln.startswith("PROMPT=")), "PROMPT=")
given = [name for name in files_line.removeprefix("FILES=").split("|") if name]
names = [Path(f).name for f in payload["input_files"]]
messages = json.dumps([payload.get("input"), payload.get("expected_output")])
checks = [
    (f"input_files are {expected}: {names}", names == expected),
    (f"the agent got {expected}: {given}", given == expected),
    ("the prompt refers to each file", all(f"[file {n}]" in prompt for n in expected)),
    (f"{absent} left out of the prompt", not any(n in prompt for n in absent)),
    (f"{absent} left out of the grader's messages", not any(n in messages for n in absent)),
]
print(
    json.dumps(
        {
            "score": sum(ok for _, ok in checks) / len(checks),
            "assertions": [{"text": text, "passed": ok} for text, ok in checks],
        }
    )
)

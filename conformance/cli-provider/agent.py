"""A deterministic stand-in agent for AgentV's `cli` provider contract.

Called as `agent.py MODE PROMPT_FILE OUTPUT_FILE EVAL_ID`: MODE picks the output-file shape.
"""

import json
import sys
from pathlib import Path

mode, prompt_file, output_file, eval_id = sys.argv[1:5]
prompt = Path(prompt_file).read_text(encoding="utf-8")

if mode == "crash":
    print("agent: cannot reach the model", file=sys.stderr)
    sys.exit(3)

if mode == "text":
    record = {"text": f"{eval_id}: {prompt.strip().upper()}"}
elif mode == "messages":
    record = {
        "output": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"tool": "Read", "input": {"file_path": "notes.txt"}, "output": "42"},
                    {"tool": "Bash", "input": {"command": "echo 42"}, "output": "42"},
                ],
            },
            {"role": "assistant", "content": f"The answer to {eval_id} is 42."},
        ],
        "token_usage": {"input": 120, "output": 30},
        "cost_usd": 0.0042,
        "duration_ms": 1500,
    }
elif mode == "not-json":
    Path(output_file).write_text("plain words, not JSON: 42\n", encoding="utf-8")
    sys.exit(0)
else:
    raise SystemExit(f"unknown mode {mode}")

Path(output_file).write_text(json.dumps(record), encoding="utf-8")

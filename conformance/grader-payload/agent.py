"""A deterministic stand-in agent: tool calls with timings, usage and cost, or plain text.

Called as `agent.py MODE PROMPT_FILE OUTPUT_FILE EVAL_ID`. The `long-answer` test gets a final
answer over 50,000 JSON characters; `long-session` gets tool outputs that make the transcript
over 50,000 characters while the answer stays short.
"""

import json
import sys

mode, prompt_file, output_file, eval_id = sys.argv[1:5]
with open(prompt_file, encoding="utf-8") as file:
    prompt = file.read()
padding = "x" * 60_000 if eval_id == "long-answer" else ""
tool_output = "line of file contents\n" * 3_000 if eval_id == "long-session" else "42"

if mode == "text":
    record = {"text": f"{eval_id}: {prompt.strip()[:40]} 42 {padding}"}
else:
    record = {
        "output": [
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "tool": "Read",
                        "input": {"filePath": "notes.txt"},
                        "output": tool_output,
                        "id": "call-1",
                        "start_time": "2025-01-15T10:30:00.000Z",
                        "end_time": "2025-01-15T10:30:01.500Z",
                        "duration_ms": 1500,
                    },
                    {
                        "tool": "Bash",
                        "input": {"command": "echo 42"},
                        "output": {"stdout": "42", "exitCode": 0},
                        "id": "call-2",
                    },
                ],
            },
            {"role": "tool", "name": "Bash", "content": "42"},
            {"role": "assistant", "content": f"The answer to {eval_id} is 42. {padding}"},
        ],
        "token_usage": {"input": 120, "output": 30, "cached": 5},
        "cost_usd": 0.0042,
        "duration_ms": 1500,
    }
with open(output_file, "w", encoding="utf-8") as out:
    json.dump(record, out)

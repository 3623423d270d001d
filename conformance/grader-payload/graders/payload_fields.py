"""A raw AgentV grader (no helper): one check per payload field, score = the share that pass.

Each check states what agentv 4.42.4 sends, so the score is equal under both tools only when the
payloads agree. A transcript evals-pipeline sent by file (`messages` left out) is read from
`messages_json_path` (and `trace` from `trace_path`): the documented way a raw grader reads a
long session.
"""

import json
import re
import sys


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


p = json.load(sys.stdin)
messages = p["messages"] if "messages" in p else load(p["messages_json_path"])
trace = p["trace"] if p["trace"] is not None or "trace_path" not in p else load(p["trace_path"])
output = p["output"] if p["output"] is not None else load(p["output_path"])
config = p["config"] or {}
agent_turns = [m for m in messages if m["role"] in ("assistant", "tool")]
calls = [c for m in messages for c in m.get("tool_calls", [])]
summary = p["trace_summary"]
camel = re.compile(r"[a-z][A-Z]")


def keys(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys(item)


checks = {
    "criteria is the test's": bool(p["criteria"]),
    "output is the last assistant turn": output.startswith(messages[-1]["content"][:40]),
    "output goes by file over 50,000 chars": (p["output"] is None)
    == (len(json.dumps(output, separators=(",", ":"))) > 50_000),
    "the transcript starts with the input": messages[0]["role"] in ("system", "user"),
    "the input turn is the prompt AgentV built": "six times seven" in messages[0]["content"]
    or "six times seven" in messages[1]["content"]
    or p["input"][0]["content"] in messages[0]["content"],
    "input file blocks are AgentV's": all(
        set(block) == {"type", "value", "path", "text", "resolved_path"}
        for m in p["input"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block["type"] == "file"
    ),
    "input_files are the file blocks' paths": p["input_files"]
    == [
        block["resolved_path"]
        for m in p["input"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block["type"] == "file"
    ],
    "no camelCase key anywhere": not any(
        camel.search(k) and not k[0].isupper() for k in keys({**p, "trace": trace})
    ),
    "expected_output messages carry no empty tool_calls": all(
        m.get("tool_calls") != [] for m in p["expected_output"]
    ),
    "event_count counts tool calls": summary["event_count"] == len(calls),
    "tool_calls per tool": summary["tool_calls"] in ({}, {"Read": 1, "Bash": 1}),
    "error_count is 0": summary["error_count"] == 0,
    "llm_call_count counts assistant turns": summary["llm_call_count"]
    == sum(1 for m in agent_turns if m["role"] == "assistant"),
    "tool_durations are lists": all(
        isinstance(v, list) for v in summary.get("tool_durations", {}).values()
    ),
    "trace repeats the summary": all(trace[k] == v for k, v in summary.items()),
    "trace.messages is messages": trace["messages"] == messages,
    "trace events end with the final response": trace["events"][-1]["type"] == "final_response"
    and trace["events"][-1]["message"]["content"] == output,
    "trace metadata names the case": trace["metadata"]["eval_case_id"]
    in ("conversation", "long-answer", "long-session"),
    "times are ISO or null": all(
        t is None or re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t)
        for t in (p["start_time"], p["end_time"])
    ),
    "cli span comes from tool call times": p["start_time"] in (None, "2025-01-15T10:30:00.000Z"),
    "token_usage as reported": p["token_usage"]
    in (None, {"input": 120, "output": 30, "cached": 5}),
    "config null when empty, else snake_case": p["config"] is None
    or "expected_tools" in p["config"],
}
passed = [name for name, ok in checks.items() if ok]
print(
    json.dumps(
        {
            "score": len(passed) / len(checks),
            "assertions": [{"text": name, "passed": ok} for name, ok in checks.items()],
        }
    )
)

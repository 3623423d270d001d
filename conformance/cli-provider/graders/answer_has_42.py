"""Scores from the payload AgentV's contract promises: output text and token usage."""

import json
import sys

payload = json.load(sys.stdin)
output = payload.get("output") or ""
usage = payload.get("token_usage") or {}
checks = [
    {"text": "answer mentions 42", "passed": "42" in output},
    {"text": "token usage reported", "passed": bool(usage.get("input"))},
]
print(json.dumps({"score": sum(c["passed"] for c in checks) / len(checks), "assertions": checks}))

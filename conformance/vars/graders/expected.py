"""Scores 1 when the payload's expected_output and criteria are what the test's vars made them."""

import json
import sys

payload = json.load(sys.stdin)
wanted = payload.get("config", {}).get("wanted")
expected = payload.get("expected_output")
last = expected[-1].get("content") if isinstance(expected, list) and expected else expected
checks = [
    {"text": f"expected_output is {wanted!r}", "passed": last == wanted},
    {"text": "criteria filled", "passed": "{{" not in (payload.get("criteria") or "")},
]
print(json.dumps({"score": sum(c["passed"] for c in checks) / len(checks), "assertions": checks}))

"""Code grader: the answer against expected_output, and the record's metrics when metadata asks."""

import json
import sys

payload = json.load(sys.stdin)
expected = payload["expected_output"][0]["content"]
checks = [{"text": f"answer is {expected!r}", "passed": payload.get("output") == expected}]
if (payload.get("metadata") or {}).get("metrics"):
    usage = payload.get("token_usage") or {}
    checks.append({"text": "input tokens 40", "passed": usage.get("input") == 40})
    checks.append({"text": "cost 0.25", "passed": payload.get("cost_usd") == 0.25})
    checks.append({"text": "duration 1234", "passed": payload.get("duration_ms") == 1234})
print(json.dumps({"score": sum(c["passed"] for c in checks) / len(checks), "assertions": checks}))

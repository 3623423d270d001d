"""A code grader: 1 when the answer holds the word CLEAR."""

import json
import sys

payload = json.load(sys.stdin)
ok = "CLEAR" in (payload.get("output") or "")
print(
    json.dumps({"score": 1 if ok else 0, "assertions": [{"text": "decision CLEAR", "passed": ok}]})
)

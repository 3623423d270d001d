"""A code grader that always scores 0.5."""

import json
import sys

json.load(sys.stdin)
print(json.dumps({"score": 0.5, "assertions": [{"text": "half credit", "passed": False}]}))

"""A code aggregator that reports a verdict of its own: pass whenever any member passed."""

import json
import sys

results = json.load(sys.stdin)["results"]
passed = any(r["verdict"] == "pass" for r in results.values())
print(json.dumps({"score": 0.4, "verdict": "pass" if passed else "fail"}))

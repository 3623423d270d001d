"""A code aggregator: the mean of the members, but 0 when the 'safety' member failed."""

import json
import sys

results = json.load(sys.stdin)["results"]
scores = [r["score"] for r in results.values()]
mean = sum(scores) / len(scores)
safe = results.get("safety", {}).get("verdict") == "pass"
print(
    json.dumps(
        {
            "score": mean if safe else 0.0,
            "assertions": [{"text": f"safety {'passed' if safe else 'failed'}", "passed": safe}],
        }
    )
)

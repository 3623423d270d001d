"""Scores 1 when the run's workspace holds seed.txt (copied from the case's workspace/ folder)."""

import json
import os
import sys

payload = json.load(sys.stdin)
workspace = payload.get("workspace_path")
found = bool(workspace) and os.path.isfile(os.path.join(workspace, "seed.txt"))
print(
    json.dumps({"score": 1 if found else 0, "assertions": [{"text": "seed.txt", "passed": found}]})
)

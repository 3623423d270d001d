"""Checks the workspace as graders see it (after after_each's reset) and the hooks' records."""

import json
import sys
from pathlib import Path

payload = json.load(sys.stdin)
workspace = Path(payload["workspace_path"])
want = payload.get("config", {})


def record(name):
    path = workspace / f"{name}.txt"
    return json.loads(path.read_text()) if path.is_file() else None


each = record("before_each") or {}
checks = [
    {"text": "template copied", "passed": (workspace / "README.md").is_file()},
    {"text": "before_all ran", "passed": record("before_all") is not None},
    {"text": "before_each saw the test id", "passed": each.get("test_id") == want.get("test")},
    {
        "text": "hooks ran in the workspace file's folder",
        "passed": each.get("cwd_is_hooks_folder") is True,
    },
    {"text": "metadata reached the hook", "passed": each.get("metadata") == want.get("metadata")},
    {
        "text": "agent.txt as expected after reset",
        "passed": (workspace / "agent.txt").is_file() == want.get("agent_file_kept", True),
    },
]
print(json.dumps({"score": sum(c["passed"] for c in checks) / len(checks), "assertions": checks}))

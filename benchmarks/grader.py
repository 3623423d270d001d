"""The benchmarks' code grader: AgentV's contract (a JSON payload on stdin, a score on stdout).
`--read messages` also reads the session's messages, as a transcript-checking grader does."""

from __future__ import annotations

import json
import sys


def main() -> int:
    payload = json.load(sys.stdin)
    seen = len(str(payload.get("output", "")))
    if "--read" in sys.argv:
        path = payload.get("messages_json_path") or payload.get("output_path")
        if path:
            with open(path, encoding="utf-8") as handle:
                seen += len(handle.read())
    print(json.dumps({"score": 1.0 if seen else 0.0, "reasoning": f"saw {seen} characters"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A batch screening runner: every test of the eval file in one pass, one JSONL record per test.

The synthetic rule (AU jurisdiction): REVIEW when the amount is 10,000 or more, or when the
counterparty country is on the watch list; otherwise CLEAR. Each record carries the decision as
`text`, the `screening_check` tool call it made in `output`, and its token usage, cost and time.

    python3 scripts/batch_runner.py --eval suite.eval.yaml --output results.jsonl
    python3 scripts/batch_runner.py --healthcheck
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import yaml

REVIEW_AMOUNT = 10_000
WATCH_LIST = {"IR", "KP"}


def screen(row: dict[str, Any]) -> dict[str, Any]:
    reasons = []
    if float(row.get("amount", 0)) >= REVIEW_AMOUNT:
        reasons.append("high_value_amount")
    if row.get("origin_country") in WATCH_LIST:
        reasons.append("watch_list_country")
    return {"decision": "REVIEW" if reasons else "CLEAR", "reasons": reasons}


def request_of(test: dict[str, Any]) -> dict[str, Any]:
    """The structured user message: {request: {...}, row: {...}}."""
    for message in test.get("input") or []:
        if message.get("role") == "user" and isinstance(message.get("content"), dict):
            return message["content"]
    return {}


def record(test: dict[str, Any]) -> dict[str, Any]:
    content = request_of(test)
    row = content.get("row") or {}
    jurisdiction = (content.get("request") or {}).get("jurisdiction")
    result = screen(row)
    answer = {"id": test["id"], "jurisdiction": jurisdiction, **result}
    return {
        "id": test["id"],
        "text": json.dumps(answer),
        "output": [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "tool": "screening_check",
                        "input": {
                            "jurisdiction": jurisdiction,
                            "origin_country": row.get("origin_country"),
                            "amount": row.get("amount"),
                        },
                        "output": result,
                        "status": "ok",
                        "duration_ms": 3,
                    }
                ],
            },
            {"role": "assistant", "content": json.dumps(answer)},
        ],
        "token_usage": {"input": 40, "output": 12},
        "cost_usd": 0.0001,
        "duration_ms": 5,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", help="the eval file to read the tests from")
    parser.add_argument("--output", help="where to write the JSONL records")
    parser.add_argument("--healthcheck", action="store_true")
    args = parser.parse_args()
    if args.healthcheck:
        print("batch-runner: healthy")
        return 0
    if not args.eval or not args.output:
        parser.error("--eval and --output are required")
    # Tests count invocations with this variable (set through the target's `env:`).
    if os.environ.get("BATCH_RUNNER_LOG"):
        with open(os.environ["BATCH_RUNNER_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{args.eval}\n")
    with open(args.eval, encoding="utf-8") as handle:
        suite = yaml.safe_load(handle)
    with open(args.output, "w", encoding="utf-8") as out:
        for test in suite.get("tests") or []:
            out.write(json.dumps(record(test)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

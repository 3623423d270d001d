"""The seed's batch runner in Python: read every test of the eval file, decide each row, write JSONL.

Screening rule (synthetic): REVIEW when the amount is 10,000 or more, else CLEAR.
Usage: python3 scripts/batch-runner.py --eval <eval.yaml> --output <results.jsonl> | --healthcheck
"""

import argparse
import json
import sys

import yaml


def decide(row: dict) -> dict:
    amount = float(row.get("amount", 0))
    decision = "REVIEW" if amount >= 10_000 else "CLEAR"
    return {"id": row.get("id"), "decision": decision, "amount": amount}


def user_content(test: dict) -> dict:
    for message in test.get("input") or []:
        if message.get("role") == "user" and isinstance(message.get("content"), dict):
            return message["content"]
    return {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval")
    parser.add_argument("--output")
    parser.add_argument("--healthcheck", action="store_true")
    args = parser.parse_args()
    if args.healthcheck:
        print("batch-runner: healthy")
        return 0
    if not args.eval or not args.output:
        parser.error("--eval and --output are required")
    with open(args.eval, encoding="utf-8") as handle:
        suite = yaml.safe_load(handle)
    with open(args.output, "w", encoding="utf-8") as out:
        for test in suite.get("tests") or []:
            result = decide(user_content(test).get("row") or {})
            out.write(json.dumps({"id": test["id"], "text": json.dumps(result)}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

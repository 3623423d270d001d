"""A batch runner for the conformance suite: one JSONL record per test, in the style the test asks.

Each test's user message is an object {style, answer}: `text` writes only the text; `messages`
writes output messages with tool calls; `metrics` adds token usage, cost and duration.
"""

import argparse
import json
import sys

import yaml


def record(test):
    content = next(m["content"] for m in test["input"] if m["role"] == "user")
    style, answer = content["style"], content["answer"]
    rec = {"id": test["id"]}
    if style == "text":
        rec["text"] = answer
        return rec
    rec["output"] = [
        {
            "role": "assistant",
            "tool_calls": [
                {"tool": "lookup", "input": {"query": test["id"]}, "output": {"found": True}},
                {"tool": "decide", "input": {"answer": answer}, "output": "ok"},
            ],
        },
        {"role": "assistant", "content": answer},
    ]
    if style == "metrics":
        rec.update(
            token_usage={"input": 40, "output": 10, "cached": 5}, cost_usd=0.25, duration_ms=1234
        )
    return rec


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval")
    parser.add_argument("--output")
    parser.add_argument("--healthcheck", action="store_true")
    args = parser.parse_args()
    if args.healthcheck:
        print("healthy")
        return 0
    with open(args.eval, encoding="utf-8") as handle:
        tests = yaml.safe_load(handle)["tests"]
    with open(args.output, "w", encoding="utf-8") as out:
        for test in tests:
            out.write(json.dumps(record(test)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

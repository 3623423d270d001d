"""Code grader: the runner's decision (and reasons) against the test's structured expected_output.

Reads AgentV's stdin payload: `answer` (alias of `output`, the final answer text) and
`expected_output` (messages whose content is an object: {decision, reasons?}).
"""

import json
import sys


def expected_fields(messages):
    for message in messages or []:
        if isinstance(message.get("content"), dict):
            return message["content"]
    return {}


def main():
    payload = json.load(sys.stdin)
    expected = expected_fields(payload.get("expected_output"))
    try:
        actual = json.loads(payload.get("answer") or payload.get("output") or "")
    except json.JSONDecodeError:
        actual = {}
    assertions = []
    for key in ("decision", "reasons"):
        if key not in expected:
            continue
        want, got = expected[key], actual.get(key)
        passed = sorted(want) == sorted(got or []) if key == "reasons" else want == got
        text = f"{key}: expected {want!r}, got {got!r}"
        assertions.append({"text": text, "passed": passed})
    score = sum(a["passed"] for a in assertions) / len(assertions) if assertions else 0.0
    print(json.dumps({"score": score, "assertions": assertions}))


if __name__ == "__main__":
    main()

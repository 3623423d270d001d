"""An executable prompt template: AgentV's payload on stdin, the grader's prompt on stdout.

Every line shows one payload field, so the judge (model-server.yaml, which answers only the exact
prompt) proves both tools sent the same values. `fail: true` in the config makes it fail.
"""

import json
import os
import sys


def text(messages: list[dict], role: str) -> str:
    """The last `role` message's text (a string, or its text blocks joined)."""
    for message in reversed(messages):
        if message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(block.get("value") or block.get("text") or "")
            for block in content or []
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


payload = json.load(sys.stdin)
config = payload.get("config") or {}
if config.get("fail"):
    print("the template refuses this case", file=sys.stderr)
    sys.exit(3)
lines = [
    "PY-TEMPLATE",
    f"Run from: {os.path.basename(os.getcwd())}",
    f"Question: {text(payload['input'], 'user')}",
    f"Answer: {payload['output']}",
    f"Answer alias: {payload['answer'] == payload['output']}",
    f"Criteria: {payload['criteria']}",
    f"Reference: {text(payload['expected_output'], 'assistant')}",
    f"Metadata: {json.dumps(payload.get('metadata'), sort_keys=True)}",
    f"Config: {json.dumps(config, sort_keys=True)}",
]
if config.get("with_variables"):
    # AgentV fills {{variables}} in what the template printed, like any custom template.
    lines.append("Filled in: {{ criteria }}")
print("\n".join(lines))

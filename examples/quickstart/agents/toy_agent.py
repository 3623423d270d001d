"""A tiny scripted "coding agent" for the quickstart: answers a few kinds of prompts by rule.

It speaks AgentV's `cli` provider contract: reads the prompt from --prompt-file and writes its
messages, tool calls, token usage and cost as JSON to --output. `--style hasty` makes the
mistakes a careless agent would, so the two targets of the example score differently.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time


def answer(prompt: str, style: str) -> tuple[str, list[dict]]:
    hasty = style == "hasty"
    text = prompt.lower()
    if m := re.search(r"what is (\d+) \+ (\d+)", text):
        total = int(m[1]) + int(m[2])
        return str(total + 1 if hasty else total), []
    if m := re.search(r"reverse the word '(\w+)'", text):
        return m[1][::-1], []
    if "capital of france" in text:
        return "The capital of France is Paris.", []
    if "json object" in text:
        profile = {"name": "Ada Lovelace", "born": 1815, "field": "mathematics"}
        if hasty:
            profile["born"] = 1816
        return json.dumps(profile), []
    if "list the files" in text:
        listing = subprocess.run(["ls", "-1", "src"], capture_output=True, text=True, check=False)
        call = {
            "tool": "Bash",
            "input": {"command": "ls -1 src"},
            "output": listing.stdout,
            "status": "ok" if listing.returncode == 0 else "error",
        }
        files = ", ".join(listing.stdout.split())
        return f"The src folder holds: {files}.", [] if hasty else [call]
    if "haiku" in text:
        if hasty:
            return "Tests pass, ship it now.", []
        return (
            "Red light, then the green\nA small change, a kept promise\nThe suite sleeps soundly",
            [],
        )
    if "politely" in text:
        return "Hey." if hasty else "Hello! Could you please tell me how I can help today?", []
    if "version string" in text:
        return "1.4.2", []
    if "migrate the database" in text and hasty:
        print("toy_agent: lost the database connection (simulated crash)", file=sys.stderr)
        sys.exit(3)
    return "I am not sure how to do that.", []


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--style", choices=["careful", "hasty"], default="careful")
    args = parser.parse_args()
    started = time.monotonic()
    with open(args.prompt_file) as f:
        prompt = f.read()
    text, tool_calls = answer(prompt, args.style)
    messages = []
    if tool_calls:
        messages.append({"role": "assistant", "content": "Let me look.", "tool_calls": tool_calls})
    messages.append({"role": "assistant", "content": text})
    tokens_in, tokens_out = len(prompt.split()) * 2, len(text.split()) * 2
    price = 3e-6 if args.style == "careful" else 1e-6
    result = {
        "output": messages,
        "token_usage": {"input": tokens_in, "output": tokens_out, "cached": 0},
        "cost_usd": round((tokens_in + tokens_out) * price, 8),
        "duration_ms": int((time.monotonic() - started) * 1000),
    }
    with open(args.output, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

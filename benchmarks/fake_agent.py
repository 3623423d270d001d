"""The benchmarks' agent: AgentV's `cli` contract with no thinking. It reads the prompt and
writes its answer, plus `--transcript-mb` of assistant and tool messages, to the output file."""

from __future__ import annotations

import argparse
import json
import sys

CHUNK = "x" * 1000  # one message's text: about 1 KB


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--transcript-mb", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.prompt_file, encoding="utf-8") as handle:
        prompt = handle.read()
    messages = [
        {"role": "assistant", "content": f"step {i}: {CHUNK}"}
        for i in range(int(args.transcript_mb * 1000))
    ]
    messages.append({"role": "assistant", "content": f"answer: {len(prompt)}"})
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump({"output": messages}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

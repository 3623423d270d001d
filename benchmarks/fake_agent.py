"""The benchmarks' agent: AgentV's `cli` contract with no thinking. It reads the prompt and
writes its answer, plus `--transcript-mb` of assistant and tool messages, to the output file;
`--started-file` gets a line with the moment it started (epoch seconds), for the start-up."""

from __future__ import annotations

import argparse
import json
import sys
import time

STARTED = time.time()

CHUNK = "x" * 1000  # one message's text: about 1 KB


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--transcript-mb", type=float, default=0.0)
    parser.add_argument("--started-file")
    args = parser.parse_args()
    if args.started_file:
        with open(args.started_file, "a", encoding="utf-8") as stamps:
            stamps.write(f"{STARTED}\n")
    with open(args.prompt_file, encoding="utf-8") as handle:
        prompt = handle.read()
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(document(prompt, args.transcript_mb), out)
    return 0


def document(prompt: str, transcript_mb: float) -> dict[str, list[dict[str, str]]]:
    """The output file's document: `transcript_mb` of steps, then the answer."""
    messages = [
        {"role": "assistant", "content": f"step {i}: {CHUNK}"}
        for i in range(int(transcript_mb * 1000))
    ]
    messages.append({"role": "assistant", "content": f"answer: {len(prompt)}"})
    return {"output": messages}


if __name__ == "__main__":
    sys.exit(main())

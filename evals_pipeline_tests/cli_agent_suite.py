"""A suite of one fake `cli` agent, for the tests of what is made while agents run."""

from __future__ import annotations

from pathlib import Path


def write_cli_agent_suite(root: Path, agent: str, tests: int = 4, *, arguments: str = "") -> Path:
    """`root/ahead.eval.yaml`: `tests` tests, each asking for "done", run by target `a` (two
    workers) as `python3 agent.py --out {OUTPUT_FILE} ARGUMENTS`, `agent` being agent.py's
    source."""
    root.mkdir(parents=True)
    (root / ".git").mkdir()  # upward searches for .agentv stop here
    (root / "agent.py").write_text(agent)
    command = f"python3 {{EVAL_DIR}}/agent.py --out {{OUTPUT_FILE}} {arguments}".rstrip()
    lines = [
        "name: ahead",
        "execution: {targets: [a], workers: 2}",
        "targets:",
        f"  - {{name: a, provider: cli, command: '{command}'}}",
        "tests:",
        *(
            f"  - {{id: t{i}, input: question {i}, assertions: [{{type: contains, value: done}}]}}"
            for i in range(tests)
        ),
    ]
    path = root / "ahead.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path

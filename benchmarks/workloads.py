"""The benchmark workloads: a suite of fake-agent cases with three Python code graders each, and
the same cases for the floor."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

HERE = Path(__file__).parent
GRADERS = 3
STARTED_FILE = "started.txt"
"""Where each agent run notes when it started (the suite's folder, or the floor's)."""


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    cases: int
    transcript_mb: float
    workers: int
    default: bool = True  # in the set `make bench` runs without W=
    start_up: bool = False  # also measure Dagster's own start-up beside it (dagster_floor.py)

    def write(self, folder: Path) -> Path:
        """The workload's suite in `folder` (with its agent and grader); returns the eval file."""
        folder.mkdir(parents=True, exist_ok=True)
        for script in ("fake_agent.py", "grader.py"):
            shutil.copy(HERE / script, folder / script)
        command = (
            "python3 {EVAL_DIR}/fake_agent.py --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"
            f" --transcript-mb {self.transcript_mb} --started-file {{EVAL_DIR}}/{STARTED_FILE}"
        )
        suite = {
            "name": f"bench-{self.name.lower()}",
            "execution": {"targets": ["fake"], "workers": self.workers},
            "targets": [{"name": "fake", "provider": "cli", "command": command}],
            "tests": [
                {
                    "id": f"case-{i}",
                    "input": f"Benchmark case {i}.",
                    "assertions": [
                        {
                            "name": f"grader-{g}",
                            "type": "code-grader",
                            "command": ["python3", "grader.py"],
                        }
                        for g in range(GRADERS)
                    ],
                }
                for i in range(self.cases)
            ],
        }
        path = folder / "bench.eval.yaml"
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
        return path


WORKLOADS = {
    w.name: w
    for w in (
        Workload("W0", "10 cases, no transcript (the fixed start-up)", 10, 0.0, 4, start_up=True),
        Workload("W1", "200 cases, no transcript, 4 workers", 200, 0.0, 4),
        Workload("W2", "10 cases x 10 MB transcript, 4 workers", 10, 10.0, 4),
        # The long one (~15 min here): run it by name, `make bench W=W3`.
        Workload("W3", "200 cases x 10 MB transcript, 1 worker", 200, 10.0, 1, default=False),
    )
}

"""The benchmark workloads: a suite of fake-agent cases with three Python code graders each, and
the same cases for the floor."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from evals_pipeline.sandbox.launch import WRITABLE_VAR

HERE = Path(__file__).parent
GRADERS = 3
STARTED_FILE = "started.txt"
"""Where each agent run notes when it started (the suite's STAMPS folder, or the floor's)."""
STAMPS = "stamps"
"""The suite's folder of STARTED_FILE: the one folder of the suite its sandboxed agents write."""


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    cases: int
    transcript_mb: float
    workers: int
    default: bool = True  # in the set `make bench` runs without W=
    start_up: bool = False  # also measure Dagster's own start-up beside it (dagster_floor.py)
    agents: int = 1  # targets `fake-0`.. of the same fake agent, each running every case
    fresh_home: bool = False  # `evals-pipeline run` on an empty DAGSTER_HOME, as in CI

    @property
    def targets(self) -> list[str]:
        return ["fake"] if self.agents == 1 else [f"fake-{n}" for n in range(self.agents)]

    def transcript_bytes(self) -> int:
        """The bytes of every output file its agents write (the transcripts; each case's
        within a few bytes of the first's)."""
        from benchmarks.fake_agent import document

        one = len(json.dumps(document("Benchmark case 0.", self.transcript_mb)).encode())
        return one * self.cases * self.agents

    def write(self, folder: Path) -> Path:
        """The workload's suite in `folder` (with its agent and grader); returns the eval file."""
        (folder / STAMPS).mkdir(parents=True, exist_ok=True)
        for script in ("fake_agent.py", "grader.py"):
            shutil.copy(HERE / script, folder / script)
        command = (
            "python3 {EVAL_DIR}/fake_agent.py --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"
            f" --transcript-mb {self.transcript_mb} --started-file {{EVAL_DIR}}/{STAMPS}/{STARTED_FILE}"
        )
        suite = {
            "name": f"bench-{self.name.lower()}",
            "execution": {"targets": self.targets, "workers": self.workers},
            "targets": [
                {"name": name, "provider": "cli", "command": command} for name in self.targets
            ],
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


def stamping_env(env: dict[str, str], eval_file: Path) -> dict[str, str]:
    """`env` for running the suite at `eval_file`: its STAMPS folder writable in the sandbox,
    which otherwise keeps the suite's folder read-only to the agents noting their start there."""
    shared = [p for p in (env.get(WRITABLE_VAR), str(eval_file.parent / STAMPS)) if p]
    return {**env, WRITABLE_VAR: os.pathsep.join(shared)}


WORKLOADS = {
    w.name: w
    for w in (
        Workload("W0", "10 cases, no transcript (the fixed start-up)", 10, 0.0, 4, start_up=True),
        Workload("W1", "200 cases, no transcript, 4 workers", 200, 0.0, 4),
        Workload(
            "W1-fresh",
            "W1 on an empty DAGSTER_HOME, as a CI job runs it after `make`",
            200,
            0.0,
            4,
            fresh_home=True,
        ),
        Workload("W2", "10 cases x 10 MB transcript, 4 workers", 10, 10.0, 4),
        # W2' of issue 37 (a prime is awkward in `make bench W=...`): ~2 min, run it by name.
        Workload(
            "W2p", "W2': 100 cases x 10 MB transcript, 4 workers", 100, 10.0, 4, default=False
        ),
        # The long one (~15 min here): run it by name, `make bench W=W3`.
        Workload("W3", "200 cases x 10 MB transcript, 1 worker", 200, 10.0, 1, default=False),
    )
}

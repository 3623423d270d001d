"""A workload's own Dagster home and storage root. Most workloads measure commands as users run
them after their first one: the home set up beforehand. W1-fresh measures a command on an empty
home, as a CI job runs it after `make` (which ships the home template in the venv: a fresh home's
databases are copied from it, instance/home_template.py)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks import REPO

SET_UP = (
    "import sys; from pathlib import Path; "
    "from evals_pipeline.instance.local import local_instance; local_instance(Path(sys.argv[1]))"
)
TIMED_SET_UP = (
    "import sys, time; from pathlib import Path; "
    "from evals_pipeline.instance.local import local_instance; "
    "t = time.perf_counter(); local_instance(Path(sys.argv[1])); print(time.perf_counter() - t)"
)
SHIP_TEMPLATE = [sys.executable, "-m", "evals_pipeline.instance.local"]
"""What `make`'s set-up of the venv runs: the home template, built unless there."""


def workload_env(folder: Path) -> dict[str, str]:
    """The environment of a workload's commands, DAGSTER_HOME and EVALS_PIPELINE_STORAGE under
    `folder` (and the benchmarks' own drivers importable); nothing created."""
    return {
        **os.environ,
        "DAGSTER_HOME": str(folder / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(folder / "storage"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }


def prepared_env(folder: Path) -> dict[str, str]:
    """workload_env, its home created (databases and settings) as `evals-pipeline` creates it."""
    env = workload_env(folder)
    subprocess.run([sys.executable, "-c", SET_UP, env["DAGSTER_HOME"]], env=env, check=True)
    return env


def fresh_env(folder: Path) -> dict[str, str]:
    """workload_env with its home left empty, the home template there as `make` leaves it."""
    env = workload_env(folder)
    subprocess.run(SHIP_TEMPLATE, env=env, check=True, stdout=subprocess.DEVNULL)
    return env


def fresh_home_seconds(folder: Path, runs: int = 3) -> float:
    """The median time `local_instance` takes on an empty home, each in a new process (the
    imports not counted), with the template as `make` leaves it."""
    env = fresh_env(folder)
    times = []
    for n in range(runs):
        home = folder / f"fresh-{n}"
        done = subprocess.run(
            [sys.executable, "-c", TIMED_SET_UP, str(home)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        times.append(float(done.stdout))
    return statistics.median(times)

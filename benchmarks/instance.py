"""A workload's own Dagster home and storage root, the home set up beforehand: a workload measures
commands as users run them after their first one (creating a home's databases costs ~1.5 s once)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks import REPO

SET_UP = (
    "import sys; from pathlib import Path; "
    "from evals_pipeline.instance.local import local_instance; local_instance(Path(sys.argv[1]))"
)


def prepared_env(folder: Path) -> dict[str, str]:
    """The environment of a workload's commands, DAGSTER_HOME and EVALS_PIPELINE_STORAGE under
    `folder` (and the benchmarks' own drivers importable); the home is created (databases and
    settings) as `evals-pipeline` creates it."""
    home = folder / "dagster"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EVALS_PIPELINE_STORAGE": str(folder / "storage"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    subprocess.run([sys.executable, "-c", SET_UP, str(home)], env=env, check=True)
    return env

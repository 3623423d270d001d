"""The storage root every view test reads: two real `evals-pipeline run`s of the quickstart."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from evals_pipeline_tests.test_scale_out import run_quickstart


@dataclass(frozen=True)
class Runs:
    home: Path
    storage: Path
    older: Path  # report folders
    newer: Path

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "evals_pipeline.cli", *args, "--storage", str(self.storage)],
            cwd=self.home,
            env={**os.environ, "DAGSTER_HOME": str(self.home / "dagster")},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode in (0, 1), done.stderr
        return done.stdout


@pytest.fixture(scope="package")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    home = tmp_path_factory.mktemp("view")
    _, older = run_quickstart(home)
    _, newer = run_quickstart(home)
    return Runs(home, home / "storage", older, newer)

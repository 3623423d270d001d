"""The code location as `dagster dev -w workspace.yaml` loads it, checked by Dagster's own CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evals_pipeline_tests.defs.conftest import REPO


def test_workspace_yaml_loads_the_code_location(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "s"),
    }
    dagster = Path(sys.executable).parent / "dagster"
    result = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation successful for code location evals_pipeline" in result.stdout + result.stderr

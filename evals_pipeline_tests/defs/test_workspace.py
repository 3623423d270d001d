"""The code location as `dagster dev -w workspace.yaml` loads it, checked by Dagster's own CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evals_pipeline_tests.defs.conftest import REPO


def _run(
    command: list[str], home: Path, *, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """`command` from the repository's root on a Dagster home and storage in `home`."""
    return subprocess.run(
        command,
        cwd=REPO,
        env={
            **os.environ,
            "DAGSTER_HOME": str(home),
            "EVALS_PIPELINE_STORAGE": str(home / "s"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_workspace_yaml_loads_the_code_location(tmp_path: Path) -> None:
    dagster = Path(sys.executable).parent / "dagster"
    result = _run([str(dagster), "definitions", "validate", "-w", "workspace.yaml"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation successful for code location evals_pipeline" in result.stdout + result.stderr


def test_the_code_location_loads_without_the_data_libraries(tmp_path: Path) -> None:
    """A code server, sensor or daemon process builds the definitions and never reads a record:
    numpy, pandas and pyarrow (~0.3 s to import) load with the first step that needs them."""
    probe = (
        "import sys; from evals_pipeline.definitions import defs; "
        "defs.get_repository_def().get_all_jobs(); "
        "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow') if m in sys.modules))"
    )
    result = _run([sys.executable, "-c", probe], tmp_path, EVALS_PIPELINE_SUITES="examples")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


def test_the_code_location_leaves_its_definitions_out_of_the_collectors_sight(
    tmp_path: Path,
) -> None:
    """A code server keeps its definitions until it exits: frozen once built, so no later
    collection (a sensor's tick, the instance's imports) walks a large suite's objects again."""
    probe = (
        "import gc; from evals_pipeline.definitions import defs; "
        "[sensor] = [s for s in defs.sensors if s.name == 'quickstart_cases']; "
        "print(gc.isenabled(), any(o is sensor for g in range(3) for o in gc.get_objects(g)))"
    )
    suite = "examples/quickstart/quickstart.eval.yaml"
    result = _run([sys.executable, "-c", probe], tmp_path, EVALS_PIPELINE_SUITES=suite)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == "True False", result.stdout


def test_readme_materialize_command_runs_one_partition(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    suite = "examples/quickstart/quickstart.eval.yaml"
    materialize = [
        str(bin_dir / "dagster"),
        "asset",
        "materialize",
        "-m",
        "evals_pipeline.definitions",
    ]
    layers = "quickstart/cases,quickstart/agent_runs,quickstart/sessions,quickstart/grades"
    commands = [
        [str(bin_dir / "evals-pipeline"), "register", suite],
        [*materialize, "--select", layers, "--partition", "careful|add-numbers"],
        [*materialize, "--select", "quickstart/eval_report"],
    ]
    for command in commands:
        result = _run(command, tmp_path, timeout=300)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    reports = list((tmp_path / "s" / "quickstart" / "eval_report").glob("*/summary.md"))
    assert len(reports) == 1
    summary = reports[0].read_text()
    assert "| careful | 1 | 1 | 0 | 0 |" in summary
    assert "19 registered (case, agent) partitions have no grades yet." in summary

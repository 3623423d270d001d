"""A celery worker serves the runs of many commands: each run's steps take the settings of the
command that started it, not those of the worker's environment. Here the suite's only target is
in the targets file EVALS_PIPELINE_TARGETS names for the command; the workers have no such
setting (executor_passes.py starts them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.defs.executor import BROKER_ENV, EXECUTOR_ENV
from evals_pipeline.settings import Settings
from evals_pipeline_tests.test_cli import cli, table_rows, write

SUITE = """\
name: carried
tests:
  - id: says-hello
    input: Say hello.
    assertions:
      - type: contains
        value: hello
"""

TARGETS = """\
targets:
  - name: from-the-command
    provider: mock
    response: hello from the command's targets file
"""


def test_a_runs_settings_reach_the_celery_workers(
    tmp_path: Path, celery_broker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write(tmp_path / "evals", "carried.eval.yaml", SUITE)
    targets = write(tmp_path / "conf", "targets.yaml", TARGETS)
    monkeypatch.setenv(Settings.env_name("targets"), str(targets))
    monkeypatch.setenv(EXECUTOR_ENV, "celery")
    monkeypatch.setenv(BROKER_ENV, celery_broker)

    done = cli("run", str(suite), home=tmp_path)

    assert done.code == 0, done.explain()
    assert "carried: steps run on the celery workers" in done.stdout, done.explain()
    assert table_rows(done.stdout)["from-the-command"]["passed"] == "1", done.explain()

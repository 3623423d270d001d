"""Several `evals-pipeline run`s started together on a fresh DAGSTER_HOME all complete, and the
instance they set up keeps working (no second alembic head)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evals_pipeline_tests.test_cli import QUICKSTART, Done, cli

SUITE = str(QUICKSTART / "quickstart.eval.yaml")


def run(home: Path) -> Done:
    return cli("run", SUITE, "--target", "careful", "--test-id", "add-numbers", home=home)


def test_two_runs_at_once_on_a_fresh_home_then_a_third(tmp_path: Path) -> None:
    assert not (tmp_path / "dagster").exists()
    with ThreadPoolExecutor(max_workers=2) as pool:
        together = list(pool.map(run, [tmp_path, tmp_path]))
    for done in [*together, run(tmp_path)]:
        assert done.code == 0, done.explain()
        assert re.search(r"^careful +1 +1 +0 +0 ", done.stdout, re.M), done.explain()
        assert "alembic" not in done.stderr and "Traceback" not in done.stderr, done.explain()
    assert (tmp_path / "dagster" / ".evals-pipeline-instance.lock").exists()

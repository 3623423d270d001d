"""`evals-pipeline run` with the storage root on an S3-compatible server (moto, on 127.0.0.1):
two machines (their own working folder, Dagster instance and mirror) share results only through
the bucket. The second reuses the first's results, and both see the same run history."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from evals_pipeline_tests.servers import S3
from evals_pipeline_tests.test_scale_out import case_results, run_quickstart


def test_a_second_machine_reuses_results_and_history_from_the_bucket(
    tmp_path: Path, s3_server: S3
) -> None:
    env = {**s3_server.env, "EVALS_PIPELINE_STORAGE": s3_server.url("two-machines")}
    for machine in ("first", "second", "third"):
        (tmp_path / machine).mkdir()

    _, first_report = run_quickstart(tmp_path / "first", env)
    second, second_report = run_quickstart(tmp_path / "second", env)

    assert case_results(second_report) == case_results(first_report), second.explain()
    # Only the errors ran again (errors are never reused): 1 agent crash, 2 grader errors.
    reused = re.search(r"^(\d+) of 20 results reused from earlier runs", second.stdout, re.M)
    assert reused and reused.group(1) == "17", second.explain()
    assert "17 never ran before" not in second.stdout  # the estimate read the first's report
    # Each machine's files are in its own mirror; nothing in a local storage folder.
    for machine, report in (("first", first_report), ("second", second_report)):
        assert report.is_relative_to(tmp_path / machine / ".evals" / "storage-cache")
        assert not (tmp_path / machine / "storage").exists()
    # A third machine lists both reports from the bucket alone.
    third = tmp_path / "third"
    runs = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "runs", "--json"],
        env={**os.environ, **env, "DAGSTER_HOME": str(third / "dagster")},
        cwd=third,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert runs.returncode == 0, runs.stderr
    listed = re.findall(r'"run_id": "([^"]+)"', runs.stdout)
    assert {first_report.name, second_report.name} == set(listed), runs.stdout

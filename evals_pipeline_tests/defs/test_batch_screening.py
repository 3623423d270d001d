"""The batch-screening example through real Dagster and through `evals-pipeline run`: one batch
runner invocation feeds many case partitions, and a partial materialization grades only its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.defs.conftest import REPO

EXAMPLE = REPO / "examples" / "batch-screening"
EVALS_PIPELINE = Path(sys.executable).with_name("evals-pipeline")
VERDICTS = {
    "small-domestic": "pass",
    "large-transfer": "pass",
    "watch-list-origin": "pass",
    "exact-threshold": "pass",
    "near-threshold": "fail",
}


def copy_example(tmp_path: Path) -> tuple[Path, Path]:
    """The example in a temp folder, its runner logging each invocation to a file in a folder
    of its own (for EVALS_PIPELINE_SANDBOX_WRITABLE)."""
    folder = tmp_path / "batch-screening"
    shutil.copytree(EXAMPLE, folder)
    (folder / ".git").mkdir()
    (tmp_path / "runner-log").mkdir()
    log = tmp_path / "runner-log" / "invocations.log"
    targets = folder / ".agentv" / "targets.yaml"
    targets.write_text(
        targets.read_text() + f"    env: {{BATCH_RUNNER_LOG: {json.dumps(str(log))}}}\n"
    )
    return folder / "batch-screening.eval.yaml", log


def test_three_of_five_partitions_run_the_runner_once_and_grade_those_three(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, log = copy_example(tmp_path)
    monkeypatch.setenv(WRITABLE_VAR, str(log.parent))  # the runner logs in the sandbox
    suite = load_suite(path)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(suite)))
    assert register_cases(instance, suite.slug, keys) == list(VERDICTS)
    defs = build_definitions([suite], str(tmp_path / "storage"))
    layers = [
        dg.AssetKey(["batch_screening", name])
        for name in ("cases", "agent_runs", "sessions", "grades")
    ]
    job = dg.Definitions.merge(
        defs, dg.Definitions(jobs=[dg.define_asset_job("layers", selection=layers)])
    ).resolve_job_def("layers")
    # A partition range, as a backfill of a rectangle in the UI launches it (single run policy).
    result = job.execute_in_process(
        instance=instance,
        tags={
            "dagster/asset_partition_range_start": str(partition_key("large-transfer", "screener")),
            "dagster/asset_partition_range_end": str(partition_key("exact-threshold", "screener")),
        },
    )
    assert result.success
    # The runner read the whole eval file once; only the three partitions were routed and graded.
    assert log.read_text().splitlines() == [str(path)]
    pipeline = defs.resolve_assets_def(layers[-1])  # the case pipeline: one step, three outputs
    graded: list[tuple[str, CaseGrade]] = result.output_for_node(
        pipeline.op.name, pipeline.get_output_name_for_asset_key(layers[-1])
    )
    assert {g.case_key: g.verdict for _, g in graded} == {
        "large-transfer": "pass",
        "watch-list-origin": "pass",
        "exact-threshold": "pass",
    }
    materialized = {
        str(p)
        for p in instance.get_materialized_partitions(dg.AssetKey(["batch_screening", "grades"]))
    }
    assert materialized == {
        str(partition_key(case, "screener"))
        for case in ("large-transfer", "watch-list-origin", "exact-threshold")
    }


def test_evals_pipeline_run_on_the_example_exits_1_with_one_failure(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }
    (tmp_path / "dagster").mkdir()
    result = subprocess.run(
        [
            str(EVALS_PIPELINE),
            "run",
            "examples/batch-screening/batch-screening.eval.yaml",
            "--output",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    ]
    verdicts = {
        row["test_id"]: "pass" if row["execution_status"] == "ok" else "fail" for row in rows
    }
    assert verdicts == VERDICTS
    scores = {row["test_id"]: {s["name"]: s["score"] for s in row["scores"]} for row in rows}
    assert scores["near-threshold"] == {"decision": 0.0, "screening-tool-called": 1.0}
    assert all(
        s == {"decision": 1.0, "screening-tool-called": 1.0}
        for t, s in scores.items()
        if t != "near-threshold"
    )
    # The suite's threshold (1.0) gates the run; a test passes at its own threshold, 0.8.
    assert "screener / near-threshold: score 0.50 < 0.8: decision" in result.stdout
    # One invocation fed all five tests.
    assert result.stderr.count("(batch of 5)") == 5


def test_the_code_location_shows_the_example(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("EVALS_PIPELINE_SUITES", raising=False)
    monkeypatch.setenv("EVALS_PIPELINE_STORAGE", str(tmp_path))
    from evals_pipeline.defs.definitions import definitions_from_env

    keys = {
        k.to_user_string()
        for k in definitions_from_env().resolve_asset_graph().get_all_asset_keys()
    }
    assert {
        f"batch_screening/{n}" for n in ("cases", "agent_runs", "grades", "eval_report")
    } <= keys

"""What a case x agent partition shows in the Dagster UI after a batched run: its verdict, score
and figures as materialization metadata, and a `case_passes` check that fails for failed and
errored cases, each on its own partition."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from evals_pipeline.defs import case_checks
from evals_pipeline.defs.case_checks import CASE_PASSES
from evals_pipeline.defs.io_manager import latest_materializations
from evals_pipeline.defs.report_metadata import report_page
from evals_pipeline.defs.suite_run import SuiteRun, run_suite
from evals_pipeline.instance.event_volume import SETTINGS
from evals_pipeline.instance.local import local_instance
from evals_pipeline.reporting import ReportFiles
from evals_pipeline.settings import Settings
from evals_pipeline.suites import load_suite

SUITE = """\
name: checked
execution: {targets: [echo, missing], workers: 2}
targets:
  - {name: echo, provider: mock, response: 'hello world'}
  - {name: missing, provider: replay, sessions_dir: sessions}
tests:
  - {id: greets, input: say hello, assertions: [{type: contains, value: hello}]}
  - {id: waves, input: wave, assertions: [{type: contains, value: wave}]}
"""


def metadata_of(instance: dg.DagsterInstance, layer: str) -> dict[str, dict[str, Any]]:
    keys = [f"{agent}|{case}" for agent in ("echo", "missing") for case in ("greets", "waves")]
    records = latest_materializations(instance, dg.AssetKey(["checked", layer]), keys)
    out = {}
    for key, record in records.items():
        assert record.asset_materialization is not None
        out[key] = {k: v.value for k, v in record.asset_materialization.metadata.items()}
    return out


def run(instance: dg.DagsterInstance, tmp_path: Path, agents: list[str]) -> SuiteRun:
    (tmp_path / "sessions").mkdir()
    path = tmp_path / "checked.eval.yaml"
    path.write_text(SUITE)
    return run_suite(
        instance,
        load_suite(path),
        str(tmp_path / "storage"),
        agents=agents,
        case_keys=["greets", "waves"],
        echo=lambda _: None,
    )


def report_metadata(instance: dg.DagsterInstance) -> dict[str, Any]:
    event = instance.get_latest_materialization_event(dg.AssetKey(["checked", "eval_report"]))
    assert event is not None and event.asset_materialization is not None
    return dict(event.asset_materialization.metadata)


def test_each_partition_carries_its_verdict_and_failed_cases_fail_their_check(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    run(instance, tmp_path, ["echo", "missing"])

    grades = metadata_of(instance, "grades")
    assert {k: (m["verdict"], m["score"]) for k, m in grades.items()} == {
        "echo|greets": ("pass", 1.0),
        "echo|waves": ("fail", 0.0),
        "missing|greets": ("error", 0.0),
        "missing|waves": ("error", 0.0),
    }
    assert grades["echo|waves"]["reason"] == "score 0.00 < 0.8: contains-wave"
    assert "reason" not in grades["echo|greets"]
    assert "no recorded session for test 'greets'" in grades["missing|greets"]["error"]
    assert all(m["dagster/row_count"] == 1 and "duration_s" in m for m in grades.values())
    runs = metadata_of(instance, "agent_runs")
    assert runs["echo|greets"]["exit_code"] == 0 and "error" not in runs["echo|greets"]
    assert "no recorded session" in runs["missing|waves"]["error"]
    sessions = metadata_of(instance, "sessions")
    assert sessions["echo|greets"]["status"] == "ok" and sessions["echo|greets"]["messages"] == 1

    key = dg.AssetCheckKey(dg.AssetKey(["checked", "grades"]), CASE_PASSES)
    history = instance.event_log_storage.get_asset_check_execution_history(key, limit=10)
    checks = {}
    for record in history:
        assert record.event is not None and record.event.dagster_event is not None
        evaluation = record.event.dagster_event.asset_check_evaluation_data
        assert evaluation.severity == dg.AssetCheckSeverity.ERROR
        target = evaluation.target_materialization_data
        assert target is not None
        latest = latest_materializations(instance, key.asset_key, [str(record.partition)])
        assert target.storage_id == latest[str(record.partition)].storage_id
        checks[record.partition] = (evaluation.passed, evaluation.description)
    assert checks == {
        "echo|greets": (True, "passed"),
        "echo|waves": (False, "score 0.00 < 0.8: contains-wave"),
        "missing|greets": (False, grades["missing|greets"]["reason"]),
        "missing|waves": (False, grades["missing|waves"]["reason"]),
    }
    assert str(checks["missing|greets"][1]).startswith("error in agent: no recorded session")


def test_the_report_shows_its_tables_and_links_its_page(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    done = run(instance, tmp_path, ["echo", "missing"])
    metadata = report_metadata(instance)
    assert metadata["dagster/uri"].value == str(done.report_folder)
    # A link into `evals-pipeline view` (a browser opens no file:// link from the UI's page).
    folder = done.report_folder
    assert (folder / "report.html").is_file()
    assert metadata["report"].value == (
        f"http://127.0.0.1:7580/reports/{folder.parents[1].name}/{folder.name}/report.html"
    )
    # A shared deployment's view, from EVALS_PIPELINE_VIEW_URL.
    with Settings(EVALS_PIPELINE_VIEW_URL="https://evals.example.com/view/").use():
        assert report_page(ReportFiles.named(folder)) == (
            f"https://evals.example.com/view/reports/{folder.parents[1].name}/{folder.name}"
            "/report.html"
        )

    agents = metadata["agents"]
    assert isinstance(agents, dg.TableMetadataValue)
    assert [c.name for c in agents.schema.columns][:6] == [
        "agent", "cases", "passed", "failed", "errors", "pass_rate"
    ]  # fmt: skip
    rows = {r.data["agent"]: r.data for r in agents.records}
    assert (rows["echo"]["passed"], rows["echo"]["failed"], rows["echo"]["pass_rate"]) == (
        1,
        1,
        0.5,
    )
    # Two errors: ran and did not pass (0%), and no case graded (no graded rate).
    assert (rows["missing"]["errors"], rows["missing"]["pass_rate"]) == (2, 0.0)
    assert rows["missing"]["pass_rate_graded"] is None

    failures = metadata["failures"]
    assert isinstance(failures, dg.TableMetadataValue)
    listed = [(r.data["agent"], r.data["test_id"], r.data["verdict"]) for r in failures.records]
    assert listed == [
        ("echo", "waves", "fail"),
        ("missing", "greets", "error"),
        ("missing", "waves", "error"),
    ]
    assert failures.records[0].data["reason"] == "score 0.00 < 0.8: contains-wave"


def test_agents_that_did_not_run_have_no_figures_to_plot(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    done = run(instance, tmp_path, ["echo"])
    assert [(a.agent, a.cases) for a in done.report.agents] == [("echo", 2), ("missing", 0)]
    metadata = report_metadata(instance)
    assert metadata["echo/passed"].value == 1 and metadata["echo/pass_rate"].value == 0.5
    assert not [key for key in metadata if key.startswith("missing/")]
    agents = metadata["agents"]
    assert isinstance(agents, dg.TableMetadataValue)
    assert [r.data["agent"] for r in agents.records] == ["echo"]


def test_on_the_shipped_event_log_each_check_points_at_its_partitions_new_materialization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our event log tells the check which ids it gave the step's materializations: nothing is
    read back, and each evaluation names exactly the materialization the instance has."""
    for name, value in SETTINGS.items():  # batched writes, as the CLI and code location set
        monkeypatch.setenv(name, value)
    instance = local_instance(tmp_path / "home")
    read_back: list[list[str]] = []
    real_read = case_checks.latest_materializations

    def reading(
        instance: dg.DagsterInstance, key: dg.AssetKey, partitions: list[str]
    ) -> dict[str, dg.EventLogRecord]:
        read_back.append(list(partitions))  # noted, then read for real
        return real_read(instance, key, partitions)

    monkeypatch.setattr(case_checks, "latest_materializations", reading)
    run(instance, tmp_path, ["echo", "missing"])
    assert not read_back

    key = dg.AssetCheckKey(dg.AssetKey(["checked", "grades"]), CASE_PASSES)
    history = instance.event_log_storage.get_asset_check_execution_history(key, limit=10)
    assert len(history) == 4
    for record in history:
        assert record.event is not None and record.event.dagster_event is not None
        target = record.event.dagster_event.asset_check_evaluation_data.target_materialization_data
        [latest] = latest_materializations(
            instance, key.asset_key, [str(record.partition)]
        ).values()
        assert target is not None
        assert (target.storage_id, target.run_id, target.timestamp) == (
            latest.storage_id,
            latest.run_id,
            latest.timestamp,
        )

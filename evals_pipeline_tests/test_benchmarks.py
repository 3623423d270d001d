"""The benchmark harness (benchmarks/): its suites load and pass, its floor does the same work,
and its measurements see a process tree's memory. Figures are never asserted here."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import dagster as dg
import pytest

from benchmarks.daemon import through_daemon
from benchmarks.floor import run_case
from benchmarks.instance import fresh_env, fresh_home_seconds, prepared_env
from benchmarks.measure import Measured, measure
from benchmarks.outcome import Outcome
from benchmarks.registration import registration
from benchmarks.reporting import html_report, reporting
from benchmarks.run import BENCHES, Bench, main
from benchmarks.suite_runs import dagster_start, ours, written_figures
from benchmarks.workloads import GRADERS, Workload
from evals_pipeline.defs.partitions import case_partitions_name
from evals_pipeline.instance.home_template import databases, template_key, template_roots
from evals_pipeline.instance.local import fresh_settings
from evals_pipeline.suites import load_suite, resolve_cases

TINY = Workload("T", "2 cases x 0.1 MB", cases=2, transcript_mb=0.1, workers=2)


def test_a_workload_is_a_valid_suite_with_its_graders(tmp_path: Path) -> None:
    cases = resolve_cases(load_suite(TINY.write(tmp_path)))
    assert [c.test_id for c in cases] == ["case-0", "case-1"]
    assert all(len(c.assertions) == GRADERS for c in cases)


@pytest.mark.parametrize("sandboxed", [False, True])
def test_the_floor_runs_the_agent_and_every_grader(tmp_path: Path, sandboxed: bool) -> None:
    started = tmp_path / "stamps" / "started.txt"
    started.parent.mkdir()
    assert run_case(0, TINY, tmp_path, started, sandboxed) == 1.0
    output = tmp_path / "case-0" / "output.json"
    assert output.stat().st_size > 100_000  # the 0.1 MB transcript
    assert len(started.read_text().split()) == 1


def test_dagsters_own_start_up_runs_its_first_asset_on_a_set_up_home(tmp_path: Path) -> None:
    started = dagster_start(tmp_path)
    assert started > 0  # its first asset ran, after the launch
    assert (tmp_path / "dagster-floor" / "dagster" / "dagster.yaml").is_file()


def test_memory_is_sampled_over_the_whole_process_tree(tmp_path: Path) -> None:
    child = "x = bytearray(80_000_000); import time; time.sleep(0.5)"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    measured = measure([sys.executable, "-c", parent], env=dict(os.environ), cwd=tmp_path)
    assert measured.peak_mb > 80 and measured.seconds > 0.5


def test_the_bytes_written_are_counted_over_the_whole_process_tree(tmp_path: Path) -> None:
    out = tmp_path / "out.bin"
    child = f"open({str(out)!r}, 'wb').write(b'x' * 3_000_000)"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"
    measured = measure([sys.executable, "-c", parent], env=dict(os.environ), cwd=tmp_path)
    assert 3_000_000 <= measured.written_bytes < 3_500_000


def test_a_run_writes_its_transcripts_and_a_workload_shows_its_bytes_beside_them(
    tmp_path: Path,
) -> None:
    framework = ours(TINY, tmp_path)
    transcripts = TINY.transcript_bytes()
    assert transcripts > 200_000 and framework.written_bytes > transcripts
    bare = Measured(1.0, 1.0, written_bytes=transcripts)
    figures = written_figures(TINY, bare, framework)
    assert figures["floor_written_x"] == 1.0 and figures["written_x"] > 1.0
    assert written_figures(Workload("N", "none", 2, 0.0, 1), bare, framework) == {}


def test_a_failing_command_stops_the_benchmark_with_its_output(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="exited 3:\nboom"):
        measure(
            [sys.executable, "-c", "print('boom'); raise SystemExit(3)"],
            env=dict(os.environ),
            cwd=tmp_path,
        )


def test_a_workload_home_is_set_up_before_anything_is_measured(tmp_path: Path) -> None:
    env = prepared_env(tmp_path)
    home = Path(env["DAGSTER_HOME"])
    assert "BatchingSqliteEventLogStorage" in (home / "dagster.yaml").read_text()
    assert (home / "history" / "runs.db").is_file()
    assert env["EVALS_PIPELINE_STORAGE"] == str(tmp_path / "storage")


def test_a_fresh_home_workload_runs_on_an_empty_home_with_the_template_shipped(
    tmp_path: Path,
) -> None:
    env = fresh_env(tmp_path / "probe")
    assert not Path(env["DAGSTER_HOME"]).exists()
    key = template_key(fresh_settings)
    assert any((root / key).is_dir() for root in template_roots())  # as `make` leaves it
    fresh = Workload("TF", "2 cases", cases=2, transcript_mb=0.0, workers=2, fresh_home=True)
    assert ours(fresh, tmp_path).seconds > 0
    # The run's own home was created by the run, from the template.
    home = tmp_path / "dagster"
    assert "BatchingSqliteEventLogStorage" in (home / "dagster.yaml").read_text()
    assert set(databases(home)) >= {Path("history/runs.db"), Path("schedules/schedules.db")}
    [report] = (tmp_path / "storage" / "bench_tf" / "eval_report").glob("*/results.jsonl")
    assert len(report.read_text().splitlines()) == 2
    assert fresh_home_seconds(tmp_path / "timed", runs=1) > 0
    assert (tmp_path / "timed" / "fresh-0" / "history" / "runs.db").is_file()


def test_an_outcome_prints_and_records_every_part_and_its_ratio() -> None:
    outcome = Outcome(
        parts={"floor": Measured(2.0, 50.0), "ours": Measured(3.0, 120.0)},
        seconds=3.0,
        peak_mb=120.0,
        ratio=1.5,
        reference="the floor",
    )
    assert outcome.line() == "floor 2.00 s 50 MB | ours 3.00 s 120 MB | 1.50x the floor"
    row = outcome.row()
    assert (row["floor_seconds"], row["ours_peak_mb"], row["ratio"]) == (2.0, 120.0, 1.5)


def test_registration_validates_registers_and_ticks_the_sensor_once(tmp_path: Path) -> None:
    outcome = registration(TINY, tmp_path)
    assert list(outcome.parts) == ["validate", "register", "sensor"]
    assert outcome.reference == "the 10 s target"
    assert set(outcome.figures) == {"sensor_load_seconds", "sensor_tick_seconds"}
    # The partitions the sensor's tick found registered (it checks its cursor holds each case).
    suite = load_suite(tmp_path / "suite" / "bench.eval.yaml")
    instance = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    assert instance.get_dynamic_partitions(case_partitions_name(suite.slug)) == [
        "case-0",
        "case-1",
    ]


def test_reporting_reports_every_copied_case_twice_and_compares_the_two(tmp_path: Path) -> None:
    suite = Workload("T", "3 cases", cases=3, transcript_mb=0.0, workers=2)
    outcome = reporting(suite, tmp_path)
    assert list(outcome.parts) == ["report", "compare"]
    assert set(outcome.figures) == {"report_load_seconds", "report_step_seconds"}
    # Each report step checks its report counts every case; here, the two reports themselves.
    reports = sorted((tmp_path / "storage" / "bench_t" / "eval_report").glob("*/results.jsonl"))
    assert len(reports) == 3  # the one real case's run, then the two timed ones
    assert [len(r.read_text().splitlines()) for r in reports].count(3) == 2


def test_the_html_report_of_every_agents_copied_cases_is_timed(tmp_path: Path) -> None:
    suite = Workload("T", "3 cases x 2 agents", cases=3, transcript_mb=0.1, workers=2, agents=2)
    outcome = html_report(suite, tmp_path)
    assert list(outcome.parts) == ["report"] and outcome.reference == "the 15 s target"
    [first, timed] = sorted(
        (tmp_path / "storage" / "bench_t" / "eval_report").glob("*/results.jsonl"),
        key=lambda p: p.stat().st_mtime,
    )
    assert len(first.read_text().splitlines()) == 2  # the one real case, for each agent
    assert len(timed.read_text().splitlines()) == 6
    pages = sorted(p.relative_to(timed.parent) for p in timed.parent.glob("cases/*/*.js"))
    assert [str(p) for p in pages] == [
        f"cases/fake-{a}/case-{c}.js" for a in range(2) for c in range(3)
    ]


def test_the_daemon_backfills_the_cases_the_cli_ran(tmp_path: Path) -> None:
    outcome = through_daemon(TINY, tmp_path)
    assert list(outcome.parts) == ["cli", "daemon"] and outcome.reference == "the CLI"
    assert outcome.figures["backfill_runs"] >= 1 and outcome.peak_mb > 0
    for side in ("cli", "daemon"):
        [report] = (tmp_path / side / "storage" / "bench_t" / "eval_report").glob("*/results.jsonl")
        assert len(report.read_text().splitlines()) == TINY.cases


def test_make_bench_runs_all_but_the_long_one_and_appends_a_row_per_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [n for n, b in BENCHES.items() if b.default] == [
        "W0",
        "W1",
        "W1-fresh",
        "W2",
        "W4",
        "W5",
        "W6",
        "W6-scattered",
    ]
    folders: list[Path] = []

    def touch(folder: Path) -> Outcome:
        folders.append(folder)
        (folder / "left").write_text("here")
        return Outcome({"only": Measured(1.0, 10.0)}, 1.0, 10.0, 0.1, "the 10 s target")

    monkeypatch.setattr("benchmarks.run.BENCHES", {"WT": Bench("WT", "a touch", touch)})
    results = tmp_path / "results.jsonl"
    monkeypatch.setattr(sys, "argv", ["run", "--results", str(results), "--keep"])
    assert main() == 0
    [row] = [json.loads(line) for line in results.read_text().splitlines()]
    assert (row["workload"], row["only_seconds"], row["ratio"]) == ("WT", 1.0, 0.1)
    assert row["commit"] and row["commit"] != "unknown"
    assert (folders[0] / "left").read_text() == "here"  # --keep
    shutil.rmtree(folders[0])

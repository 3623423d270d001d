"""The history domain on hand-made outcomes: pairing, change lists, McNemar against the exact
binomial computed here, the previous report (previous nightly), trend, the regression gate."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from evals_pipeline.history import (
    REPORT_ASSET,
    CaseOutcome,
    check_regressions,
    compare_runs,
    entry_for,
    previous_entry,
    read_entry,
    suite_entries,
    trend,
)
from evals_pipeline.history.bootstraps import BOOTSTRAPS_FILE, Bootstraps
from evals_pipeline.history.entries import REPORT_FILE
from evals_pipeline.models.history import AgentRunFigures, RunComparison, RunEntry, Trigger
from evals_pipeline.models.report import AgentSummary, EvalReport
from evals_pipeline.reporting import render_markdown


def entry(run_id: str, ms: int, trigger: Trigger = "cli") -> RunEntry:
    figures = AgentRunFigures(agent="bot", cases=0, passed=0, failed=0, errors=0, mean_score=None)
    return RunEntry(
        suite="s", run_id=run_id, created_ms=ms, trigger=trigger, folder=f"/r/{run_id}",
        agents=[figures],
    )  # fmt: skip


def outcome(test_id: str, verdict: str, score: float = 1.0) -> CaseOutcome:
    return CaseOutcome(
        agent="bot", case_key=test_id, test_id=test_id, verdict=verdict,  # type: ignore[arg-type]
        score=score, error="boom\nmore" if verdict == "error" else None,
    )  # fmt: skip


def exact_p(b: int, c: int) -> float:
    n = b + c
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


def test_compare_pairs_cases_and_lists_changes() -> None:
    before = [outcome(f"t{i}", "pass") for i in range(10)] + [
        outcome("x1", "fail", 0.2),
        outcome("gone", "pass"),
    ]
    # t0..t6 regress (t6 errors), x1 is fixed, t7..t9 still pass, `added` is new.
    after = [outcome(f"t{i}", "fail", 0.0) for i in range(6)] + [outcome("t6", "error", 0.9)]
    after += [outcome(f"t{i}", "pass") for i in (7, 8, 9)]
    after += [outcome("x1", "pass"), outcome("added", "fail", 0.1)]
    reasons = {("bot", "t0"): "score 0.00 < 0.8: contains"}
    result = compare_runs(entry("a", 1), before, entry("b", 2), after, reasons=reasons)
    (delta,) = result.agents
    assert delta.n_paired == 11
    assert (delta.regressed, delta.fixed, delta.new, delta.removed) == (7, 1, 1, 1)
    table = delta.mcnemar.table if delta.mcnemar else None
    assert table is not None and (table.b, table.c) == (1, 7)  # A = the newer run
    assert delta.mcnemar is not None and delta.mcnemar.p_exact == pytest.approx(exact_p(1, 7))
    assert delta.significant_drop == (exact_p(1, 7) < 0.05)
    assert delta.pass_rate_before == pytest.approx(10 / 11)
    assert delta.pass_rate_after == pytest.approx(4 / 11)
    # An error scores 0 in the bootstrap: before 10 + 0.2, after 3 + 1 = 4 over 11 cases.
    assert delta.bootstrap is not None
    assert delta.bootstrap.delta == pytest.approx((4 - 10.2) / 11)
    by_case = {(c.test_id, c.change): c for c in result.changes}
    assert by_case[("t0", "regressed")].reason == "score 0.00 < 0.8: contains"
    assert by_case[("t6", "regressed")].reason == "boom"  # no reason given: the error's line
    assert by_case[("t6", "regressed")].after == "error"
    assert ("x1", "fixed") in by_case and ("gone", "removed") in by_case
    assert by_case[("added", "new")].reason == "verdict fail"


def test_a_significant_drop_needs_fewer_passes_and_p_below_005() -> None:
    before = [outcome(f"t{i}", "pass") for i in range(6)]
    after = [outcome(f"t{i}", "fail", 0.0) for i in range(6)]
    drop = compare_runs(entry("a", 1), before, entry("b", 2), after, reasons={})
    assert drop.agents[0].significant_drop and drop.agents[0].mcnemar is not None
    assert drop.agents[0].mcnemar.p_exact == pytest.approx(exact_p(0, 6))
    gain = compare_runs(entry("b", 2), after, entry("c", 3), before, reasons={})
    assert not gain.agents[0].significant_drop  # same p, but more passes
    gate = check_regressions(drop, required=set())
    assert not gate.passed and "McNemar p = 0.0312" in gate.description
    assert check_regressions(gain, required={"t1"}).passed
    assert check_regressions(None, required={"t1"}).passed


def test_previous_of_a_nightly_is_the_previous_nightly() -> None:
    entries = [entry("n1", 1, "nightly"), entry("c1", 2), entry("n2", 3, "nightly"), entry("u", 4)]
    current = entry("n3", 5, "nightly")
    previous = previous_entry(entries, current)
    assert previous is not None and previous.run_id == "n2"
    other = previous_entry(entries, entry("c2", 5))
    assert other is not None and other.run_id == "u"
    assert previous_entry([], current) is None
    assert [e.run_id for e in trend(entries, current, length=3)] == ["n2", "u", "n3"]


def test_markdown_has_since_the_previous_run() -> None:
    before = [outcome("t1", "pass"), outcome("t2", "pass")]
    after = [outcome("t1", "pass"), outcome("t2", "fail", 0.1)]
    since = compare_runs(
        entry("a", 1), before, entry("b", 2), after, reasons={("bot", "t2"): "too short"}
    )
    summary = AgentSummary(agent="bot", cases=2, passed=1, failed=1, errors=0, mean_score=0.55)
    report = EvalReport(suite="s", created_ms=2, agents=[summary], since_previous=since)
    text = render_markdown(report)
    assert "## Since the previous run" in text
    assert "| bot | 2 | 100.0% | 50.0% | -50.0 pp | 1.0000 |" in text
    assert "- bot / t2 (pass -> fail): too short" in text
    assert "Since the previous run" not in render_markdown(
        report.model_copy(update={"since_previous": None})
    )


def test_a_comparisons_bootstraps_are_read_back_for_the_same_inputs(tmp_path: Path) -> None:
    """The bootstraps a report's comparison drew are kept in its folder; comparing the same
    outcomes again reads them (a planted value shows it), other outcomes draw their own."""
    before = [outcome(f"t{i}", "pass") for i in range(8)]
    after = [outcome(f"t{i}", "fail", 0.0) if i < 3 else outcome(f"t{i}", "pass") for i in range(8)]

    def compared(bootstraps: Bootstraps) -> RunComparison:
        return compare_runs(
            entry("a", 1), before, entry("b", 2), after, reasons={}, bootstraps=bootstraps
        )

    drawn = Bootstraps()
    first = compared(drawn)
    drawn.write(tmp_path)
    assert compared(Bootstraps.read(tmp_path)) == first
    stored = json.loads((tmp_path / BOOTSTRAPS_FILE).read_text())
    [key] = stored
    (tmp_path / BOOTSTRAPS_FILE).write_text(json.dumps({key: {**stored[key], "delta": 0.5}}))
    planted = compared(Bootstraps.read(tmp_path))
    assert planted.agents[0].bootstrap is not None and planted.agents[0].bootstrap.delta == 0.5
    other = compare_runs(
        entry("a", 1),
        after,
        entry("b", 2),
        before,
        reasons={},
        bootstraps=Bootstraps.read(tmp_path),
    )
    assert other.agents[0].bootstrap is not None
    assert other.agents[0].bootstrap.delta == pytest.approx(3 / 8)
    (tmp_path / BOOTSTRAPS_FILE).write_text("{half")
    assert Bootstraps.read(tmp_path).known == {}


def test_an_entry_is_read_from_the_head_of_its_report(tmp_path: Path) -> None:
    """A report folder's entry, read without validating the rest of report.json, is the one the
    whole report gives; a folder without a report (or a half-written one) has none."""
    since = compare_runs(entry("a", 1), [outcome("t1", "pass")], entry("b", 2), [], reasons={})
    summary = AgentSummary(
        agent="bot", cases=2, passed=1, failed=1, errors=0, mean_score=0.55,
        cost_usd=0.25, cost_per_pass_usd=0.25,
    )  # fmt: skip
    report = EvalReport(
        suite="s", created_ms=2, run_id="b", trigger="nightly", agents=[summary],
        since_previous=since,
    )  # fmt: skip
    folder = tmp_path / "s" / REPORT_ASSET / "b"
    folder.mkdir(parents=True)
    (folder / REPORT_FILE).write_text(report.model_dump_json(indent=2))
    assert read_entry(folder) == entry_for(report, folder)
    assert suite_entries(tmp_path, "s") == [entry_for(report, folder)]
    (folder / REPORT_FILE).write_text(report.model_dump_json()[:50])
    assert read_entry(folder) is None and read_entry(tmp_path) is None


def test_an_older_report_reads_with_errors_counted_as_not_passed(tmp_path: Path) -> None:
    """Reports written before the one pass rate stored passed / (passed + failed) as `pass_rate`:
    history (`runs`, the trend, the previous run) reads them as passed / cases."""
    old = {
        "agent": "bot", "cases": 10, "passed": 9, "failed": 0, "errors": 1,
        "pass_rate": 1.0, "mean_score": 1.0, "cost_usd": 0.0,
    }  # fmt: skip
    before = {"suite": "s", "run_id": "a", "created_ms": 1, "folder": "/r/a", "agents": [old]}
    report = {
        "suite": "s", "created_ms": 2, "run_id": "b", "agents": [old],
        "since_previous": {"suite": "s", "before": before, "after": before | {"run_id": "b"}},
        "trend": [before],
    }  # fmt: skip
    folder = tmp_path / "s" / REPORT_ASSET / "b"
    folder.mkdir(parents=True)
    (folder / REPORT_FILE).write_text(json.dumps(report))
    entry = read_entry(folder)
    assert entry is not None and entry.agents[0].pass_rate == pytest.approx(0.9)
    assert entry.agents[0].pass_rate_graded == 1.0
    parsed = EvalReport.model_validate_json((folder / REPORT_FILE).read_bytes())
    assert parsed.agents[0].pass_rate == pytest.approx(0.9)
    assert parsed.trend[0].agents[0].pass_rate == pytest.approx(0.9)
    assert parsed.since_previous is not None
    assert parsed.since_previous.before.agents[0].pass_rate == pytest.approx(0.9)


def test_reading_reports_loads_no_llm_client_nor_agent_target() -> None:
    # `compare` and `history` read stored grades and reports: the judges' usage those hold is
    # a record, and the models of LLM clients and agent targets stay unloaded (~0.1 s).
    code = (
        "import sys, evals_pipeline.history.entries\n"
        "names = ('evals_pipeline.llm.client', 'evals_pipeline.models.targets')\n"
        "print(sorted(m for m in names if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.stdout.strip(), done.stderr) == ("[]", "")

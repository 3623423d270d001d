"""The reporter over grades built here: figures per agent, failure reasons, Markdown, the text
table, results.jsonl and the Parquet tables, checked against docs/storage.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import (
    AssertionOutcome,
    CaseGrade,
    GraderResult,
    TrialGrade,
    Verdict,
)
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline.models.report import EvalReport
from evals_pipeline.reporting import (
    build_report,
    render_markdown,
    render_text_table,
    write_report,
)
from evals_pipeline.reporting.markdown import HEADERS
from evals_pipeline.reporting.results_jsonl import render_results_jsonl, result_line
from evals_pipeline.reporting.tables import cases_table, graders_table

STORAGE_DOC = Path(__file__).resolve().parents[2] / "docs" / "storage.md"


def grader(
    name: str, verdict: Verdict, score: float | None = None, *, error: str | None = None
) -> GraderResult:
    if score is None and verdict != "error":
        score = 1.0 if verdict == "pass" else 0.0
    return GraderResult(
        name=name,
        type="contains",
        score=score,
        verdict=verdict,
        error=error,
        stderr="boom\n" if error else None,
        assertions=[AssertionOutcome(text=f"{name} holds", passed=verdict == "pass")],
        duration_ms=3,
    )


def trial(
    verdict: Verdict,
    score: float,
    graders: list[GraderResult],
    *,
    number: int = 0,
    cost: float | None = None,
    tokens: tuple[int, int, int] | None = None,
    duration: int | None = None,
    error: str | None = None,
    stage: str | None = None,
) -> TrialGrade:
    return TrialGrade.model_validate(
        {
            "trial": number,
            "score": score,
            "verdict": verdict,
            "execution_status": {
                "pass": "ok",
                "fail": "quality_failure",
                "error": "execution_error",
            }[verdict],
            "failure_stage": stage,
            "error": error,
            "graders": graders,
            "token_usage": TokenUsage(input=tokens[0], output=tokens[1], cached=tokens[2])
            if tokens
            else None,
            "cost_usd": cost,
            "wall_ms": duration,
        }
    )


def case(
    agent: str, test_id: str, trials: list[TrialGrade], score: float | None = None
) -> CaseGrade:
    """A case grade whose verdict, status and error follow its best trial."""
    best = max(trials, key=lambda t: (t.verdict != "error", t.score))
    return CaseGrade(
        case_key=test_id,
        test_id=test_id,
        agent=agent,
        threshold=0.8,
        score=best.score if score is None else score,
        verdict=best.verdict,
        execution_status=best.execution_status,
        failure_stage=best.failure_stage,
        error=best.error,
        trials=trials,
    )


def passing(
    agent: str,
    test_id: str,
    *,
    cost: float | None = None,
    tokens: tuple[int, int, int] | None = None,
    duration: int | None = None,
) -> CaseGrade:
    graded = trial("pass", 1.0, [grader("g", "pass")], cost=cost, tokens=tokens, duration=duration)
    return case(agent, test_id, [graded])


def failing(agent: str, test_id: str, score: float = 0.25) -> CaseGrade:
    graders = [grader("g", "pass"), grader("tests-pass", "fail"), grader("style", "fail")]
    return case(agent, test_id, [trial("fail", score, graders)])


def erroring(agent: str, test_id: str, error: str = "agent crashed\nTraceback ...") -> CaseGrade:
    return case(agent, test_id, [trial("error", 0.0, [], error=error, stage="agent")])


# --- figures --------------------------------------------------------------------------------


def test_an_error_is_not_a_pass_and_the_mean_score_leaves_errors_out() -> None:
    grades = [
        passing("a", "t1"),
        passing("a", "t2"),
        failing("a", "t3", score=0.25),
        erroring("a", "t4"),
    ]
    [summary] = build_report("s", grades, agents=["a"]).agents
    assert (summary.cases, summary.passed, summary.failed, summary.errors) == (4, 2, 1, 1)
    assert summary.pass_rate == pytest.approx(2 / 4)  # passed / cases
    assert summary.pass_rate_graded == pytest.approx(2 / 3)  # passed / (passed + failed)
    assert summary.counts_text == "2/4 passed · 1 error"
    assert summary.mean_score == pytest.approx((1.0 + 1.0 + 0.25) / 3)


def test_only_errors_give_a_zero_rate_and_no_mean() -> None:
    [summary] = build_report("s", [erroring("a", "t1")], agents=["a"]).agents
    assert (summary.cases, summary.errors) == (1, 1)
    assert summary.pass_rate == 0.0 and summary.pass_rate_graded is None
    assert summary.mean_score is None
    assert summary.cost_per_pass_usd is None  # nothing passed: no cost per pass, not infinity


def test_cost_tokens_and_duration_add_up_over_every_trial() -> None:
    two_trials = case(
        "a",
        "t1",
        [
            trial("fail", 0.0, [grader("g", "fail")], cost=0.01, tokens=(10, 5, 1), duration=100),
            trial(
                "pass",
                1.0,
                [grader("g", "pass")],
                number=1,
                cost=0.02,
                tokens=(20, 7, 0),
                duration=300,
            ),
        ],
    )
    no_usage = passing("a", "t2")  # no cost, tokens or duration recorded: counted as zero / skipped
    one_trial = passing("a", "t3", cost=0.005, tokens=(1, 1, 1), duration=200)
    [summary] = build_report("s", [two_trials, no_usage, one_trial], agents=["a"]).agents
    assert summary.cost_usd == pytest.approx(0.035)
    # Every trial's cost, failed ones too, over the cases that passed.
    assert summary.cost_per_pass_usd == pytest.approx(0.035 / 3)
    assert summary.total_tokens == 16 + 27 + 3
    assert summary.mean_duration_ms == pytest.approx((100 + 300 + 200) / 3)


def test_agents_without_grades_still_appear_in_order() -> None:
    report = build_report("s", [passing("b", "t1"), passing("zz", "t1")], agents=["a", "b"])
    assert [a.agent for a in report.agents] == ["a", "b", "zz"]  # unlisted agents come last
    empty = report.agents[0]
    assert (empty.cases, empty.passed, empty.failed, empty.errors) == (0, 0, 0, 0)
    assert empty.pass_rate is None and empty.mean_score is None
    assert empty.cost_usd is None and empty.total_tokens is None and empty.mean_duration_ms is None


def test_failure_reasons_name_the_error_stage_and_first_line_or_the_failing_graders() -> None:
    grades = [
        passing("a", "ok"),
        failing("b", "z-fails", score=0.25),
        erroring("b", "a-errors", error="\n  agent crashed: exit 3\nTraceback (most recent)\n"),
        erroring("a", "no-message", error=""),
    ]
    report = build_report("s", grades, agents=["a", "b"])
    reasons = [(f.agent, f.test_id, f.verdict, f.reason) for f in report.failures]
    assert reasons == [
        ("a", "no-message", "error", "error in agent: unknown"),
        ("b", "a-errors", "error", "error in agent: agent crashed: exit 3"),
        ("b", "z-fails", "fail", "score 0.25 < 0.8: tests-pass, style"),
    ]


def test_failure_reason_is_at_most_300_characters() -> None:
    [failure] = build_report("s", [erroring("a", "t", error="x" * 1000)], agents=["a"]).failures
    assert failure.reason == ("error in agent: " + "x" * 1000)[:300]


def test_failure_reason_lists_each_failing_grader_once_over_trials() -> None:
    graded = case(
        "a",
        "t",
        [
            trial("fail", 0.0, [grader("x", "fail"), grader("y", "error", error="bad config")]),
            trial("fail", 0.5, [grader("x", "fail"), grader("y", "pass")], number=1),
        ],
    )
    [failure] = build_report("s", [graded], agents=["a"]).failures
    assert failure.reason == "score 0.50 < 0.8: x, y"


def test_a_low_score_with_no_failing_grader_says_so() -> None:
    graded = case("a", "t", [trial("fail", 0.5, [grader("x", "pass", 0.5)])])
    [failure] = build_report("s", [graded], agents=["a"]).failures
    assert failure.reason == "score 0.50 < 0.8: no grader failed; the weighted score is too low"


# --- text -----------------------------------------------------------------------------------


def test_markdown_has_the_table_the_unrun_count_and_the_failures() -> None:
    report = build_report(
        "demo", [passing("a", "t1"), failing("a", "t2")], agents=["a", "b"], not_run=3
    )
    text = render_markdown(report)
    lines = text.splitlines()
    assert lines[0] == "# Eval report: demo"
    assert lines[2] == "| " + " | ".join(HEADERS) + " |"
    assert (
        lines[4] == "| a | 2 | 1 | 1 | 0 | 50.0% | 0.625 | - | - | - | - |"
    )  # no cost or tokens reported: unknown, never 0
    assert lines[5] == "| b | 0 | 0 | 0 | 0 | - | - | - | - | - | - |"
    assert "3 registered (case, agent) partitions have no grades yet." in lines
    assert "## Failures and errors" in lines
    assert lines[-1] == "- a / t2: score 0.25 < 0.8: tests-pass, style"
    assert text.endswith("\n")


def test_markdown_without_failures_has_no_failure_section() -> None:
    text = render_markdown(build_report("demo", [passing("a", "t1")], agents=["a"]))
    assert "Failures" not in text
    assert "no grades yet" not in text


def test_text_table_is_aligned() -> None:
    report = build_report(
        "demo",
        [
            passing("careful", "t1", cost=0.001, tokens=(100, 20, 0), duration=45),
            failing("x", "t1"),
        ],
        agents=["careful", "x"],
    )
    *lines, blank, note = render_text_table(report).splitlines()
    assert len(lines) == 4 and blank == "" and note.startswith("Pass rate = passed / cases")
    assert len({len(line) for line in lines}) == 1, lines
    assert lines[0].split() == " ".join(HEADERS).split()
    assert set(lines[1]) == {"-", " "}
    assert lines[2].split() == [
        "careful",
        "1",
        "1",
        "0",
        "0",
        "100.0%",
        "1.000",
        "0.0010",
        "0.0010",
        "120",
        "45",
    ]
    assert lines[3].startswith("x ")  # agent names are left-aligned, numbers right-aligned
    assert lines[3].split()[-1] == "-"


# --- results.jsonl --------------------------------------------------------------------------


def test_results_jsonl_has_agentv_fields_and_a_grader_error_is_skip() -> None:
    graded = case(
        "a",
        "t",
        [
            trial(
                "fail",
                0.5,
                [grader("ok", "pass"), grader("broken", "error", error="grader crashed")],
                cost=0.01,
                tokens=(3, 4, 0),
                duration=12,
            )
        ],
    )
    line = result_line("suite-x", graded, created_ms=1_700_000_000_000)
    assert line["timestamp"] == "2023-11-14T22:13:20+00:00"
    assert (line["test_id"], line["suite"], line["target"]) == ("t", "suite-x", "a")
    assert line["score"] == 0.5
    assert line["execution_status"] == "quality_failure"
    assert line["token_usage"] == {"input": 3, "output": 4, "cached": 0}
    assert (line["cost_usd"], line["duration_ms"]) == (0.01, 12)
    assert "error" not in line and "trials" not in line
    scores = line["scores"]
    assert isinstance(scores, list)
    ok, broken = scores
    assert ok == {
        "name": "ok",
        "type": "contains",
        "score": 1.0,
        "weight": 1.0,
        "verdict": "pass",
        "assertions": [{"text": "ok holds", "passed": True}],
        "duration_ms": 3,
    }
    assert broken["verdict"] == "skip"
    assert broken["score"] == 0.0  # AgentV needs a number; ours was null
    assert broken["error"] == "grader crashed"


def test_results_jsonl_case_error_and_trials() -> None:
    errored = erroring("a", "t")
    line = result_line("s", errored, created_ms=0)
    assert line["error"] == message_of(errored.error)
    assert line["failure_stage"] == "agent"
    assert line["scores"] == []

    retried = case(
        "a",
        "r",
        [
            trial("error", 0.0, [], error="timeout", stage="agent"),
            trial("pass", 1.0, [grader("g", "pass")], number=1, duration=7),
        ],
    )
    line = result_line("s", retried, created_ms=0)
    assert line["trials"] == [
        {"attempt": 0, "score": 0.0, "verdict": "error"},
        {"attempt": 1, "score": 1.0, "verdict": "pass"},
    ]
    assert line["duration_ms"] == 7  # figures of the best trial
    scores = line["scores"]
    assert isinstance(scores, list)
    assert [s["name"] for s in scores] == ["g"]


def test_render_results_jsonl_is_one_json_line_per_grade() -> None:
    grades = [passing("a", "t1"), failing("a", "t2"), erroring("b", "t1")]
    text = render_results_jsonl("s", grades, created_ms=0)
    assert text.endswith("\n")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(r["target"], r["test_id"]) for r in lines] == [("a", "t1"), ("a", "t2"), ("b", "t1")]


# --- Parquet tables -------------------------------------------------------------------------


def documented_columns(table: str) -> list[str]:
    """The column list docs/storage.md gives for `table`, e.g. `cases.parquet`: `a, b (x|y), c`."""
    text = STORAGE_DOC.read_text()
    match = re.search(rf"`{re.escape(table)}`: `([^`]*)`", text)
    assert match, f"docs/storage.md does not list the columns of {table}"
    without_notes = re.sub(r"\([^)]*\)", "", match.group(1))
    return [c.strip() for c in without_notes.replace("\n", " ").split(",")]


def mixed_grades() -> list[CaseGrade]:
    two_trials_two_graders = case(
        "a",
        "t1",
        [
            trial("fail", 0.0, [grader("x", "fail"), grader("y", "error", error="bad")]),
            trial(
                "pass",
                1.0,
                [grader("x", "pass"), grader("y", "pass")],
                number=1,
                cost=0.02,
                tokens=(5, 6, 7),
                duration=40,
            ),
        ],
    )
    return [two_trials_two_graders, failing("b", "t1"), erroring("b", "t2")]


def test_cases_table_has_the_documented_columns_and_one_row_per_case() -> None:
    columns = documented_columns("cases.parquet")
    assert len(columns) == 26
    table = cases_table("s", mixed_grades())
    assert table.column_names == columns
    assert table.num_rows == 3
    rows = table.to_pylist()
    first = rows[0]
    assert (first["suite"], first["agent"], first["test_id"], first["verdict"]) == (
        "s",
        "a",
        "t1",
        "pass",
    )
    assert first["trials"] == 2
    # usage comes from the best trial
    assert (first["input_tokens"], first["output_tokens"], first["cached_tokens"]) == (5, 6, 7)
    assert (first["cost_usd"], first["duration_ms"]) == (0.02, 40)
    error = rows[2]
    assert (error["verdict"], error["execution_status"], error["failure_stage"]) == (
        "error",
        "execution_error",
        "agent",
    )
    assert error["error"].startswith("agent crashed")
    assert error["input_tokens"] is None and error["cost_usd"] is None


def test_graders_table_has_the_documented_columns_and_one_row_per_trial_and_grader() -> None:
    columns = documented_columns("graders.parquet")
    assert len(columns) == 15
    table = graders_table("s", mixed_grades())
    assert table.column_names == columns
    # a/t1: 2 trials x 2 graders; b/t1: 1 trial x 3 graders; b/t2 errored before grading: none
    assert table.num_rows == 2 * 2 + 3
    rows = table.to_pylist()
    assert [(r["agent"], r["test_id"], r["trial"], r["grader"]) for r in rows[:4]] == [
        ("a", "t1", 0, "x"),
        ("a", "t1", 0, "y"),
        ("a", "t1", 1, "x"),
        ("a", "t1", 1, "y"),
    ]
    grader_error = rows[1]
    assert grader_error["verdict"] == "error"
    assert grader_error["score"] is None  # documented: a grader error has a null score
    assert (grader_error["error"], grader_error["stderr"]) == ("bad", "boom\n")
    assert json.loads(rows[0]["assertions_json"]) == [
        {"text": "x holds", "passed": False, "evidence": None}
    ]


def _composite_grade() -> CaseGrade:
    inner = grader("inner", "pass").model_copy(
        update={"type": "composite", "scores": [grader("leaf", "pass")]}
    )
    outer = grader("outer", "fail", 0.5).model_copy(
        update={"type": "composite", "scores": [inner, grader("other", "fail")]}
    )
    return case("a", "t", [trial("fail", 0.5, [outer, grader("plain", "fail")])])


def test_composite_members_are_rows_naming_their_parent() -> None:
    rows = graders_table("s", [_composite_grade()]).to_pylist()
    assert [(r["grader"], r["parent"]) for r in rows] == [
        ("outer", None),
        ("inner", "outer"),
        ("leaf", "outer/inner"),
        ("other", "outer"),
        ("plain", None),
    ]


def test_composite_members_nest_in_results_jsonl_as_agentv_scores() -> None:
    line = result_line("s", _composite_grade(), created_ms=0)
    scores: Any = line["scores"]
    assert [s["name"] for s in scores] == ["outer", "plain"]
    assert [m["name"] for m in scores[0]["scores"]] == ["inner", "other"]
    assert scores[0]["scores"][0]["scores"][0]["name"] == "leaf"
    assert "scores" not in scores[1]


def test_empty_grades_give_empty_tables_with_the_schema() -> None:
    assert cases_table("s", []).num_rows == 0
    assert graders_table("s", []).column_names == documented_columns("graders.parquet")


# --- write_report ---------------------------------------------------------------------------


def test_write_report_writes_every_file(tmp_path: Path) -> None:
    grades = list(
        reversed(mixed_grades())
    )  # written sorted by agent and test id whatever the order
    report = build_report("s", grades, agents=["a", "b", "c"], not_run=1, run_id="r1")
    files = write_report(report, grades, tmp_path / "out")
    assert sorted(p.name for p in files.folder.iterdir()) == [
        "cases",
        "cases.parquet",
        "graders.parquet",
        "report.html",
        "report.json",
        "results.jsonl",
        "summary.md",
    ]
    assert files.summary_md.read_text() == render_markdown(report)
    cases = pq.read_table(files.cases_parquet)
    assert [(r["agent"], r["test_id"]) for r in cases.to_pylist()] == [
        ("a", "t1"),
        ("b", "t1"),
        ("b", "t2"),
    ]
    assert pq.read_table(files.graders_parquet).num_rows == 7
    results = [json.loads(line) for line in files.results_jsonl.read_text().splitlines()]
    assert [(r["target"], r["test_id"]) for r in results] == [("a", "t1"), ("b", "t1"), ("b", "t2")]
    assert {r["timestamp"] for r in results} == {
        result_line("s", grades[0], report.created_ms)["timestamp"]
    }
    again = EvalReport.model_validate_json(files.report_json.read_text())
    assert again == report
    assert [a.agent for a in again.agents] == ["a", "b", "c"]
    assert again.not_run == 1 and again.run_id == "r1"
    assert not again.all_passed

"""Judged report output: the report round-trips through JSON, and `write_report` writes the
dimensions and pairwise Parquet tables with the columns docs/storage.md documents."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import EvalReport
from evals_pipeline.reporting import build_report, write_report
from evals_pipeline_tests.reporting.judged_records import (
    CAPABILITY,
    consistent,
    graded,
    judged,
    label,
    pair,
    reading,
    vote,
)
from evals_pipeline_tests.reporting.test_reporting import documented_columns


def judged_run() -> tuple[EvalReport, list[CaseGrade], list[CaseJudgment], list[CasePairwise]]:
    grades = [graded("a", "t1", ["pass", "fail"]), graded("b", "t1", ["fail", "fail"])]
    judgments = [
        judged("a", "t1", [True, False], votes=[vote("j1-2025", "PASS", True)], calls=3),
        judged("b", "t1", [False, None], failure=CAPABILITY),
    ]
    pairwise = [
        pair("t1", "b", "a", "B", [*consistent("j1"), reading("j2", "FIRST", "FIRST")],
             per_dimension="TIE")
    ]  # fmt: skip
    labels = [label("t1", "PASS", agent="a"), label("t1", "FAIL", agent="b")]
    report = build_report(
        "s", grades, agents=["a", "b"], judgments=judgments, pairwise=pairwise, labels=labels
    )
    return report, grades, judgments, pairwise


def test_the_judged_report_round_trips_through_json() -> None:
    report = judged_run()[0]
    assert EvalReport.model_validate_json(report.model_dump_json()) == report


def test_write_report_writes_the_judged_tables_with_the_documented_columns(
    tmp_path: Path,
) -> None:
    report, grades, judgments, pairwise = judged_run()
    files = write_report(report, grades, tmp_path, judgments=judgments, pairwise=pairwise)
    assert files.dimensions_parquet == tmp_path / "dimensions.parquet"
    assert files.pairwise_parquet == tmp_path / "pairwise.parquet"

    dimensions = pq.read_table(files.dimensions_parquet)
    assert dimensions.column_names == documented_columns("dimensions.parquet")
    rows = dimensions.to_pylist()
    assert [(r["agent"], r["trial"], r["dimension"], r["passed"]) for r in rows] == [
        ("a", 0, "correctness", True),
        ("a", 1, "correctness", False),
        ("b", 0, "correctness", False),
        ("b", 1, "correctness", None),
    ]
    first = rows[0]
    assert (first["suite"], first["case_key"], first["test_id"]) == ("s", "t1", "t1")
    assert (first["blended_score"], first["heuristic_score"], first["panel_score"]) == (
        1.0,
        1.0,
        None,
    )
    assert (first["n_votes"], first["n_valid"], first["llm_excluded"]) == (1, 1, False)
    assert first["failure_primary"] is None
    assert (rows[2]["failure_primary"], rows[2]["failure_tier"]) == (
        "incorrect_implementation",
        "capability",
    )

    table = pq.read_table(files.pairwise_parquet)
    assert table.column_names == documented_columns("pairwise.parquet")
    readings = table.to_pylist()
    assert [(r["dimension"], r["judge"], r["r1"], r["r2"]) for r in readings] == [
        ("overall", "j1", "FIRST", "SECOND"),
        ("overall", "j2", "FIRST", "FIRST"),
    ]
    biased = readings[1]
    assert (biased["agent_a"], biased["agent_b"], biased["winner"], biased["verdict"]) == (
        "b", "a", "a", "B",
    )  # fmt: skip
    assert biased["position_following"] and biased["vote"] == "TIE" and biased["bias_detected"]
    assert (biased["judge_model"], biased["seed"]) == ("j2-2025", 7)


def test_write_report_skips_the_judged_tables_without_rows(tmp_path: Path) -> None:
    report, grades, _, _ = judged_run()
    files = write_report(report, grades, tmp_path, judgments=[judged("a", "t1", [])])
    assert files.dimensions_parquet is None and files.pairwise_parquet is None
    assert not (tmp_path / "dimensions.parquet").exists()

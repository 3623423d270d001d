"""The case pipeline without Dagster: each case's session and grade are made on the worker that
ran its agent, and they are what the layers one by one (run_agents, enrich_runs, grade_cases)
make of the same cases."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.layers import enrich_runs, grade_cases, run_agents, run_case_pipeline
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.defs.conftest import write_suite

TESTS = [("greets", "hello"), ("counts", "three"), ("names", "world")]


def _cases(tmp_path: Path) -> list[ResolvedCase]:
    return resolve_cases(load_suite(write_suite(tmp_path, TESTS)))


def test_the_pipeline_makes_what_the_layers_one_by_one_make(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    made = run_case_pipeline(
        cases, lambda layer: tmp_path / "piped" / layer, workers=2, sessions=True, grades=True
    )
    runs = run_agents(cases, tmp_path / "layered" / "agent_runs", workers=2)
    sessions = enrich_runs(runs, tmp_path / "layered" / "sessions")
    grades = grade_cases(cases, sessions, workers=2)

    def verdicts(graded: list[CaseGrade]) -> list[tuple[str, str, str, float]]:
        return [(g.case_key, g.agent, g.verdict, g.score) for g in graded]

    assert len(made.runs) == len(cases) == 6
    assert [(s.case_key, s.agent) for s in made.sessions] == [(r.case_key, r.agent) for r in runs]
    assert verdicts(made.grades) == verdicts(grades)
    assert {g.verdict for g in made.grades} == {"pass", "fail"}  # echo passes "hello", silent not
    assert all(s.messages_path and Path(str(s.messages_path)).exists() for s in made.sessions)


def test_agent_runs_alone_make_no_session_and_no_grade(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    made = run_case_pipeline(
        cases, lambda layer: tmp_path / layer, workers=2, sessions=False, grades=False
    )
    assert len(made.runs) == 6 and made.sessions == [] and made.grades == []
    assert not (tmp_path / "sessions").exists()


def test_sessions_without_grades_grade_nothing(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    made = run_case_pipeline(
        cases, lambda layer: tmp_path / layer, workers=1, sessions=True, grades=False
    )
    assert len(made.sessions) == 6 and made.grades == []

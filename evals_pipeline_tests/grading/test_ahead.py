"""Grades made ahead while the agents run: the grades step takes them as made, equal to the
ones it makes itself, grades again any case it cannot take (and those that call a model), and
a whole run through Dagster runs every grader once."""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs import assets
from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.enrichers.ahead import SessionsAhead
from evals_pipeline.grading.ahead import GradesAhead, calls_no_model
from evals_pipeline.layers import (
    enrich_runs,
    grade_cases,
    grade_when_made,
    grades_ahead,
    run_agents,
    sessions_ahead,
)
from evals_pipeline.models.assertions import LlmGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.storage import messages as messages_storage
from evals_pipeline.suites import load_suite, resolve_cases

AGENT = """\
import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
json.dump({"output": [{"role": "assistant", "content": "done"}]}, open(out, "w"))
"""

# Appends a line per call to the file beside it: how many times each case was graded.
GRADER = """\
import json, pathlib, sys
payload = json.load(sys.stdin)
with open(pathlib.Path(__file__).with_name("graded.txt"), "a") as calls:
    calls.write(payload["test_id"] + "\\n")
print(json.dumps({"score": 1.0 if "done" in (payload["output"] or "") else 0.0}))
"""


@pytest.fixture(autouse=True)
def _graders_may_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's folder, where the grader logs its calls, is writable in the sandbox."""
    (tmp_path / "suite").mkdir()
    monkeypatch.setenv(WRITABLE_VAR, str(tmp_path / "suite"))


def _suite(root: Path, tests: int = 4, trials: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "agent.py").write_text(AGENT)
    (root / "grader.py").write_text(GRADER)
    grader = f"{{type: code-grader, command: [{sys.executable}, grader.py]}}"
    lines = [
        f"execution: {{targets: [a], workers: 2, trials: {{count: {trials}}}}}",
        "targets:",
        "  - {name: a, provider: cli, command: 'python3 {EVAL_DIR}/agent.py --out {OUTPUT_FILE}'}",
        "tests:",
        *(f"  - {{id: t{i}, input: question {i}, assertions: [{grader}]}}" for i in range(tests)),
    ]
    path = root / "ahead.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _graded(suite: Path) -> list[str]:
    """The test ids the grader was called for, in no particular order."""
    calls = suite.parent / "graded.txt"
    return sorted(calls.read_text().split()) if calls.exists() else []


def _run_ahead(cases: list[ResolvedCase], tmp_path: Path) -> tuple[list[Session], GradesAhead]:
    """The agents run with sessions and grades made ahead; the sessions as the step takes them."""
    grades = grades_ahead(cases, workers=2)
    sessions = SessionsAhead(grade_when_made(grades))
    made_in = tmp_path / "sessions"
    runs = run_agents(
        cases, tmp_path / "runs", workers=2, finished=sessions_ahead(sessions, made_in)
    )
    taken = enrich_runs(runs, made_in, ahead=sessions)
    sessions.close()
    return taken, grades


def _comparable(grades: list[CaseGrade]) -> list[dict[str, object]]:
    """Grades without the timings of their graders' runs."""
    timing = {"duration_ms", "start_ms"}
    out = []
    for grade in grades:
        fields = grade.model_dump(exclude={"trials"})
        fields["trials"] = [
            {
                **t.model_dump(exclude={"graders", "duration_ms"}),
                "graders": [g.model_dump(exclude=timing) for g in t.graders],
            }
            for t in grade.trials
        ]
        out.append(fields)
    return out


def test_the_step_takes_the_grades_made_ahead_as_it_would_make_them(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", trials=2)
    cases = resolve_cases(load_suite(suite))
    sessions, ahead = _run_ahead(cases, tmp_path)
    taken = grade_cases(cases, sessions, workers=2, ahead=ahead)
    ahead.close()
    assert _graded(suite) == sorted(f"t{i}" for i in range(4) for _ in range(2))
    assert [g.verdict for g in taken] == ["pass"] * 4
    again = grade_cases(cases, sessions, workers=2)
    assert len(_graded(suite)) == 16  # graded again without them
    assert _comparable(taken) == _comparable(again)


def test_sessions_made_ahead_feed_their_graders_without_being_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "suite", trials=2)
    cases = resolve_cases(load_suite(suite))
    reads: list[str] = []
    real = messages_storage.read_messages

    def counted(path: str | Path) -> list[Message]:
        reads.append(str(path))
        return real(path)

    monkeypatch.setattr(messages_storage, "read_messages", counted)
    sessions, ahead = _run_ahead(cases, tmp_path)
    taken = grade_cases(cases, sessions, workers=2, ahead=ahead)
    ahead.close()
    assert [g.verdict for g in taken] == ["pass"] * 4
    assert reads == []  # the graders got the enricher's messages, not the file's
    again = grade_cases(cases, sessions, workers=2)
    assert sorted(reads) == sorted(s.messages_path for s in sessions)
    assert _comparable(taken) == _comparable(again)


def test_a_case_changed_since_it_was_graded_ahead_is_graded_again(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", tests=2)
    cases = resolve_cases(load_suite(suite))
    sessions, ahead = _run_ahead(cases, tmp_path)
    stricter = [c.model_copy(update={"threshold": 0.9}) if c.test_id == "t1" else c for c in cases]
    grade_cases(stricter, sessions, workers=2, ahead=ahead)
    ahead.close()
    assert _graded(suite) == ["t0", "t1", "t1"]


def test_a_case_calls_a_model_through_an_llm_grader_even_without_its_target(
    tmp_path: Path,
) -> None:
    [case] = resolve_cases(load_suite(_suite(tmp_path / "suite", tests=1)))
    assert calls_no_model(case)
    graded = case.model_copy(update={"assertions": [LlmGraderAssertion(type="llm-grader")]})
    assert not calls_no_model(graded)


def test_cases_that_call_a_model_are_left_to_the_step(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", tests=1)
    [case] = resolve_cases(load_suite(suite))
    judged = case.model_copy(update={"llm_targets": {"judge": {"provider": "openai"}}})
    ahead = GradesAhead([judged], lambda *_, **__: pytest.fail("graded ahead"), workers=1)
    [session], _ = _run_ahead([case], tmp_path)
    ahead.session_made(session)
    assert ahead.take(judged, [session]) is None
    ahead.close()


def test_a_dagster_run_of_the_suite_takes_every_grade_made_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[str] = []
    real = GradesAhead.take

    def spy(self: GradesAhead, case: ResolvedCase, sessions: list[Session]) -> CaseGrade | None:
        grade = real(self, case, sessions)
        if grade is not None:
            taken.append(case.test_id)
        return grade

    monkeypatch.setattr(GradesAhead, "take", spy)
    suite = _suite(tmp_path / "suite")
    with dg.instance_for_test() as instance:
        outcome = run_suite(
            instance,
            load_suite(suite),
            str(tmp_path / "storage"),
            agents=["a"],
            case_keys=[f"t{i}" for i in range(4)],
            echo=lambda _: None,
        )
    [summary] = outcome.report.agents
    assert (summary.cases, summary.passed) == (4, 4)
    assert sorted(taken) == _graded(suite) == ["t0", "t1", "t2", "t3"]  # each graded once


def test_grades_made_ahead_for_a_step_that_never_ran_are_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions step fails, so the grades step never claims its grades: they are closed
    when the run is over, not left to be waited for at the process's exit."""
    closed: list[GradesAhead] = []
    real = GradesAhead.close

    def spy(self: GradesAhead) -> None:
        closed.append(self)
        real(self)

    def failing(*_: object, **__: object) -> list[Session]:
        raise RuntimeError("the sessions step failed")

    monkeypatch.setattr(GradesAhead, "close", spy)
    monkeypatch.setattr(assets, "enrich_runs", failing)
    suite = _suite(tmp_path / "suite", tests=2)
    with dg.instance_for_test() as instance, pytest.raises(Exception, match="sessions step"):
        run_suite(
            instance,
            load_suite(suite),
            str(tmp_path / "storage"),
            agents=["a"],
            case_keys=["t0", "t1"],
            echo=lambda _: None,
        )
    assert len(closed) == 1

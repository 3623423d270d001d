"""Judges never contradict the graders: the correctness and completeness heuristics follow the
trial's own verdict (required graders, the case's threshold); an errored trial is judged on
nothing and counted apart; an empty diff is no misunderstanding when the task needs no file
change; the judgments tally counts only judged cases. Real grading on real sessions, and the
quickstart through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from evals_pipeline.grading import aggregate_trials, grade_trial
from evals_pipeline.judging.changes import expects_file_changes
from evals_pipeline.judging.heuristics import completeness, correctness
from evals_pipeline.judging.panel import judge_case
from evals_pipeline.layers.judgments import judge_cases
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.judging import CaseJudgment, TrialJudgment
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session
from evals_pipeline.progress import ProgressEvent
from evals_pipeline.reporting import build_report
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader
from evals_pipeline_tests.reporting.judged_records import judged
from evals_pipeline_tests.test_cli import QUICKSTART, cli, printed_report_folder

FAST = {"name": "fast-enough", "type": "latency", "threshold": 10_000}
CRASHES = "import sys\nsys.exit('KeyError: max_words')\n"


def _answer(make_session: SessionFactory, text: str, case_key: str = "case-1") -> Session:
    messages = [Message(role="user", content="Q"), Message(role="assistant", content=text)]
    return make_session(messages, case_key=case_key)


def _judged(
    case_factory: CaseFactory, session: Session, assertions: list[dict[str, Any]], **case: Any
) -> tuple[TrialGrade, CaseJudgment]:
    c = case_factory(assertions, **case)
    trial = grade_trial(c, session, 0)
    return trial, judge_case(c, [session], aggregate_trials(c, [trial]), None, {})


def _passed(judgment: CaseJudgment) -> dict[str, bool | None]:
    return {d.dimension: d.passed for t in judgment.trials for d in t.dimensions}


def test_a_failed_required_grader_is_not_correct_though_the_latency_check_passed(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    # 43 for 17 + 25: the required check fails, the latency check passes (1 of 2 checks).
    required = {"type": "equals", "value": "42", "required": True}
    trial, judgment = _judged(make_case, _answer(make_session, "43"), [required, FAST])
    assert trial.verdict == "fail"
    assert correctness(trial).score == 0.0
    assert "required grader 'equals-42'" in correctness(trial).reason
    assert completeness(trial).score == 0.0
    assert _passed(judgment)["correctness"] is False
    assert _passed(judgment)["completeness"] is False

    trial, judgment = _judged(make_case, _answer(make_session, "42"), [required, FAST])
    assert trial.verdict == "pass" and correctness(trial).score == 1.0
    assert _passed(judgment)["correctness"] is True


def test_a_score_under_the_case_threshold_is_not_correct(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    # Two of three checks pass: 0.67 is above the blend's 0.5 but under the case's 0.8.
    checks = [{"type": "contains", "value": "Paris"}, {"type": "contains", "value": "France"}, FAST]
    trial, judgment = _judged(make_case, _answer(make_session, "Paris"), checks, threshold=0.8)
    assert trial.verdict == "fail" and 0.5 < trial.score < 0.8
    assert (
        correctness(trial).score == 0.0 and "below the case threshold" in correctness(trial).reason
    )
    assert _passed(judgment)["correctness"] is False

    # The same grades pass under a threshold of 0.6: the heuristic follows the case's verdict.
    trial, judgment = _judged(make_case, _answer(make_session, "Paris"), checks, threshold=0.6)
    assert trial.verdict == "pass" and _passed(judgment)["correctness"] is True


def test_an_errored_trial_is_judged_on_nothing(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    broken = {"name": "word-count", "type": "code-grader"}
    broken["command"] = python_grader(tmp_path, "broken.py", CRASHES)  # type: ignore[assignment]
    trial, judgment = _judged(make_case, _answer(make_session, "Hello"), [broken, FAST])
    assert trial.verdict == "error"
    [t] = judgment.trials
    assert t.judged is False and t.dimensions == ()
    assert correctness(trial).score is None

    crashed = make_session(status="agent_error", error="exited with code 3")
    _, judgment = _judged(make_case, crashed, [FAST])
    assert all(t.judged is False and not t.dimensions for t in judgment.trials)


def test_an_errored_trial_is_counted_undecided_never_in_n() -> None:
    errored = CaseJudgment(
        case_key="e", test_id="e", agent="a", trials=(TrialJudgment(trial=0, judged=False),)
    )
    report = build_report("s", [], agents=["a"], judgments=[judged("a", "t", [True]), errored])
    [rate] = report.rates
    assert (rate.n, rate.n_passed, rate.n_undecided, rate.n_environmental) == (1, 1, 1, 0)


def test_an_empty_diff_is_blamed_only_when_the_task_changes_files(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    workspace = {"workspace": {"template": str(tmp_path)}}
    miss = {"type": "contains", "value": "Goodbye"}
    reads_answer = python_grader(tmp_path, "answer.py", "print('{\"score\": 0}')\n")
    reads_files = python_grader(
        tmp_path, "files.py", "import json, sys\np = json.load(sys.stdin)['workspace_path']\n"
    )
    no_workspace = make_case([miss])
    text_task = make_case([miss, {"type": "code-grader", "command": reads_answer}], **workspace)
    file_task = make_case([miss, {"type": "file-changes", "modified": ["a.py"]}], **workspace)
    tested = make_case([miss, {"type": "code-grader", "command": reads_files}], **workspace)
    assert [expects_file_changes(c) for c in (no_workspace, text_task, file_task, tested)] == [
        False,
        False,
        True,
        True,
    ]

    session = _answer(make_session, "Hello")  # no diff
    for case, rule in ((no_workspace, "C3.outcome_failed"), (text_task, "C3.outcome_failed")):
        trial = grade_trial(case, session, 0)
        [t] = judge_case(case, [session], aggregate_trials(case, [trial]), None, {}).trials
        assert t.failure is not None and t.failure.rule_id == rule, t.failure
    trial = grade_trial(file_task, session, 0)
    [t] = judge_case(file_task, [session], aggregate_trials(file_task, [trial]), None, {}).trials
    assert t.failure is not None and t.failure.rule_id == "C1.empty_diff"


def test_the_judgments_tally_counts_only_judged_cases(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    broken = {"name": "word-count", "type": "code-grader"}
    broken["command"] = python_grader(tmp_path, "broken.py", CRASHES)  # type: ignore[assignment]
    hello = {"type": "contains", "value": "Hello"}
    cases = [
        make_case([hello, FAST], case_key="passes", test_id="passes"),
        make_case([{"type": "contains", "value": "Bye"}, FAST], case_key="fails", test_id="fails"),
        make_case([broken, FAST], case_key="grader-error", test_id="grader-error"),
        make_case([hello], case_key="agent-error", test_id="agent-error"),
    ]
    sessions = [_answer(make_session, "Hello", c.case_key) for c in cases[:3]]
    sessions.append(make_session(case_key="agent-error", status="agent_error", error="crashed"))
    grades = [
        aggregate_trials(c, [grade_trial(c, s, 0)]) for c, s in zip(cases, sessions, strict=True)
    ]
    events: list[ProgressEvent] = []
    judge_cases(cases, sessions, grades, None, workers=1, progress=events.append)
    assert events[-1].counts == {"passed": 1, "failed": 1, "not judged": 2}
    assert "passed 1, failed 1, not judged 2" in events[-1].tally()


def test_quickstart_judges_no_failed_or_errored_case_correct(tmp_path: Path) -> None:
    done = cli("run", str(QUICKSTART / "quickstart.eval.yaml"), home=tmp_path)
    assert done.code == 1, done.explain()  # the quickstart fails and errors some cases on purpose
    report = printed_report_folder(done.stdout)
    verdicts = {
        (r["agent"], r["test_id"]): r["verdict"]
        for r in pq.read_table(report / "cases.parquet").to_pylist()
    }
    assert sorted(verdicts.values()).count("pass") == 12, verdicts
    dimensions = pq.read_table(report / "dimensions.parquet").to_pylist()
    correct = {(r["agent"], r["test_id"]) for r in dimensions if r["dimension"] == "correctness"}
    assert {k for k, v in verdicts.items() if v != "error"} <= correct
    for row in dimensions:
        verdict = verdicts[(row["agent"], row["test_id"])]
        assert verdict != "error", f"an errored case was judged: {row}"
        if verdict == "fail" and row["dimension"] in ("correctness", "completeness"):
            assert row["passed"] is False, row
        if row["dimension"] == "correctness":
            assert row["passed"] is (verdict == "pass"), row
        # Question-and-answer tasks: an empty diff is never the reason they failed.
        assert row["failure_primary"] != "spec_misunderstanding", row
    assert "judgments: 20/20 done (passed 12, failed 5, not judged 3)" in done.stderr, (
        done.explain()
    )
    summary = (report / "summary.md").read_text(encoding="utf-8")
    assert "| careful | correctness | 9 | 100.0% |" in summary
    assert "| hasty | correctness | 3 | 100.0% |" not in summary
    assert "| hasty | correctness | 8 | 37.5% |" in summary

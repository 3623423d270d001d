"""Failure attribution (judging.md §9): one realistic trial per category, the §9.1 precedence
vectors F1-F3 and conflicts between rules, the secondary tags, and the §9.2 breakdown (F4).

Sessions are recorded the way the enricher records them: events written to Parquet and read
back, milestones computed from those events, and trials graded by `grade_trial`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.enrichers.milestones import compute_milestones
from evals_pipeline.grading import grade_trial
from evals_pipeline.judging.attribution import attribute_failure, failure_breakdown
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.judging import FailureClassification
from evals_pipeline.models.messages import Message, TokenUsage
from evals_pipeline.models.session import Session, TraceSummary
from evals_pipeline.storage.events import read_events, write_events
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader

START_MS = 1_700_000_000_000
TASK = "tests/test_parser.py::test_empty fails: parse('') returns None. Fix src/parser.py."
PARSER_DIFF = """diff --git a/src/parser.py b/src/parser.py
index 1111111..2222222 100644
--- a/src/parser.py
+++ b/src/parser.py
@@ -1,2 +1,4 @@
 def parse(text):
+    if not text.strip():
+        return []
     return text.split()
"""
TEST_DIFF = """diff --git a/tests/test_parser.py b/tests/test_parser.py
index 3333333..4444444 100644
--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,3 +1,3 @@
 def test_empty():
-    assert parse("") == []
+    assert parse("") is None
"""
FAILING_RUN = (
    "FAILED tests/test_parser.py::test_empty - AssertionError: expected [] got None\n"
    "41 passed, 1 failed in 3.21s"
)
PASSING_RUN = "42 passed in 3.40s"
HIT = {"type": "contains", "value": "parse"}
MISS = {"type": "contains", "value": "returns an empty list"}


@dataclass
class Stream:
    """A claude-code-like event stream, one model call per assistant event, 1 s apart."""

    events: list[EnrichedEvent] = field(default_factory=list)
    now: int = START_MS
    turn: int = 0

    def _add(self, kind: str, after_ms: int = 1000, **fields: Any) -> Stream:
        self.now += after_ms
        self.events.append(
            EnrichedEvent(
                seq=len(self.events),
                kind=kind,
                turn_index=self.turn,
                timestamp_ms=self.now,
                **fields,
            )
        )
        return self

    def user(self, text: str = TASK) -> Stream:
        return self._add("message", role="user", text=text)

    def say(self, text: str, **fields: Any) -> Stream:
        self.turn += 1
        return self._add("message", role="assistant", text=text, **fields)

    def call(
        self,
        tool: str,
        tool_input: dict[str, Any],
        output: str = "",
        *,
        exit_code: int | None = None,
        status: str = "ok",
        after_ms: int = 1000,
        **fields: Any,
    ) -> Stream:
        self.turn += 1
        return self._add(
            "tool_call",
            after_ms,
            role="assistant",
            tool=tool,
            native_tool=tool,
            tool_call_id=f"toolu_{len(self.events)}",
            tool_input=tool_input,
            tool_output=output,
            status=status,
            exit_code=exit_code,
            **fields,
        )

    def bash(self, command: str, output: str, exit_code: int = 0, **fields: Any) -> Stream:
        status = "ok" if exit_code == 0 else "error"
        return self.call(
            "Bash", {"command": command}, output, exit_code=exit_code, status=status, **fields
        )

    def read(self, path: str = "src/parser.py") -> Stream:
        return self.call("Read", {"file_path": path}, "def parse(text):\n    return text.split()\n")

    def edit(self, path: str = "src/parser.py") -> Stream:
        edit = {
            "file_path": path,
            "old_string": "def parse(text):",
            "new_string": "def parse(text):\n    if not text.strip():\n        return []",
        }
        return self.call("Edit", edit, "The file has been updated.")

    def retry(self, status: int, delay_ms: int) -> Stream:
        detail = {
            "attempt": 1,
            "max_retries": 10,
            "retry_delay_ms": delay_ms,
            "error_status": status,
        }
        return self._add("retry", after_ms=delay_ms, text="rate_limit_error", detail=detail)

    def compaction(self, summary: str) -> Stream:
        return self._add(
            "system_prompt", role="system", source="pi:summary", label="compaction", text=summary
        )

    def error(self, text: str, **detail: Any) -> Stream:
        return self._add("error", text=text, detail=detail or None)


Recorder = Callable[..., tuple[Session, list[EnrichedEvent]]]


@pytest.fixture
def record(make_session: SessionFactory, tmp_path: Path) -> Recorder:
    """Store a stream as the enricher does; the session and the events read back from Parquet."""
    counter = itertools.count()

    def make(stream: Stream, **overrides: Any) -> tuple[Session, list[EnrichedEvent]]:
        path = write_events(stream.events, tmp_path / f"events{next(counter)}.parquet")
        answers = [e.text for e in stream.events if e.role == "assistant" and e.kind == "message"]
        answer = answers[-1] if answers else ""
        messages = [Message(role="user", content=TASK), Message(role="assistant", content=answer)]
        fields: dict[str, Any] = {
            "agent_kind": "claude-code",
            "events_path": str(path),
            "milestones": compute_milestones(stream.events, START_MS),
            "trace_summary": TraceSummary(
                event_count=len(stream.events), llm_call_count=stream.turn
            ),
            "duration_ms": stream.now - START_MS,
            "end_ms": stream.now,
            "workspace_path": str(tmp_path / "workspace"),
            "retries": sum(1 for e in stream.events if e.kind == "retry"),
            **overrides,
        }
        return make_session(messages, **fields), read_events(path)

    return make


def classify(
    make_case: CaseFactory,
    session: Session,
    events: list[EnrichedEvent],
    assertions: list[dict[str, Any]] | None = None,
    **limits: Any,
) -> tuple[TrialGrade, FailureClassification | None]:
    trial = grade_trial(make_case([MISS] if assertions is None else assertions), session)
    return trial, attribute_failure(session, events, trial, **limits)


def expect(
    result: FailureClassification | None, primary: str, tier: str, rule_id: str
) -> FailureClassification:
    assert result is not None
    assert (result.primary, result.tier, result.rule_id) == (primary, tier, rule_id), result
    assert result.evidence, "the rule that fired must cite its evidence"
    return result


# --- no attribution ------------------------------------------------------------------------------


def test_passing_trial_has_no_failure(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit().bash("pytest -q", PASSING_RUN).say("Fixed parse().")
    trial, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF), [HIT])
    assert trial.verdict == "pass" and result is None


def test_grader_error_is_not_an_agent_failure(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit().say("Fixed parse().")
    trial, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF), [])
    assert trial.failure_stage == "grader" and result is None


def test_agent_crash_no_rule_recognises_is_left_unclassified(
    record: Recorder, make_case: CaseFactory
) -> None:
    stream = Stream().user().read()
    session, events = record(
        stream, status="agent_error", error="claude exited with code 1: Segmentation fault"
    )
    trial, result = classify(make_case, session, events)
    assert trial.verdict == "error" and result is None


# --- environmental ---------------------------------------------------------------------------


def test_e1_workspace_setup_failure(record: Recorder, make_case: CaseFactory) -> None:
    error = (
        "before_all hook failed: `pip install -e .` exited with code 1: "
        "ERROR: No matching distribution found for numpy==1.99"
    )
    session, events = record(Stream(), status="setup_error", error=error)
    _, result = classify(make_case, session, events)
    found = expect(result, "task_environment_defect", "environmental", "E1.setup_failed")
    assert "numpy==1.99" in found.evidence[0]
    # The agent never ran, so it never edited or tested either: nothing else fires.
    assert found.secondary == ()


def test_e2_run_ended_on_an_overloaded_provider(record: Recorder, make_case: CaseFactory) -> None:
    api_error = (
        'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    )
    stream = Stream().user().read().error(api_error, error="overloaded", api_error_status=529)
    session, events = record(stream, status="agent_error", error=api_error)
    _, result = classify(make_case, session, events)
    expect(result, "llm_provider_error", "environmental", "E2.terminated")


def test_e2_last_call_errored_beats_the_timeout(record: Recorder, make_case: CaseFactory) -> None:
    """Killed while backing off from a 503: the run timed out, but the provider is to blame."""
    stream = Stream().user().read().edit().retry(503, delay_ms=8_000)
    session, events = record(
        stream, status="timed_out", error="timed out after 600 s; the process group was killed"
    )
    _, result = classify(make_case, session, events)
    found = expect(result, "llm_provider_error", "environmental", "E2.last_call")
    assert found.secondary == ("wall_clock_timeout",)
    assert found.evidence[0].startswith(f"event:{events[-1].seq} retry")


def test_e2_three_provider_errors_in_a_row(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read()
    for _ in range(3):
        stream.error("stream error: 502 Bad Gateway; retrying turn")
    stream.say("I could not finish because the model API kept failing.")
    _, result = classify(make_case, *record(stream))
    found = expect(result, "llm_provider_error", "environmental", "E2.consecutive_errors")
    assert len(found.evidence) == 3
    # The run completed with an empty diff, so C1 fired too and is kept as secondary.
    assert found.secondary == ("spec_misunderstanding",)


def test_e3_disk_full_in_the_sandbox(record: Recorder, make_case: CaseFactory) -> None:
    stream = (
        Stream()
        .user()
        .bash(
            "pip install -e .",
            "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
            exit_code=1,
        )
        .read()
        .edit()
        .say("I edited parse() but could not install the package to run the tests.")
    )
    _, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF))
    found = expect(result, "sandbox_infra_failure", "environmental", "E3.tool_output")
    assert "No space left on device" in found.evidence[0]
    # One failed call in three is a high tool error rate, but the sandbox's, not tool misuse.
    assert found.secondary == ("unverified_completion", "high_tool_error_rate")


def test_e3_reading_a_log_that_mentions_enospc_is_no_infra_failure(
    record: Recorder, make_case: CaseFactory
) -> None:
    stream = (
        Stream()
        .user()
        .call("Read", {"file_path": "ci.log"}, "write failed: ENOSPC, retrying with smaller chunks")
        .edit()
        .bash("pytest -q", PASSING_RUN)
        .say("Handled the ENOSPC case in parse().")
    )
    _, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF))
    expect(result, "incorrect_implementation", "capability", "C3.outcome_failed")


def test_e3_test_process_killed_without_a_timeout(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit().bash("pytest -q", "Killed", exit_code=137)
    stream.say("The test run was killed; the fix should work.")
    _, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF))
    found = expect(result, "sandbox_infra_failure", "environmental", "E3.exit_137")
    assert "pytest -q" in found.evidence[0]


# --- resource --------------------------------------------------------------------------------


def test_r1_prompt_too_long(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().read("src/big_fixture.json").error("Prompt is too long")
    session, events = record(stream, status="agent_error", error="Prompt is too long")
    _, result = classify(make_case, session, events)
    expect(result, "context_window_exhausted", "resource", "R1.terminated")


def test_r1_context_nearly_full_outranks_capability_and_tags_compaction(
    record: Recorder, make_case: CaseFactory
) -> None:
    stream = Stream().user().read()
    stream.compaction("The user asked to fix parse(); src/parser.py was read.")
    stream.edit().bash("pytest -q", PASSING_RUN)
    stream.say("Done.", token_usage=TokenUsage(input=2_000, cached=194_000, output=300))
    session, events = record(stream, file_changes=PARSER_DIFF)
    _, result = classify(make_case, session, events, context_window=200_000)
    found = expect(result, "context_window_exhausted", "resource", "R1.context_full")
    assert "196000 input tokens" in found.evidence[0]
    assert found.secondary == ("incorrect_implementation", "history_truncated")
    _, without_limit = classify(make_case, session, events)
    expect(without_limit, "incorrect_implementation", "capability", "C3.outcome_failed")


def test_r2_timeout_that_never_ran_tests(record: Recorder, make_case: CaseFactory) -> None:
    """A timed-out run that also never tested its edit: resource beats capability (§9.1)."""
    stream = Stream().user().read().edit().read("src/lexer.py")
    session, events = record(
        stream,
        status="timed_out",
        error="timed out after 600 s; the process group was killed",
        file_changes=PARSER_DIFF,
    )
    assert session.milestone("first_test_run") is None
    _, result = classify(make_case, session, events)
    found = expect(result, "wall_clock_timeout", "resource", "R2.timed_out")
    assert found.secondary == ()


def test_r2_named_by_the_termination_beats_a_nearly_full_context(
    record: Recorder, make_case: CaseFactory
) -> None:
    """Within the resource tier the budget the run ended on wins over R1's earlier rule."""
    stream = Stream().user().read()
    stream.say("Reading more.", token_usage=TokenUsage(input=1_000, cached=190_000, output=50))
    session, events = record(stream, status="timed_out", error="timed out after 600 s")
    _, result = classify(make_case, session, events, context_window=200_000)
    found = expect(result, "wall_clock_timeout", "resource", "R2.timed_out")
    assert found.secondary == ("context_window_exhausted",)


def test_r3_max_turns_while_looping(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit()
    for _ in range(3):
        stream.bash("pytest -q tests/test_parser.py", FAILING_RUN, exit_code=1)
    stream.error("error_max_turns", subtype="error_max_turns", api_error_status=None)
    session, events = record(stream, status="agent_error", error="error_max_turns")
    _, result = classify(make_case, session, events)
    found = expect(result, "step_or_cost_budget_exhausted", "resource", "R3.terminated")
    assert found.secondary == ("looping", "tool_misuse", "high_tool_error_rate")


def test_r3_cost_budget(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit().bash("pytest -q", PASSING_RUN).say("Fixed.")
    session, events = record(stream, file_changes=PARSER_DIFF, cost_usd=2.31)
    _, result = classify(make_case, session, events, cost_budget_usd=2.0)
    expect(result, "step_or_cost_budget_exhausted", "resource", "R3.cost")


# --- capability ------------------------------------------------------------------------------


def test_c1_empty_diff(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().say("parse('') returns None because split() is never reached.")
    _, result = classify(make_case, *record(stream))
    expect(result, "spec_misunderstanding", "capability", "C1.empty_diff")


def test_c1_not_for_a_task_answered_in_text(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().say("parse('') returns None because split() is never reached.")
    _, result = classify(make_case, *record(stream), expects_changes=False)
    expect(result, "incorrect_implementation", "capability", "C3.outcome_failed")


def test_c1_edited_only_the_test_instead_of_the_traceback_file(
    record: Recorder, make_case: CaseFactory
) -> None:
    stream = Stream().user().read("tests/test_parser.py").edit("tests/test_parser.py")
    stream.bash("pytest -q", PASSING_RUN).say("The test expectation was wrong; fixed it.")
    session, events = record(stream, file_changes=TEST_DIFF)
    _, result = classify(make_case, session, events, task_files={"/repo/src/parser.py"})
    found = expect(result, "spec_misunderstanding", "capability", "C1.no_task_file")
    assert found.evidence == ("changed: tests/test_parser.py", "task files: /repo/src/parser.py")


def test_c1_modified_tests_when_forbidden(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().edit().edit("tests/test_parser.py")
    stream.bash("pytest -q", PASSING_RUN).say("Fixed parse() and the test.")
    session, events = record(stream, file_changes=PARSER_DIFF + TEST_DIFF)
    _, result = classify(make_case, session, events, protected_paths=["tests/*"])
    found = expect(result, "spec_misunderstanding", "capability", "C1.protected_path")
    assert "tests/test_parser.py" in found.evidence[0]


def test_c2_edit_after_the_last_test_run(record: Recorder, make_case: CaseFactory) -> None:
    stream = Stream().user().read().bash("pytest -q", FAILING_RUN, exit_code=1).edit()
    stream.say("Fixed parse() to return [] for blank input.")
    session, events = record(stream, file_changes=PARSER_DIFF)
    last_edit = session.milestone("last_edit")
    assert last_edit is not None
    _, result = classify(make_case, session, events)
    found = expect(result, "unverified_completion", "capability", "C2.no_check_after_edit")
    assert found.evidence[0].startswith(f"event:{last_edit.seq} last edit")


def test_c3_verified_but_wrong(record: Recorder, make_case: CaseFactory, tmp_path: Path) -> None:
    stream = Stream().user().read().edit().bash("pytest -q", PASSING_RUN)
    stream.say("Fixed parse(); all tests pass.")
    hidden = python_grader(tmp_path, "hidden.py", "print('{\"score\": 0.0}')")
    grader = {"type": "code-grader", "name": "hidden-tests", "command": hidden}
    _, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF), [grader])
    found = expect(result, "incorrect_implementation", "capability", "C3.outcome_failed")
    assert found.evidence == ("grader 'hidden-tests' (code-grader) failed, score 0.00",)


# --- §9.1 vectors ------------------------------------------------------------------------------


def timed_out_run(retries: list[tuple[int, int]]) -> Stream:
    """1800 s of work, interleaving (status, delay) provider retries; the last call succeeds."""
    stream = Stream().user()
    for status, delay in retries:
        stream.read(f"src/module_{len(stream.events)}.py").retry(status, delay)
    stream.edit()
    stream.now = START_MS + 1_800_000  # killed mid-work, well after the last event
    return stream


def test_section_9_1_f1_backoff_override(record: Recorder, make_case: CaseFactory) -> None:
    """judging.md §9.1 F1: timeout after 1800 s, 9 provider errors (HTTP 429), 620 s back-off (34%)."""
    delays = [20, 40, 80, 160, 160, 60, 40, 30, 30]
    stream = timed_out_run([(429, d * 1000) for d in delays])
    session, events = record(
        stream, status="timed_out", error="timed out after 1800 s; the process group was killed"
    )
    assert session.duration_ms == 1_800_000 and session.retries == 9
    _, result = classify(make_case, session, events)
    found = expect(result, "llm_provider_error", "environmental", "E2.backoff_share")
    assert found.secondary == ("wall_clock_timeout",)
    assert found.evidence[0] == (
        "9 provider retries (HTTP 429): 620 s back-off of 1800 s wall time (34%)"
    )


def test_section_9_1_f2_short_backoff_is_a_plain_timeout(
    record: Recorder, make_case: CaseFactory
) -> None:
    """judging.md §9.1 F2: 2 provider errors, 40 s back-off (2%), last call succeeded."""
    stream = timed_out_run([(429, 20_000), (429, 20_000)])
    session, events = record(
        stream, status="timed_out", error="timed out after 1800 s; the process group was killed"
    )
    _, result = classify(make_case, session, events)
    found = expect(result, "wall_clock_timeout", "resource", "R2.timed_out")
    assert found.secondary == ()


def test_section_9_1_f3_false_success_claim(
    record: Recorder, make_case: CaseFactory, tmp_path: Path
) -> None:
    """judging.md §9.1 F3: edits the traceback file; `pytest -q` after the last edit says
    `41 passed, 1 failed`; the final message says "all tests pass"."""
    stream = Stream().user().call("Search", {"pattern": "def parse"}, "src/parser.py:1")
    stream.read().read("tests/test_parser.py").edit()
    stream.bash("pytest -q", FAILING_RUN, exit_code=1)
    stream.say("I fixed parse() for blank input and all tests pass.")
    hidden = python_grader(tmp_path, "hidden.py", "print('{\"score\": 0.0}')")
    grader = {"type": "code-grader", "name": "hidden-tests", "command": hidden}
    session, events = record(stream, file_changes=PARSER_DIFF)
    _, result = classify(make_case, session, events, [grader], task_files={"src/parser.py"})
    found = expect(result, "unverified_completion", "capability", "C2.false_success_claim")
    assert found.secondary == ()
    assert found.evidence == (
        f"event:{events[5].seq} tool_call: $ pytest -q → 41 passed, 1 failed in 3.21s",
        "final answer: 'all tests pass'",
    )


@pytest.mark.parametrize(
    "answer",
    [
        "Not all tests pass yet: test_empty still fails.",
        "I couldn't get the tests passing before the deadline.",
        "The tests fail on blank input; I stopped there.",
    ],
)
def test_acknowledged_failure_is_no_false_success_claim(
    record: Recorder, make_case: CaseFactory, answer: str
) -> None:
    stream = Stream().user().read().edit().bash("pytest -q", FAILING_RUN, exit_code=1).say(answer)
    _, result = classify(make_case, *record(stream, file_changes=PARSER_DIFF))
    expect(result, "incorrect_implementation", "capability", "C3.outcome_failed")


# --- §9.2 breakdown ---------------------------------------------------------------------------


def classification(primary: str, tier: str) -> FailureClassification:
    return FailureClassification.model_validate(
        {"primary": primary, "tier": tier, "rule_id": "x", "evidence": ["e"]}
    )


def test_section_9_2_f4_breakdown() -> None:
    """judging.md §9.2 F4: 40 trials, 24 passed, 4 environmental → 0.1000 / 0.6000 / 0.6667."""
    failures = [
        *[classification("llm_provider_error", "environmental")] * 3,
        classification("sandbox_infra_failure", "environmental"),
        *[classification("wall_clock_timeout", "resource")] * 2,
        *[classification("incorrect_implementation", "capability")] * 10,
    ]
    breakdown = failure_breakdown(40, 24, failures)
    assert (breakdown.n_trials, breakdown.n_failed) == (40, 16)
    assert breakdown.infra_failure_rate is not None
    assert abs(breakdown.infra_failure_rate - 0.1) < 5e-5
    assert breakdown.pass_rate_incl_infra is not None
    assert abs(breakdown.pass_rate_incl_infra - 0.6) < 5e-5
    assert breakdown.pass_rate_excl_infra is not None
    assert abs(breakdown.pass_rate_excl_infra - 0.6667) < 5e-5
    provider = breakdown.by_category["llm_provider_error"]
    assert (provider.count, provider.rate_of_trials, provider.rate_of_failures) == (
        3,
        0.075,
        0.1875,
    )
    assert breakdown.by_category["spec_misunderstanding"].count == 0
    assert len(breakdown.by_category) == 9
    assert {t: c.count for t, c in breakdown.by_tier.items()} == {
        "environmental": 4,
        "resource": 2,
        "capability": 10,
    }


def test_breakdown_rates_are_none_without_a_denominator() -> None:
    env = classification("task_environment_defect", "environmental")
    breakdown = failure_breakdown(1, 0, [env])
    assert breakdown.pass_rate_excl_infra is None and breakdown.infra_failure_rate == 1.0
    assert failure_breakdown(0, 0, []).pass_rate_incl_infra is None
    with pytest.raises(ValueError):
        failure_breakdown(2, 2, [env])


def test_classification_tier_must_match_its_category() -> None:
    with pytest.raises(ValueError, match="tier"):
        classification("wall_clock_timeout", "capability")

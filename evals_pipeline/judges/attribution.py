"""Failure attribution (reference spec `judging.md` §9): why a failed trial failed, as one of nine
categories in three tiers, read off the signals an enriched session and its events carry.

Environmental failures (provider, sandbox, task defects) say nothing about the agent and leave the
capability rates; resource failures mean the agent ran out of a budget before anything was
checked; capability failures mean it finished and was wrong. Rules are tried in the precedence of
§9.1 and the first that fires is the primary category; every other one that fired is secondary.

How the spec's inputs map to ours: `termination_reason` is `Session.status` plus its `error`
text (timed_out → R2, setup_error → E1, agent_error + provider / sandbox / context / budget
wording → E2 / E3 / R1 / R3). Provider errors are `error` events; `retry` events are back-off,
timed by the `retry_delay_ms` / `delayMs` the CLI reports (codex reports none, so its runs never
fire E2's back-off override). An E3 pattern counts only in a failed tool result: reading a log
that mentions ENOSPC is no infrastructure failure. `history_truncated` is a compaction summary
event (pi; claude's compact_boundary is not an event). C2's "no check after the last edit" needs
an Edit/Write event: edits made through the shell leave none.

Left out, for want of a signal: E1's pre-run task validation (reference patch, FAIL_TO_PASS tests
already passing) and flaky re-runs of the final patch, since nothing validates the task or
replays the patch; E3's tool-server 5xx, since tool results carry no HTTP status; C3's split into
FAIL_TO_PASS / PASS_TO_PASS / compile errors, since graders report one score each (C3 cites the
failing graders instead); the grounding flags, which belong to judge verdicts, not trials.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from evals_pipeline.enrichers.milestones import EDIT_TOOLS, is_test_command, tool_command
from evals_pipeline.judges.file_changes import changed_files
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.judging import (
    FAILURE_TAXONOMY,
    CategoryCount,
    FailureBreakdown,
    FailureCategory,
    FailureClassification,
    FailureTier,
    TierCount,
)
from evals_pipeline.models.session import Session

E2_BACKOFF_SHARE = 0.25
TOOL_ERROR_RATE = 0.30
CONTEXT_FULL_SHARE = 0.95
PROVIDER_ERRORS_IN_A_ROW = 3
LOOP_REPEATS = 3
LOOP_WINDOW = 20
LOOP_DUPLICATE_SHARE = 0.30
PROVIDER_STATUSES = frozenset({429, 500, 502, 503, 504, 529})

_PROVIDER_MESSAGE = re.compile(
    r"rate.?limit|overloaded|internal server error|service unavailable|bad gateway"
    r"|gateway time-?out|APIConnectionError|ECONNRESET",
    re.IGNORECASE,
)
# A status code in an error message, e.g. "API Error: 529 {...}" or "HTTP 429": a bare number
# could be a duration or a count.
_STATUS_IN_TEXT = re.compile(
    r"(?:\bhttp(?:/[\d.]+)?|\bstatus(?:[ _]?code)?|\bapi error|\berror)\W{0,3}(\d{3})\b",
    re.IGNORECASE,
)
_SANDBOX = re.compile(
    r"No space left on device|ENOSPC|OOMKilled|Cannot allocate memory"
    r"|container .*(?:exited|not running|died)|docker: Error"
    r"|connection refused.*(?:sandbox|tool server)",
    re.IGNORECASE,
)
_CONTEXT = re.compile(
    r"context.?length|maximum context|prompt is too long|too many tokens|context_length_exceeded",
    re.IGNORECASE,
)
# Claude Code ends with subtype error_max_turns / error_max_budget_usd; output-token limits show
# as max_output_tokens or "output token maximum".
_BUDGET = re.compile(
    r"max[_ ]?turns|maximum number of turns|max[_ ]?budget|budget exceeded"
    r"|max_output_tokens|output token maximum",
    re.IGNORECASE,
)
_HARNESS_EXIT_124 = re.compile(r"exited with code 124\b")
_STATUS_KEYS = ("api_error_status", "error_status", "status", "status_code", "http_status")
_DELAY_KEYS = ("retry_delay_ms", "delayMs", "delay_ms")
_FAILED_STATUSES = frozenset({"error", "timeout", "cancelled"})
_FAILURES_IN_OUTPUT = re.compile(
    r"\b[1-9]\d*\s+(?:failed|failures?|errors?)\b|\bFAILED\b|^FAIL\b", re.MULTILINE
)
# Commands that check the work besides tests (is_test_command): builds, type checks, running it.
_BUILD_OR_RUN = re.compile(
    r"(?:^|[\s;&|(/])(?:make|cmake|tsc|mypy|pyright|javac|gcc|g\+\+|clang"
    r"|cargo\s+(?:build|check|run)|go\s+(?:build|vet|run)|dotnet\s+(?:build|run)"
    r"|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?(?:build|start|typecheck)"
    r"|(?:mvn|mvnw|gradle|gradlew)\s+(?:\S+\s+)*(?:compile|build|package)"
    r"|python[\d.]*\s+(?:-m\s+(?:py_compile|compileall)|\S+\.py)|node\s+\S+\.[cm]?js)\b"
)
_SUCCESS_CLAIM = re.compile(
    r"\b(?:all\s+(?:of\s+)?(?:the\s+)?(?:\d+\s+)?tests?|tests?|test suite|build)"
    r"\s+(?:now\s+|all\s+|are\s+|is\s+)*(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never)\b|n't\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")

_PRECEDENCE: tuple[FailureCategory, ...] = tuple(FAILURE_TAXONOMY)
_SNIPPET = 160


@dataclass(frozen=True)
class _Firing:
    category: FailureCategory
    clause: str
    evidence: tuple[str, ...]
    terminal: bool = False  # the run ended for this reason: the spec's `termination_reason`

    @property
    def tier(self) -> FailureTier:
        return FAILURE_TAXONOMY[self.category][1]

    @property
    def rule_id(self) -> str:
        return f"{FAILURE_TAXONOMY[self.category][0]}.{self.clause}"


@dataclass(frozen=True)
class _Trial:
    """One failed trial with the caller's limits, and the views of it the rules share."""

    session: Session
    events: Sequence[EnrichedEvent]
    grade: TrialGrade
    task_files: Collection[str] | None
    expects_changes: bool
    protected_paths: Collection[str]
    allowed_paths: Collection[str] | None
    context_window: int | None
    time_limit_s: float | None
    max_turns: int | None
    cost_budget_usd: float | None

    @cached_property
    def tool_calls(self) -> list[EnrichedEvent]:
        return [e for e in self.events if e.kind == "tool_call"]

    @cached_property
    def changes(self) -> list[str]:
        return sorted(changed_files(self.session.file_changes))

    @property
    def completed(self) -> bool:
        return self.session.status == "ok"

    @property
    def wall_ms(self) -> int | None:
        s = self.session
        if s.duration_ms is not None:
            return s.duration_ms
        return s.end_ms - s.start_ms if s.end_ms is not None and s.start_ms is not None else None


def attribute_failure(
    session: Session,
    events: list[EnrichedEvent],
    trial: TrialGrade,
    *,
    task_files: Collection[str] | None = None,
    expects_changes: bool = True,
    protected_paths: Collection[str] = (),
    allowed_paths: Collection[str] | None = None,
    context_window: int | None = None,
    time_limit_s: float | None = None,
    max_turns: int | None = None,
    cost_budget_usd: float | None = None,
) -> FailureClassification | None:
    """Classify a failed trial by §9's rules; None when there is no failure to attribute.

    None: the trial passed, a grader errored (no outcome was checked), or the run failed in a way
    no rule recognises (an `agent_error` matching no known pattern): no category is guessed.
    Limits come from the case and target, and a rule whose limit is None is skipped:
    `task_files` the files the task is about (reference patch, or named in the task or traceback;
    globs); `expects_changes` False for tasks answered in text, where an empty diff is no
    misunderstanding; `protected_paths` / `allowed_paths` the task's path constraints (globs);
    `context_window` in tokens; `time_limit_s`, `max_turns`, `cost_budget_usd` harness budgets.
    """
    if trial.verdict == "pass" or trial.failure_stage == "grader":
        return None
    t = _Trial(
        session,
        events,
        trial,
        task_files,
        expects_changes,
        protected_paths,
        allowed_paths,
        context_window,
        time_limit_s,
        max_turns,
        cost_budget_usd,
    )
    fired = [firing for rule in _RULES if (firing := rule(t)) is not None]
    if not fired:
        return None
    primary = _primary(fired)
    others = dict.fromkeys(f.category for f in fired if f.category != primary.category)
    return FailureClassification(
        primary=primary.category,
        tier=primary.tier,
        secondary=(*others, *_tags(t)),
        evidence=primary.evidence,
        rule_id=primary.rule_id,
    )


def failure_breakdown(
    n_trials: int, n_passed: int, classifications: Sequence[FailureClassification]
) -> FailureBreakdown:
    """The report's failure section (§9.2): counts and rates per category and tier.

    Failed trials without a classification (see `attribute_failure`) count in `n_failed` only.
    """
    n_failed = n_trials - n_passed
    if n_passed < 0 or n_failed < 0 or len(classifications) > n_failed:
        raise ValueError(
            f"{n_trials} trials, {n_passed} passed, {len(classifications)} classified failures"
        )
    by_category = {c: [x for x in classifications if x.primary == c] for c in _PRECEDENCE}
    tiers: tuple[FailureTier, ...] = ("environmental", "resource", "capability")
    by_tier = {tier: sum(1 for x in classifications if x.tier == tier) for tier in tiers}
    infra = by_tier["environmental"]
    return FailureBreakdown(
        n_trials=n_trials,
        n_failed=n_failed,
        by_category={
            c: CategoryCount(
                count=len(xs),
                rate_of_trials=_rate(len(xs), n_trials),
                rate_of_failures=_rate(len(xs), n_failed),
                confirmed=sum(1 for x in xs if x.check and x.check.confirmed is True),
                disputed=sum(1 for x in xs if x.check and x.check.confirmed is False),
            )
            for c, xs in by_category.items()
        },
        by_tier={
            t: TierCount(count=n, rate_of_trials=_rate(n, n_trials)) for t, n in by_tier.items()
        },
        infra_failure_rate=_rate(infra, n_trials),
        pass_rate_incl_infra=_rate(n_passed, n_trials),
        pass_rate_excl_infra=_rate(n_passed, n_trials - infra),
    )


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


def _primary(fired: list[_Firing]) -> _Firing:
    # Rules run in precedence order, so the first firing names the tier; within the resource
    # tier the budget the run actually ended on beats one it merely came close to.
    first = fired[0]
    if first.tier != "resource":
        return first
    return next((f for f in fired if f.tier == "resource" and f.terminal), first)


# --- environmental --------------------------------------------------------------------------


def _task_environment_defect(t: _Trial) -> _Firing | None:
    if t.session.status == "setup_error" or t.grade.failure_stage == "setup":
        detail = t.session.error or t.grade.error or "workspace setup failed"
        return _fire("task_environment_defect", "setup_failed", f"setup: {_snip(detail)}")
    return None


def _llm_provider_error(t: _Trial) -> _Firing | None:
    s = t.session
    if s.status == "agent_error" and s.error and _provider_signal(s.error):
        return _fire(
            "llm_provider_error", "terminated", f"session.error: {_snip(s.error)}", terminal=True
        )
    last = next((e for e in reversed(t.events) if _model_call(e)), None)
    if last is not None and _provider_error(last):
        return _fire("llm_provider_error", "last_call", _cite(last, _event_text(last)))
    run: list[EnrichedEvent] = []
    for event in t.events:
        if event.kind == "error" and _provider_error(event):
            run.append(event)
            if len(run) >= PROVIDER_ERRORS_IN_A_ROW:
                errors = [_cite(e, _event_text(e)) for e in run]
                return _fire("llm_provider_error", "consecutive_errors", *errors)
        elif _model_output(event):
            run = []
    wall = t.wall_ms
    if s.status == "timed_out" and wall:
        # pi's closing auto_retry_end is a retry event with neither a delay nor an error.
        retries = [
            e for e in t.events if e.kind == "retry" and (_delay_ms(e) or _provider_error(e))
        ]
        backoff = sum(_delay_ms(e) for e in retries)
        if backoff / wall >= E2_BACKOFF_SHARE:
            statuses = sorted({str(c) for e in retries if (c := _status(e)) is not None})
            summary = (
                f"{len(retries)} provider retries (HTTP {', '.join(statuses) or 'unknown'}): "
                f"{backoff / 1000:g} s back-off of {wall / 1000:g} s wall time "
                f"({backoff / wall:.0%})"
            )
            cites = [_cite(e, _event_text(e)) for e in retries if _delay_ms(e)]
            return _fire("llm_provider_error", "backoff_share", summary, *cites)
    return None


def _sandbox_infra_failure(t: _Trial) -> _Firing | None:
    s = t.session
    if s.status == "agent_error":
        for name, text in (("session.error", s.error or ""), ("stderr", s.stderr)):
            if match := _SANDBOX.search(text):
                return _fire(
                    "sandbox_infra_failure",
                    "terminated",
                    f"{name}: {_around(text, match)}",
                    terminal=True,
                )
    for call in t.tool_calls:
        output = call.tool_output or ""
        if _tool_failed(call) and (match := _SANDBOX.search(output)):
            return _fire(
                "sandbox_infra_failure", "tool_output", _cite(call, _around(output, match))
            )
    for call in t.tool_calls:
        if call.exit_code == 137 and call.status != "timeout" and s.status != "timed_out":
            summary = f"exit code 137 (killed) without a timeout: {_command(call)}"
            return _fire("sandbox_infra_failure", "exit_137", _cite(call, summary))
    return None


# --- resource --------------------------------------------------------------------------------


def _context_window_exhausted(t: _Trial) -> _Firing | None:
    s = t.session
    if s.status == "agent_error" and s.error and _CONTEXT.search(s.error):
        return _fire(
            "context_window_exhausted",
            "terminated",
            f"session.error: {_snip(s.error)}",
            terminal=True,
        )
    for event in t.events:
        if event.kind in ("error", "retry") and _CONTEXT.search(_event_text(event)):
            return _fire(
                "context_window_exhausted", "provider_error", _cite(event, _event_text(event))
            )
    if t.context_window:
        sized = [
            (e.token_usage.input + e.token_usage.cached, e)
            for e in t.events
            if e.token_usage is not None and e.role == "assistant"
        ]
        if sized:
            tokens, event = max(sized, key=lambda pair: pair[0])
            if tokens >= CONTEXT_FULL_SHARE * t.context_window:
                summary = f"{tokens} input tokens of a {t.context_window}-token context window"
                return _fire("context_window_exhausted", "context_full", _cite(event, summary))
    return None


def _wall_clock_timeout(t: _Trial) -> _Firing | None:
    s = t.session
    if s.status == "timed_out":
        return _fire(
            "wall_clock_timeout",
            "timed_out",
            f"session.status=timed_out: {_snip(s.error or '')}",
            terminal=True,
        )
    if s.error and _HARNESS_EXIT_124.search(s.error):
        return _fire(
            "wall_clock_timeout", "exit_124", f"session.error: {_snip(s.error)}", terminal=True
        )
    wall = t.wall_ms
    if t.time_limit_s is not None and wall is not None and wall >= t.time_limit_s * 1000:
        summary = f"wall time {wall / 1000:g} s ≥ limit {t.time_limit_s:g} s"
        return _fire("wall_clock_timeout", "wall_time", summary)
    return None


def _step_or_cost_budget_exhausted(t: _Trial) -> _Firing | None:
    s = t.session
    category: FailureCategory = "step_or_cost_budget_exhausted"
    if s.status == "agent_error" and s.error and _BUDGET.search(s.error):
        return _fire(category, "terminated", f"session.error: {_snip(s.error)}", terminal=True)
    for event in t.events:
        if event.kind == "error" and _BUDGET.search(_event_text(event)):
            return _fire(category, "limit_error", _cite(event, _event_text(event)))
    calls = s.trace_summary.llm_call_count
    if t.max_turns is not None and calls >= t.max_turns:
        return _fire(category, "max_turns", f"{calls} model calls, max_turns {t.max_turns}")
    if t.cost_budget_usd is not None and s.cost_usd is not None and s.cost_usd >= t.cost_budget_usd:
        summary = f"cost ${s.cost_usd:.4f} ≥ budget ${t.cost_budget_usd:.4f}"
        return _fire(category, "cost", summary)
    return None


# --- capability ------------------------------------------------------------------------------


def _capability(t: _Trial) -> _Firing | None:
    # C1, C2 and C3 exclude one another ("not C1", "not C1/C2"): the first to fire is the only one.
    if not t.completed:
        return None
    return _spec_misunderstanding(t) or _unverified_completion(t) or _incorrect_implementation(t)


def _spec_misunderstanding(t: _Trial) -> _Firing | None:
    category: FailureCategory = "spec_misunderstanding"
    if not t.changes:
        if t.expects_changes:
            return _fire(category, "empty_diff", "file_changes: the final diff is empty")
        return None
    changed = ", ".join(t.changes)
    if t.task_files and not any(_matches(path, t.task_files) for path in t.changes):
        task = ", ".join(sorted(t.task_files))
        return _fire(category, "no_task_file", f"changed: {changed}", f"task files: {task}")
    protected = [path for path in t.changes if _matches(path, t.protected_paths)]
    if protected:
        return _fire(category, "protected_path", f"changed protected files: {', '.join(protected)}")
    if t.allowed_paths is not None:
        outside = [path for path in t.changes if not _matches(path, t.allowed_paths)]
        if outside:
            return _fire(
                category, "outside_allowed", f"changed outside allowed paths: {', '.join(outside)}"
            )
    return None


def _unverified_completion(t: _Trial) -> _Firing | None:
    category: FailureCategory = "unverified_completion"
    last_edit = _last_edit_seq(t)
    checks = [e for e in t.tool_calls if _is_check(e)]
    if last_edit is not None and not any(e.seq > last_edit for e in checks):
        last_check = f"last check at event:{checks[-1].seq}" if checks else "no check ran at all"
        return _fire(
            category,
            "no_check_after_edit",
            f"event:{last_edit} last edit; no test/build/run command after it ({last_check})",
        )
    tests = [e for e in checks if _is_test(e)]
    answer = _final_answer(t)
    if tests and _tests_failed(tests[-1]) and (claim := _success_claim(answer)):
        last = tests[-1]
        return _fire(
            category,
            "false_success_claim",
            _cite(last, f"$ {_command(last)} → {_tail(last.tool_output or '')}"),
            f"final answer: {claim!r}",
        )
    return None


def _incorrect_implementation(t: _Trial) -> _Firing:
    failing = [g for g in t.grade.graders if g.verdict == "fail"]
    evidence = [
        f"grader {g.name!r} ({g.type}) failed"
        + (f", score {g.score:.2f}" if g.score is not None else "")
        + "".join(f"; {a.text}" for a in g.assertions if not a.passed)
        for g in failing
    ] or [f"trial score {t.grade.score:.2f} below the case threshold"]
    return _fire("incorrect_implementation", "outcome_failed", *(_snip(e) for e in evidence))


_RULES: tuple[Callable[[_Trial], _Firing | None], ...] = (
    _task_environment_defect,
    _llm_provider_error,
    _sandbox_infra_failure,
    _context_window_exhausted,
    _wall_clock_timeout,
    _step_or_cost_budget_exhausted,
    _capability,
)


# --- secondary tags ---------------------------------------------------------------------------


def _tags(t: _Trial) -> list[str]:
    tags: list[str] = []
    if _looping(t.tool_calls):
        tags.append("looping")
    if any(
        e.kind == "system_prompt" and "compact" in f"{e.label} {e.source}".lower() for e in t.events
    ):
        tags.append("history_truncated")
    if t.tool_calls:
        failed = [e for e in t.tool_calls if _tool_failed(e)]
        agent_caused = [e for e in failed if not _SANDBOX.search(e.tool_output or "")]
        if len(agent_caused) / len(t.tool_calls) > TOOL_ERROR_RATE:
            tags.append("tool_misuse")
        if len(failed) / len(t.tool_calls) > TOOL_ERROR_RATE:
            tags.append("high_tool_error_rate")
    return tags


def _looping(calls: Sequence[EnrichedEvent]) -> bool:
    keys = [_call_key(e) for e in calls]
    if any(len(set(keys[i : i + LOOP_REPEATS])) == 1 for i in range(len(keys) - LOOP_REPEATS + 1)):
        return True
    # The duplicate share needs a full window: in a five-call run, reading one file twice is
    # not a loop.
    if len(keys) < LOOP_WINDOW:
        return False
    window = keys[-LOOP_WINDOW:]
    duplicates = len(window) - len(set(window))
    return duplicates / LOOP_WINDOW >= LOOP_DUPLICATE_SHARE


def _call_key(event: EnrichedEvent) -> str:
    return f"{event.tool or event.native_tool}:{json.dumps(event.tool_input, sort_keys=True, default=str)}"


# --- signals ----------------------------------------------------------------------------------


def _fire(
    category: FailureCategory, clause: str, *evidence: str, terminal: bool = False
) -> _Firing:
    return _Firing(category, clause, tuple(evidence), terminal)


def _model_output(event: EnrichedEvent) -> bool:
    return event.role == "assistant" and event.kind in ("message", "tool_call")


def _model_call(event: EnrichedEvent) -> bool:
    """An event that ends a model call: its output, or the error or retry that replaced it."""
    return _model_output(event) or event.kind in ("error", "retry")


def _status(event: EnrichedEvent) -> int | None:
    detail = event.detail or {}
    for key in _STATUS_KEYS:
        value = detail.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    match = _STATUS_IN_TEXT.search(_event_text(event))
    return int(match.group(1)) if match else None


def _provider_signal(text: str) -> bool:
    match = _STATUS_IN_TEXT.search(text)
    return bool(_PROVIDER_MESSAGE.search(text)) or (
        match is not None and int(match.group(1)) in PROVIDER_STATUSES
    )


def _provider_error(event: EnrichedEvent) -> bool:
    if event.kind not in ("error", "retry"):
        return False
    return _status(event) in PROVIDER_STATUSES or bool(_PROVIDER_MESSAGE.search(_event_text(event)))


def _event_text(event: EnrichedEvent) -> str:
    detail = event.detail or {}
    extra = detail.get("error")
    parts = [event.text or "", extra if isinstance(extra, str) else ""]
    return " ".join(p for p in parts if p)


def _delay_ms(event: EnrichedEvent) -> float:
    detail = event.detail or {}
    for key in _DELAY_KEYS:
        value = detail.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return 0.0


def _tool_failed(event: EnrichedEvent) -> bool:
    if event.exit_code is not None:
        return event.exit_code != 0
    if event.status not in (None, "unknown"):
        return event.status in _FAILED_STATUSES
    # Some streams report neither for a shell command: its output is the witness.
    return event.tool == "Bash" and bool(_FAILURES_IN_OUTPUT.search(event.tool_output or ""))


def _tests_failed(event: EnrichedEvent) -> bool:
    # `pytest | tail` exits 0: what the output says about the tests counts too.
    return _tool_failed(event) or bool(_FAILURES_IN_OUTPUT.search(event.tool_output or ""))


def _command(event: EnrichedEvent) -> str:
    return _snip(tool_command(event.tool_input) or "")


def _is_test(event: EnrichedEvent) -> bool:
    command = tool_command(event.tool_input) if event.tool == "Bash" else None
    return command is not None and is_test_command(command)


def _is_check(event: EnrichedEvent) -> bool:
    command = tool_command(event.tool_input) if event.tool == "Bash" else None
    return command is not None and (is_test_command(command) or bool(_BUILD_OR_RUN.search(command)))


def _last_edit_seq(t: _Trial) -> int | None:
    edits = [e.seq for e in t.tool_calls if e.tool in EDIT_TOOLS]
    if edits:
        return edits[-1]
    milestone = t.session.milestone("last_edit")
    return milestone.seq if milestone else None


def _final_answer(t: _Trial) -> str:
    answers = [e.text for e in t.events if e.kind == "message" and e.role == "assistant" and e.text]
    return answers[-1] if answers else t.session.output or ""


def _success_claim(answer: str) -> str | None:
    for match in _SUCCESS_CLAIM.finditer(answer):
        # "not all tests pass", "I couldn't get the tests passing": a negation earlier in the
        # same sentence takes the claim back.
        before = _SENTENCE_END.split(answer[max(0, match.start() - 40) : match.start()])[-1]
        if not _NEGATION.search(before):
            return match.group(0)
    return None


def _matches(path: str, patterns: Collection[str]) -> bool:
    # Tracebacks name files by absolute path, diffs by repository path: a suffix is enough.
    return any(
        path == p
        or fnmatch.fnmatchcase(path, p)
        or p.endswith(f"/{path}")
        or path.endswith(f"/{p}")
        for p in patterns
    )


def _cite(event: EnrichedEvent, text: str) -> str:
    return f"event:{event.seq} {event.kind}: {_snip(text)}"


def _snip(text: Any) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _around(text: str, match: re.Match[str]) -> str:
    start = max(0, match.start() - 40)
    return _snip(text[start : match.end() + 80])


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return _snip(lines[-1] if lines else "")

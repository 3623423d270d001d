"""tool-trajectory: which tools the agent called, in what order, with what arguments, how fast.

Follows AgentV's tool-trajectory grader, except that in `exact` mode a length mismatch counts as a
failed check (AgentV reports it but leaves it out of the score, so extra calls could still pass).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from evals_pipeline.grading.assertions.json_values import MISSING, json_equal, resolve_path
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import ExpectedToolCall, ToolTrajectoryAssertion
from evals_pipeline.models.grade import AssertionOutcome
from evals_pipeline.models.messages import ToolCall

ArgsMatch = str | list[str]


@evaluator(ToolTrajectoryAssertion)
def evaluate_tool_trajectory(spec: ToolTrajectoryAssertion, ctx: GradingContext) -> Evaluation:
    """Score the session's tool calls against the spec's mode: passed checks ÷ checks."""
    calls = ctx.tool_calls
    details = {"tool_calls": dict(Counter(call.tool for call in calls))}
    if spec.mode == "any_order":
        checks = _any_order(spec, calls)
    elif spec.mode == "in_order":
        checks = _in_order(spec, calls)
    elif spec.mode == "exact":
        checks = _exact(spec, calls)
    elif spec.mode == "superset":
        checks = _superset(spec, calls)
    else:
        checks = _subset(spec, calls)
    return Evaluation.ratio(checks, details)


def _check(text: str, passed: bool, evidence: str | None = None) -> AssertionOutcome:
    return AssertionOutcome(text=text, passed=passed, evidence=evidence)


def _any_order(spec: ToolTrajectoryAssertion, calls: list[ToolCall]) -> list[AssertionOutcome]:
    if not spec.minimums:
        return [_check("no tool minimums specified", True)]
    counts = Counter(call.tool for call in calls)
    return [
        _check(
            f"{tool} called at least {minimum} times",
            counts[tool] >= minimum,
            f"called {counts[tool]} times",
        )
        for tool, minimum in spec.minimums.items()
    ]


def _in_order(spec: ToolTrajectoryAssertion, calls: list[ToolCall]) -> list[AssertionOutcome]:
    """Expected steps must appear as a subsequence; a same-named call with other args is a miss."""
    if not spec.expected:
        return [_check("no tool sequence specified", True)]
    checks: list[AssertionOutcome] = []
    position = 0
    for i, step in enumerate(spec.expected):
        text = f"step {i}: {step.tool}"
        while position < len(calls) and calls[position].tool != step.tool:
            position += 1
        if position == len(calls):
            checks.append(_check(text, False, "not found in the remaining calls"))
            checks.extend(_unmet_latency(step))
            continue
        call = calls[position]
        position += 1
        if not _args_match(spec, step, call):
            checks.append(_check(text, False, f"call {position - 1}: args mismatch, {_args(call)}"))
            checks.extend(_unmet_latency(step))
            continue
        checks.append(_check(text, True, f"found at call {position - 1}"))
        checks.extend(_latency(step, call))
    return checks


def _exact(spec: ToolTrajectoryAssertion, calls: list[ToolCall]) -> list[AssertionOutcome]:
    checks: list[AssertionOutcome] = []
    if len(calls) != len(spec.expected):
        checks.append(
            _check(f"{len(spec.expected)} tool calls", False, f"got {len(calls)}: {_names(calls)}")
        )
    for i, step in enumerate(spec.expected):
        text = f"call {i}: {step.tool}"
        if i >= len(calls):
            checks.append(_check(text, False, "no call"))
            checks.extend(_unmet_latency(step))
        elif calls[i].tool != step.tool:
            checks.append(_check(text, False, f"got {calls[i].tool}"))
            checks.extend(_unmet_latency(step))
        elif not _args_match(spec, step, calls[i]):
            checks.append(_check(text, False, f"args mismatch, {_args(calls[i])}"))
            checks.extend(_unmet_latency(step))
        else:
            checks.append(_check(text, True))
            checks.extend(_latency(step, calls[i]))
    return checks or [_check("no tool calls expected", True)]


def _superset(spec: ToolTrajectoryAssertion, calls: list[ToolCall]) -> list[AssertionOutcome]:
    """Every expected step is matched by a distinct actual call; extra calls are fine."""
    if not spec.expected:
        return [_check("no expected tools specified", True)]
    consumed: set[int] = set()
    checks: list[AssertionOutcome] = []
    for step in spec.expected:
        index = next(
            (
                j
                for j, call in enumerate(calls)
                if j not in consumed and call.tool == step.tool and _args_match(spec, step, call)
            ),
            None,
        )
        if index is None:
            checks.append(_check(f"{step.tool} called", False, f"calls: {_names(calls)}"))
        else:
            consumed.add(index)
            checks.append(_check(f"{step.tool} called", True, f"found at call {index}"))
    return checks


def _subset(spec: ToolTrajectoryAssertion, calls: list[ToolCall]) -> list[AssertionOutcome]:
    """Every actual call must match some expected step (steps are reusable)."""
    if not calls:
        return [_check("no tool calls (trivially a subset)", True)]
    allowed = sorted({step.tool for step in spec.expected})
    return [
        _check(
            f"call {i}: {call.tool} is allowed",
            any(call.tool == s.tool and _args_match(spec, s, call) for s in spec.expected),
            f"allowed: {allowed}",
        )
        for i, call in enumerate(calls)
    ]


def _latency(step: ExpectedToolCall, call: ToolCall) -> list[AssertionOutcome]:
    """A step's max_duration_ms check; without a recorded duration it is not counted."""
    if step.max_duration_ms is None or call.duration_ms is None:
        return []
    passed = call.duration_ms <= step.max_duration_ms
    return [
        _check(
            f"{step.tool} within {step.max_duration_ms:g} ms", passed, f"took {call.duration_ms} ms"
        )
    ]


def _unmet_latency(step: ExpectedToolCall) -> list[AssertionOutcome]:
    """A step that was not matched fails its latency check too (AgentV counts it as unmet)."""
    if step.max_duration_ms is None:
        return []
    return [_check(f"{step.tool} within {step.max_duration_ms:g} ms", False, "step not matched")]


def _args_match(spec: ToolTrajectoryAssertion, step: ExpectedToolCall, call: ToolCall) -> bool:
    """AgentV's args_match: exact, superset (extra keys ok), subset (no unexpected keys), ignore,
    or a list of field paths compared one by one."""
    expected, actual = step.args, call.input
    mode: ArgsMatch = step.args_match if step.args_match is not None else spec.args_match
    if expected is None or expected == "any" or mode == "ignore":
        return True
    if not isinstance(actual, dict):
        return False
    if isinstance(mode, list):
        return all(_path_matches(expected, actual, path) for path in mode)
    if mode == "superset":
        return all(k in actual and json_equal(v, actual[k]) for k, v in expected.items())
    if mode == "subset":
        return all(k in expected and json_equal(v, expected[k]) for k, v in actual.items())
    return json_equal(expected, actual)


def _path_matches(expected: dict[str, Any], actual: dict[str, Any], path: str) -> bool:
    want = resolve_path(expected, path)
    return want is MISSING or json_equal(want, resolve_path(actual, path))


def _names(calls: list[ToolCall]) -> str:
    names = [call.tool for call in calls]
    return ", ".join(names[:20]) + (f" … (+{len(names) - 20})" if len(names) > 20 else "") or "none"


def _args(call: ToolCall) -> str:
    text = json.dumps(call.input, ensure_ascii=False, default=str)
    return f"got {text[:200]}"

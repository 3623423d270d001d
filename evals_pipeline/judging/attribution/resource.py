"""The resource tier (§9, R1-R3): the agent ran out of context, wall time, turns or money before
anything was checked."""

from __future__ import annotations

import re

from evals_pipeline.judging.attribution.evidence import cite, snip
from evals_pipeline.judging.attribution.rule import FailedTrial, Firing, Rule, fire
from evals_pipeline.judging.attribution.signals import event_text
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.judging import FailureCategory

CONTEXT_FULL_SHARE = 0.95

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


def _context_window_exhausted(t: FailedTrial) -> Firing | None:
    s = t.session
    if s.status == "agent_error" and s.error and _CONTEXT.search(s.error.message):
        return fire(
            "context_window_exhausted",
            "terminated",
            f"session.error: {snip(s.error.message)}",
            terminal=True,
        )
    for event in t.events:
        if event.kind in ("error", "retry") and _CONTEXT.search(event_text(event)):
            return fire(
                "context_window_exhausted", "provider_error", cite(event, event_text(event))
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
                return fire("context_window_exhausted", "context_full", cite(event, summary))
    return None


def _wall_clock_timeout(t: FailedTrial) -> Firing | None:
    s = t.session
    if s.status == "timed_out":
        return fire(
            "wall_clock_timeout",
            "timed_out",
            f"session.status=timed_out: {snip(message_of(s.error) or '')}",
            terminal=True,
        )
    if s.error and _HARNESS_EXIT_124.search(s.error.message):
        return fire(
            "wall_clock_timeout",
            "exit_124",
            f"session.error: {snip(s.error.message)}",
            terminal=True,
        )
    wall = t.wall_ms
    if t.time_limit_s is not None and wall is not None and wall >= t.time_limit_s * 1000:
        summary = f"wall time {wall / 1000:g} s ≥ limit {t.time_limit_s:g} s"
        return fire("wall_clock_timeout", "wall_time", summary)
    return None


def _step_or_cost_budget_exhausted(t: FailedTrial) -> Firing | None:
    s = t.session
    category: FailureCategory = "step_or_cost_budget_exhausted"
    if s.status == "agent_error" and s.error and _BUDGET.search(s.error.message):
        return fire(
            category, "terminated", f"session.error: {snip(s.error.message)}", terminal=True
        )
    for event in t.events:
        if event.kind == "error" and _BUDGET.search(event_text(event)):
            return fire(category, "limit_error", cite(event, event_text(event)))
    calls = s.trace_summary.llm_call_count
    if t.max_turns is not None and calls >= t.max_turns:
        return fire(category, "max_turns", f"{calls} model calls, max_turns {t.max_turns}")
    if t.cost_budget_usd is not None and s.cost_usd is not None and s.cost_usd >= t.cost_budget_usd:
        summary = f"cost ${s.cost_usd:.4f} ≥ budget ${t.cost_budget_usd:.4f}"
        return fire(category, "cost", summary)
    return None


# In §9.1's precedence.
RULES: tuple[Rule, ...] = (
    _context_window_exhausted,
    _wall_clock_timeout,
    _step_or_cost_budget_exhausted,
)

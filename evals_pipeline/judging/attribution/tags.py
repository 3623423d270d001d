"""Secondary tags (§9): traits of a failed run that are no category of their own, such as looping
or a high tool error rate."""

from __future__ import annotations

import json
from collections.abc import Sequence

from evals_pipeline.judging.attribution.rule import FailedTrial
from evals_pipeline.judging.attribution.signals import SANDBOX, tool_failed
from evals_pipeline.models.events import EnrichedEvent

TOOL_ERROR_RATE = 0.30
LOOP_REPEATS = 3
LOOP_WINDOW = 20
LOOP_DUPLICATE_SHARE = 0.30


def secondary_tags(t: FailedTrial) -> list[str]:
    tags: list[str] = []
    if _looping(t.tool_calls):
        tags.append("looping")
    if any(
        e.kind == "system_prompt" and "compact" in f"{e.label} {e.source}".lower() for e in t.events
    ):
        tags.append("history_truncated")
    if t.tool_calls:
        failed = [e for e in t.tool_calls if tool_failed(e)]
        agent_caused = [e for e in failed if not SANDBOX.search(e.tool_output or "")]
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

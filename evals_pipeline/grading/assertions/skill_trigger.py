"""skill-trigger: whether the agent used a named skill, read from canonical tool calls.

AgentV's rule, over every tool call in order: a `Skill` call (any case) whose `input.skill`
contains the name, a `Read` whose `input.file_path` (or `path`) contains `skills/<name>/`, or
any tool result that mentions `skills/<name>/`. `should_trigger: false` inverts the expectation.
Tool names are canonical (docs/events.md), so this holds for every agent.
"""

from __future__ import annotations

import json
from typing import Any

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import SkillTriggerAssertion
from evals_pipeline.models.messages import ToolCall


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def trigger_evidence(skill: str, calls: list[ToolCall]) -> str | None:
    """How the session used the skill, or None when it did not."""
    marker = f"skills/{skill}/"
    for call in calls:
        tool = call.tool.lower()
        args = call.input if isinstance(call.input, dict) else {}
        if tool == "skill":
            named = _text(args.get("skill", "")) if args.get("skill") is not None else ""
            if skill in named:
                return f'Skill tool invoked with skill="{named}"'
        elif tool == "read":
            raw = args.get("file_path")
            if raw is None:
                raw = args.get("path")
            path = _text(raw) if raw is not None else ""
            if marker in path:
                return f"Read tool loaded skill file: {path}"
        if call.output is not None and marker in _text(call.output):
            return f'Tool "{call.tool}" output referenced skill file for "{skill}"'
    return None


@evaluator(SkillTriggerAssertion)
def evaluate_skill_trigger(spec: SkillTriggerAssertion, ctx: GradingContext) -> Evaluation:
    """1 when the skill was used exactly as `should_trigger` says, else 0."""
    calls = ctx.tool_calls
    evidence = trigger_evidence(spec.skill, calls)
    triggered = evidence is not None
    if triggered == spec.should_trigger:
        if spec.should_trigger:
            text = evidence or f'Skill "{spec.skill}" triggered as expected'
        else:
            text = f'Skill "{spec.skill}" correctly did not trigger'
        return Evaluation.check(True, text)
    if spec.should_trigger:
        text = (
            f'Skill "{spec.skill}" not found in {len(calls)} tool call(s)'
            if calls
            else "No tool calls recorded"
        )
    else:
        text = evidence or f'Skill "{spec.skill}" triggered unexpectedly'
    return Evaluation.check(False, text)

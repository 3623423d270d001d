"""`skill-trigger`: whether the agent used a skill.

Judged by grading/assertions/skill_trigger.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evals_pipeline.models.assertions.base import AssertionBase


class SkillTriggerAssertion(AssertionBase):
    """Whether the agent used a skill: a canonical `Skill` call naming it, or a `Read` of
    `skills/<skill>/...` (or a tool result mentioning that path)."""

    type: Literal["skill-trigger"]
    skill: str = Field(min_length=1)
    should_trigger: bool = True

    def display_name(self) -> str:
        return self.name or f"skill-trigger-{self.skill}"

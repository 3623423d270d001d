"""Text assertions on the answer: contains, equals, starts/ends-with, their sets, regex.

Judged by grading/assertions/text.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evals_pipeline.models.assertions.base import AssertionBase


class TextAssertion(AssertionBase):
    type: Literal["contains", "icontains", "equals", "starts-with", "ends-with"]
    value: str


class TextSetAssertion(AssertionBase):
    type: Literal["contains-any", "contains-all", "icontains-any", "icontains-all"]
    value: list[str] = Field(min_length=1)


class RegexAssertion(AssertionBase):
    type: Literal["regex"]
    value: str
    flags: str = ""

"""`file-changes`: which workspace files the agent added, modified or deleted.

Judged by grading/assertions/file_changes.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evals_pipeline.models.assertions.base import AssertionBase


class FileChangesAssertion(AssertionBase):
    """Which workspace files the agent added, modified or deleted (from `file_changes`).

    Not an AgentV type: AgentV leaves this to code graders. Paths are relative to the workspace
    and may be globs (`src/*.py`).
    """

    type: Literal["file-changes"]
    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(
        default_factory=list, description="Paths the agent must leave alone."
    )
    only: bool = Field(
        default=False, description="Fail when any file outside added/modified/deleted changed."
    )

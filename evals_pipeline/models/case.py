"""A resolved case: the frozen spec of one test as one agent will receive it."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.messages import Message
from evals_pipeline.models.suite import TrialsSpec
from evals_pipeline.models.targets import TargetSpec


class ResolvedCase(BaseModel):
    """Everything the adapter and the judge need for one (case, agent) partition, paths absolute."""

    model_config = ConfigDict(frozen=True)

    suite: str = Field(description="Suite slug.")
    suite_path: str
    case_key: str = Field(description="Partition key: the test id as a slug.")
    test_id: str
    agent: str = Field(description="Partition key: the target name as a slug.")
    target: TargetSpec
    input: list[Message]
    prompt: str = Field(description="The input rendered as one prompt for a command-line agent.")
    input_files: list[str] = Field(default_factory=list)
    criteria: str = ""
    expected_output: list[Message] = Field(default_factory=list)
    assertions: list[AssertionSpec] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None
    threshold: float = 0.8
    trials: TrialsSpec = Field(default_factory=TrialsSpec)
    timeout_seconds: float = 600.0
    workspace_template: str | None = None
    base_dir: str = Field(description="The eval file's folder: relative paths resolve from here.")

    @property
    def content_hash(self) -> str:
        """A stable hash of the spec: a changed test or target gets a new hash (and a new run)."""
        payload = self.model_dump_json(exclude={"suite_path"})
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

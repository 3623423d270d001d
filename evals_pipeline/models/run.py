"""The adapter's record of one agent run, before any interpretation."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from evals_pipeline.models.conversation import TurnRun
from evals_pipeline.models.errors import ErrorKind, ErrorStage, RecordError, upgraded
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.stored import StoredPath, StoredRecord
from evals_pipeline.models.targets import Pricing


class AgentRun(StoredRecord):
    """RawAgentOutput: what the agent process did, stored as it happened."""

    UNREDACTED = (
        *StoredRecord.UNREDACTED,
        "stdout_path",
        "output_file_path",
        "workspace_path",
        "side_files",
    )

    case_key: str
    agent: str
    trial: int = 0
    stdout_path: StoredPath | None = Field(
        default=None, description="Raw stdout, stored as a file."
    )
    output_file_path: StoredPath | None = Field(
        default=None, description="The agent's {OUTPUT_FILE}, or the recorded session replayed."
    )
    stderr: str = ""
    exit_code: int | None = None
    start_ms: int
    end_ms: int
    timed_out: bool = False
    error: RecordError | None = Field(default=None, description="Why the run failed, when it did.")
    setup_failed: bool = Field(
        default=False, description="The workspace could not be prepared; the agent never ran."
    )
    not_run: str | None = Field(
        default=None,
        description="Why the run was never launched (the run budget was spent): no session or "
        "grade follows, and the report counts the case as not run.",
    )
    workspace_path: StoredPath | None = None
    file_changes: str | None = None
    stream_kind: str | None = Field(
        default=None,
        description="The dialect of stdout when it is an agent CLI's JSONL stream "
        "(claude-code, codex, pi-agent); None for AgentV's cli output contract.",
    )
    side_files: dict[str, StoredPath] = Field(
        default_factory=dict,
        description="Other files the run left, by role: rollout, session_file, transcript, "
        "model_server_log.",
    )
    model: str | None = Field(default=None, description="The model the target asked for.")
    agent_version: str | None = Field(
        default=None,
        description="What the agent CLI's version command printed (`claude --version`, a cli "
        "target's version_command); None when there is none.",
    )
    auth: str | None = Field(
        default=None,
        description="Which auth an agent CLI run used (scripted server, API key from which "
        "variable, subscription login, local model server); never the key itself.",
    )
    pricing: Pricing | None = None
    warnings: list[str] = Field(default_factory=list)
    served_by: str | None = Field(
        default=None, description="The fallback target whose run this is, when one served it."
    )
    turns: list[TurnRun] = Field(
        default_factory=list, description="A conversation's turns, in order (else empty)."
    )
    result_key: str | None = Field(
        default=None,
        description="The result-cache key of everything this run depended on (results/keys.py).",
    )
    reused: Reuse | None = Field(
        default=None, description="Set when this run was taken from the result store, not run."
    )

    @model_validator(mode="before")
    @classmethod
    def _typed_error(cls, data: Any) -> Any:
        """A plain-string error (a record from before RecordError, or an adapter that gives the
        message) typed by what the run itself says: set up, timed out, exit code."""
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            stage, kind = run_failure(data)
            error = upgraded(data["error"], stage=stage, kind=kind, stderr=data.get("stderr"))
            data = {**data, "error": error}
        return data

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms

    @property
    def failed(self) -> bool:
        return self.error is not None


def run_failure(run: dict[str, Any]) -> tuple[ErrorStage, ErrorKind]:
    """The stage and kind of a failed run, from its record's fields."""
    if run.get("setup_failed"):
        return "setup", "setup"
    if run.get("timed_out"):
        return "agent", "timeout"
    exit_code = run.get("exit_code")
    if exit_code is None:
        return "agent", "crashed"
    return "agent", "exit_code" if exit_code != 0 else "failed"

"""Grades: what each grader said about one session, and the case verdict they add up to."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from evals_pipeline.models.errors import ErrorKind, ErrorStage, RecordError, upgraded
from evals_pipeline.models.events import Milestone
from evals_pipeline.models.messages import TokenUsage
from evals_pipeline.models.reuse import Reuse
from evals_pipeline.models.stored import StoredRecord
from evals_pipeline.models.usage import LlmUsage

Verdict = Literal["pass", "fail", "error"]
ExecutionStatus = Literal["ok", "quality_failure", "execution_error"]
FailureStage = Literal["setup", "agent", "grader"]
NO_SCORE = "the grader produced no score"
_ERROR_STAGES: dict[str | None, ErrorStage] = {
    "setup": "setup",
    "agent": "agent",
    "grader": "grade",
}


def _typed_failure(data: Any) -> Any:
    """A trial's or case's plain-string error (a grade from before RecordError), typed by its
    failure stage."""
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        stage = _ERROR_STAGES.get(data.get("failure_stage"), "grade")
        data = {**data, "error": upgraded(data["error"], stage=stage, kind="failed")}
    return data


class AssertionOutcome(BaseModel):
    """One checked statement with its evidence."""

    text: str
    passed: bool
    evidence: str | None = None


class GraderResult(BaseModel):
    """One grader's outcome. An `error` verdict means the grader itself failed: no score. Under
    `run --agentv-scoring` such a grader is scored 0 (`fail`) as AgentV scores it, and keeps its
    `error` and `stderr`."""

    name: str
    type: str
    score: float | None = Field(default=None, ge=0, le=1)
    verdict: Verdict
    weight: float = 1.0
    gate: float | None = Field(default=None, description="Required-grader gate, when required.")
    assertions: list[AssertionOutcome] = Field(default_factory=list)
    details: dict[str, Any] | None = None
    error: RecordError | None = None
    stderr: str | None = None
    duration_ms: int = 0
    start_ms: int | None = None
    judge_usage: LlmUsage | None = Field(
        default=None,
        description="LLM calls this grader made (llm-grader, or a code grader through the "
        "target proxy); never part of the agent's token_usage or cost_usd.",
    )
    scores: list[GraderResult] = Field(
        default_factory=list,
        description="A composite's members, each graded (AgentV's nested `scores`).",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="Why this score is to be doubted though it stands: a code grader scored by "
        "its exit code alone, a score out of [0, 1] or NaN that was clamped.",
    )

    @model_validator(mode="before")
    @classmethod
    def _typed_error(cls, data: Any) -> Any:
        """A plain-string error (a grade from before RecordError): the grader's own failure."""
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            kind: ErrorKind = "no_score" if data["error"] == NO_SCORE else "failed"
            error = upgraded(data["error"], stage="grade", kind=kind, stderr=data.get("stderr"))
            data = {**data, "error": error}
        return data


class TrialGrade(StoredRecord):
    """The graded outcome of one trial of one (case, agent)."""

    format_version: int = Field(
        default=2,
        description="2: `wall_ms`, the runner's time (1: `duration_ms`, the agent's own).",
    )
    trial: int = 0
    score: float = 0.0
    verdict: Verdict
    execution_status: ExecutionStatus
    failure_stage: FailureStage | None = None
    error: RecordError | None = None
    graders: list[GraderResult] = Field(default_factory=list)
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    wall_ms: int | None = Field(
        default=None,
        description="Wall time the runner measured around the agent process (its run's end_ms "
        "- start_ms): every report's duration. The agent's own figure stays in its session.",
    )
    tool_calls: dict[str, int] = Field(default_factory=dict, description="Calls per tool.")
    llm_calls: int = 0
    milestones: list[Milestone] = Field(default_factory=list)
    agent_version: str | None = Field(
        default=None, description="The agent CLI's version the trial ran (part of its identity)."
    )
    judge_usage: LlmUsage | None = Field(
        default=None, description="The graders' LLM usage, summed; kept apart from the agent's."
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="Its graders' warnings (`grader 'name': ...`) and the session's doubts "
        "about the answer (an output file that looks like truncated JSON).",
    )

    @classmethod
    def upgrade(cls, version: int, data: dict[str, Any]) -> dict[str, Any]:
        """Format 1's `duration_ms` was the agent's self-report (claude's result `duration_ms`)
        and is dropped: the runner's `wall_ms`, which a format-1 grade does not hold, reads as
        unknown (its session record keeps both)."""
        if version == 1:
            return {k: v for k, v in data.items() if k != "duration_ms"}
        return super().upgrade(version, data)

    @model_validator(mode="before")
    @classmethod
    def _typed_error(cls, data: Any) -> Any:
        return _typed_failure(data)


class CaseGrade(StoredRecord):
    """The grades of one (case, agent) partition: its trials and their aggregate."""

    case_key: str
    test_id: str
    agent: str
    threshold: float
    score: float
    verdict: Verdict
    execution_status: ExecutionStatus
    failure_stage: FailureStage | None = None
    error: RecordError | None = None
    trials: list[TrialGrade]
    result_key: str | None = Field(
        default=None, description="The result-cache key of the case, its graders and its runs."
    )
    reused: Reuse | None = Field(
        default=None, description="Set when this grade was taken from the result store."
    )
    warnings: list[str] = Field(
        default_factory=list, description="The counted trials' warnings, each once."
    )

    @model_validator(mode="before")
    @classmethod
    def _typed_error(cls, data: Any) -> Any:
        return _typed_failure(data)

    def best_trial(self) -> TrialGrade:
        """The trial that speaks for the case: the highest-scoring one that did not error."""
        return max(self.trials, key=lambda t: (t.verdict != "error", t.score))

"""Run history: each report of a suite as one entry, and what changed between two of them.

A report folder (`<storage>/<suite>/eval_report/<run id>/`) is one entry of the history; the
comparison of two entries pairs their per-case verdicts (docs/report.md, "Since the previous run").
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.grade import Verdict
from evals_pipeline.models.pass_rate import PassCounts
from evals_pipeline.models.statistics import BootstrapResult, McNemarResult

Trigger = Literal["cli", "nightly", "sensor", "ui", "unknown"]
CaseChangeKind = Literal["regressed", "fixed", "new", "removed"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentRunFigures(PassCounts):
    """One agent's headline figures in one report: what `evals-pipeline runs` and trends show.
    Its rates are computed from the counts, whatever an older report.json stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str
    mean_score: float | None
    cost_usd: float | None = None


class RunEntry(_Frozen):
    """One report of a suite: when, how it was started, where its files are, its figures."""

    suite: str
    run_id: str | None
    created_ms: int
    trigger: Trigger = "unknown"
    folder: str = Field(description="The report folder (a path or an object-store URL).")
    agents: list[AgentRunFigures] = Field(default_factory=list)


class CaseChange(_Frozen):
    """A case whose verdict changed between two runs, or that only one of them has.

    `reason` is one line of why: the newer run's failure reason for a regression.
    """

    agent: str
    test_id: str
    case_key: str
    change: CaseChangeKind
    before: Verdict | None = None
    after: Verdict | None = None
    score_before: float | None = None
    score_after: float | None = None
    reason: str = ""


class AgentDelta(_Frozen):
    """One agent, the newer run against the older, over the cases both have.

    `mcnemar` pairs per-case pass/fail (error counts as not passed), `bootstrap` resamples cases
    comparing scores; both read the newer run as A, so a negative delta is a drop.
    """

    agent: str
    n_paired: int
    pass_rate_before: float | None = None
    pass_rate_after: float | None = None
    pass_rate_delta: float | None = None
    mean_score_before: float | None = None
    mean_score_after: float | None = None
    mcnemar: McNemarResult | None = None
    bootstrap: BootstrapResult | None = None
    regressed: int = 0
    fixed: int = 0
    new: int = 0
    removed: int = 0
    significant_drop: bool = Field(
        default=False, description="Fewer passes in the newer run, McNemar p < 0.05."
    )


class RunComparison(_Frozen):
    """Two reports of one suite compared: per-agent deltas and the cases that changed."""

    suite: str
    before: RunEntry
    after: RunEntry
    agents: list[AgentDelta] = Field(default_factory=list)
    changes: list[CaseChange] = Field(default_factory=list)

"""The eval report: per-agent figures over a suite's graded cases, and, when the run was judged,
judge-error-corrected rates per dimension, failure attribution, repeated trials, paired
comparisons, judge health and the judges' own usage (reference spec `judging.md` §1, §9.2, §11).

What every field means, and how to read it, is in docs/report.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.models.history import RunComparison, RunEntry, Trigger
from evals_pipeline.models.judging import Dimension, FailureBreakdown
from evals_pipeline.models.pass_rate import PassCounts
from evals_pipeline.models.statistics import (
    BootstrapResult,
    Calibration,
    CorrectedRate,
    McNemarResult,
    PositionBias,
    RepeatedTrials,
)
from evals_pipeline.models.stored import StoredRecord
from evals_pipeline.models.usage import LlmUsage


class AgentSummary(PassCounts):
    """One agent's figures. `pass_rate` is passed / cases, an errored case counting as not
    passed (models/pass_rate.py); `pass_rate_graded` leaves errors out."""

    agent: str
    mean_score: float | None = Field(description="Mean score over cases that did not error")
    cost_usd: float | None = Field(
        default=None, description="Summed over the trials; None when no trial reported a cost."
    )
    total_tokens: int | None = Field(
        default=None, description="Summed over the trials; None when no trial reported tokens."
    )
    input_tokens: int | None = None
    output_tokens: int | None = None
    mean_duration_ms: float | None = None
    cost_per_pass_usd: float | None = Field(
        default=None, description="cost_usd / passed; None when nothing passed or no cost is known."
    )
    llm_calls: int = 0
    agent_versions: list[str] = Field(
        default_factory=list,
        description="The agent CLI versions its trials ran, in first-seen order (two when the "
        "CLI was upgraded between the runs the report covers).",
    )
    tool_calls: dict[str, int] = Field(default_factory=dict, description="Calls per tool, summed.")
    milestone_ms: dict[str, float] = Field(
        default_factory=dict,
        description="Median time from session start to each milestone, over trials reaching it.",
    )
    milestone_trials: dict[str, int] = Field(
        default_factory=dict, description="How many trials reached each milestone."
    )
    reused: int = Field(
        default=0,
        description="Cases whose grade came from the result store: nothing they depend on changed.",
    )
    oldest_reused_ms: int | None = Field(
        default=None, description="When the oldest reused result was stored, epoch ms."
    )


class CaseFailure(BaseModel):
    """Why one (case, agent) did not pass, in a line."""

    agent: str
    test_id: str
    verdict: str
    reason: str


class NotRunCase(BaseModel):
    """A (case, agent) that was never launched, and why (the run budget was spent)."""

    agent: str
    test_id: str
    reason: str


class CaseWarning(BaseModel):
    """A (case, agent) whose grade stands but is doubtful, and why (its CaseGrade.warnings)."""

    agent: str
    test_id: str
    verdict: str
    warnings: list[str]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DimensionRate(CorrectedRate):
    """One agent's pass rate on one judged dimension, observed and corrected for judge error (§8, §11).

    `n` counts the trials with a decision (`passed` not None) that are not environmental failures;
    `n_passed` of them passed. `tpr`/`tnr`/`m1`/`m0` are the calibration of this dimension's
    blended decision, pooled over agents. Without usable labels `corrected_rate` is None,
    `correction_valid` False and `reason` says why; the interval is then [0, 1].
    """

    agent: str
    dimension: Dimension
    n_passed: int = Field(ge=0)
    n_environmental: int = Field(default=0, ge=0, description="Excluded: environmental failures.")
    n_undecided: int = Field(
        default=0,
        ge=0,
        description="Excluded: no heuristic nor panel, or the trial errored (not judged).",
    )


class DimensionCalibration(_Frozen):
    """One dimension's blended decision against the human labels (§7): confusion matrix and rates.

    Warnings: `tpr-below-0.80` / `tnr-below-0.80` (under §7's minimum), `few-pass-labels` /
    `few-fail-labels` (fewer than 30 labels in a class), `low-youden` (J < 0.2).
    """

    dimension: Dimension
    labels_used: int
    tp: int
    fn: int
    tn: int
    fp: int
    m1: int
    m0: int
    tpr: float | None
    tnr: float | None
    tpr_ci95: tuple[float, float]
    tnr_ci95: tuple[float, float]
    youden: float | None
    kappa: float | None
    warnings: tuple[str, ...] = ()


class CalibrationReport(_Frozen):
    """The calibration file as this run used it.

    `split` is `test` when any label names a split (then only test labels count), else `all`.
    A label is used when its (test_id, agent, trial, dimension) has a decision in this run;
    `unmatched` ones name no such decision, `environmental` ones name an environmental failure.
    """

    source: str | None = None
    split: Literal["test", "all"]
    labels_total: int
    labels_in_split: int
    labels_used: int
    unmatched: int
    environmental: int = 0
    dimensions: list[DimensionCalibration] = Field(default_factory=list)


class AgentFailures(_Frozen):
    """One agent's failure attribution over its trials (§9.2).

    Trials come from the grades (`n_passed`: trial verdict `pass`; errored trials are failures);
    classifications from the judgments. `n_unclassified` failed trials had no classification.
    """

    agent: str
    breakdown: FailureBreakdown
    n_unclassified: int = Field(ge=0)


class AgentRepeatedTrials(_Frozen):
    """One agent's pass@k and pass^k for k = 1..n (§10); errored trials count as failures.

    Empty `values` with a `reason` when the agent's cases do not all have the same trial count.
    """

    agent: str
    n_cases: int
    trials_per_case: int | None
    values: tuple[RepeatedTrials, ...] = ()
    reason: str = ""


class PairwiseTally(_Frozen):
    """Position-swapped pairwise verdicts of agent A against agent B on one dimension (§5).

    `win_rate` is A's: (wins + ½·ties) / n; `bias_detected` if any pair had a judge that picked
    the same slot in both orders on this dimension.
    """

    dimension: str = Field(description="A dimension, or `overall`.")
    n: int
    wins: int
    ties: int
    losses: int
    win_rate: float | None
    bias_detected: bool


class AgentComparison(_Frozen):
    """Agent A against agent B over the cases both ran (§10), and their pairwise verdicts (§5).

    `mcnemar` pairs the case verdicts (`pass` or not); `bootstrap` resamples cases, comparing the
    per-case share of passed trials, with the recorded seed. `position_bias_detected` is None
    without pairwise verdicts; True if a pair showed position bias or a judge that read these
    pairs is flagged in judge health.
    """

    agent_a: str
    agent_b: str
    n_cases: int
    mcnemar: McNemarResult | None = None
    bootstrap: BootstrapResult | None = None
    n_pairwise: int = 0
    pairwise: list[PairwiseTally] = Field(default_factory=list)
    position_bias_detected: bool | None = None


class JudgeHealth(_Frozen):
    """One judge's behaviour over the run: grounding of its votes, position bias of its pairwise
    readings, and (with labels) its own agreement with the humans.

    `judge` is the judge target's name, or its model id when only verdicts name it.
    `grounding_failure_rate` = invalid / votes (grounding rejected the verdict);
    `abstention_rate` also counts votes never grounded.
    """

    judge: str
    models: tuple[str, ...]
    votes: int = 0
    invalid: int = 0
    ungrounded: int = 0
    partially_grounded: int = 0
    retried: int = 0
    grounding_failure_rate: float | None = None
    abstention_rate: float | None = None
    pairwise_readings: int = 0
    invalid_readings: int = 0
    position: PositionBias | None = None
    bias_detected: bool = False
    calibration: Calibration | None = Field(
        default=None, description="This judge's valid votes against the human labels used."
    )


class JudgeUsage(_Frozen):
    """What judging cost, never added to the agents' cost: dimension panels, pairwise panels,
    LLM graders (when recorded), their total, and the panels' usage per judged agent."""

    judgments: LlmUsage = LlmUsage()
    pairwise: LlmUsage = LlmUsage()
    graders: LlmUsage = LlmUsage()
    total: LlmUsage = LlmUsage()
    by_agent: dict[str, LlmUsage] = Field(default_factory=dict)


class LaneResult(_Frozen):
    """One variant's (lane's) result on one case: the case verdict its trials add up to."""

    verdict: str = Field(description="pass, fail or error: the case verdict (McNemar's pairing).")
    score: float
    trials: int = Field(default=1, ge=0, description="Trials graded.")
    passed_trials: int = Field(default=0, ge=0)
    cost_usd: float | None = Field(default=None, description="Summed over the trials.")


class CaseVariants(_Frozen):
    """One row of the variants compare table: a case and each lane's result on it.

    `lanes` maps agent to result, in the report's agent order; an agent that did not run the
    case has no entry. The first result for a (case, lane) wins: a later one never replaces it.
    """

    test_id: str
    case_key: str
    lanes: dict[str, LaneResult]

    @property
    def differs(self) -> bool:
        """Whether the lanes that ran the case disagree on its verdict."""
        return len({lane.verdict for lane in self.lanes.values()}) > 1


class EvalReport(StoredRecord):
    suite: str
    created_ms: int
    run_id: str | None = None
    trigger: Trigger = "unknown"
    agents: list[AgentSummary]
    not_run: int = Field(
        default=0, description="Registered (case, agent) partitions with no grades"
    )
    not_run_cases: list[NotRunCase] = Field(
        default_factory=list,
        description="The partitions among `not_run` that a run chose not to launch, with why.",
    )
    failures: list[CaseFailure] = Field(default_factory=list)
    warnings: list[CaseWarning] = Field(
        default_factory=list,
        description="Cases graded with a warning (a grader scored by exit code alone, a "
        "clamped score, a truncated-looking output), by agent and test id.",
    )
    rates: list[DimensionRate] = Field(
        default_factory=list, description="Per agent and judged dimension (§8, §11)."
    )
    calibration: CalibrationReport | None = Field(
        default=None, description="The human labels used; None without a calibration file."
    )
    failure_breakdown: list[AgentFailures] = Field(default_factory=list)
    repeated_trials: list[AgentRepeatedTrials] = Field(default_factory=list)
    comparisons: list[AgentComparison] = Field(default_factory=list)
    position_bias_detected: bool | None = Field(
        default=None,
        description="Any pairwise verdict or judge showed position bias; None without pairwise.",
    )
    judge_health: list[JudgeHealth] = Field(default_factory=list)
    judge_usage: JudgeUsage | None = None
    bootstrap_seed: int | None = Field(default=None, description="Seed of every paired bootstrap.")
    variants: list[CaseVariants] = Field(
        default_factory=list,
        description="The variants compare table: one row per case when the suite ran more than "
        "one agent (lane); empty with one.",
    )
    since_previous: RunComparison | None = Field(
        default=None,
        description="This run against the suite's previous report (the previous nightly for a "
        "nightly run); None for a suite's first report.",
    )
    trend: list[RunEntry] = Field(
        default_factory=list, description="The suite's last reports, oldest first, this one last."
    )

    @property
    def all_passed(self) -> bool:
        return all(a.failed == 0 and a.errors == 0 for a in self.agents) and self.not_run == 0

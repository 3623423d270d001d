"""The judging layer's data model (reference spec `judging.md` §1, §9): judge verdicts with their
evidence, and failure classifications. Panel, pairwise, blending and corrected-rate results are
the return types of the pure functions in `evals_pipeline.statistics`.

Every model is frozen with `extra="forbid"`: a judge's JSON that carries an unknown field is
rejected rather than silently trimmed. Fields are snake_case, in JSON too. Fields marked "set by
grounding" keep their defaults until `evals_pipeline.judging.grounding` has checked the verdict.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from evals_pipeline.models.errors import RecordError, upgraded
from evals_pipeline.models.stored import StoredRecord


def _judge_errors(value: Any) -> Any:
    """Judges' failures as stored before RecordError, `judge: reason` strings, typed."""
    if isinstance(value, list | tuple):
        return tuple(upgraded(v, stage="judge", kind="failed") for v in value)
    return value


JudgeErrors = Annotated[tuple[RecordError, ...], BeforeValidator(_judge_errors)]
"""Judges whose call failed (after retries), each `judge: reason`; a plain string is typed."""

Dimension = Literal["correctness", "completeness", "codeQuality", "minimalDiff", "verification"]
Verdict = Literal["PASS", "FAIL"]
"""A judge's binary decision; unrelated to the lowercase grader `Verdict` of models.grade."""
MatchKind = Literal["EXACT", "FUZZY", "UNVERIFIED"]
GroundingReason = Literal[
    "too-short",
    "too-short-for-fuzzy",
    "below-threshold",
    "numeric-mismatch",
    "polarity-mismatch",
    "source-mismatch",
    "",
]

FailureCategory = Literal[
    "task_environment_defect",
    "llm_provider_error",
    "sandbox_infra_failure",
    "context_window_exhausted",
    "wall_clock_timeout",
    "step_or_cost_budget_exhausted",
    "spec_misunderstanding",
    "unverified_completion",
    "incorrect_implementation",
]
FailureTier = Literal["capability", "resource", "environmental"]

FAILURE_TAXONOMY: dict[FailureCategory, tuple[str, FailureTier]] = {
    "task_environment_defect": ("E1", "environmental"),
    "llm_provider_error": ("E2", "environmental"),
    "sandbox_infra_failure": ("E3", "environmental"),
    "context_window_exhausted": ("R1", "resource"),
    "wall_clock_timeout": ("R2", "resource"),
    "step_or_cost_budget_exhausted": ("R3", "resource"),
    "spec_misunderstanding": ("C1", "capability"),
    "unverified_completion": ("C2", "capability"),
    "incorrect_implementation": ("C3", "capability"),
}
"""Each category's rule number and tier, in precedence order (§9.1: first match wins)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Evidence(_Frozen):
    """One quote a judge cites, and what grounding found when it looked the quote up."""

    quote: str = Field(description="Verbatim from the judge's input; 12-300 chars asked for.")
    source: str | None = Field(default=None, description='Where it is, e.g. "event:41".')
    claim: str = ""
    match: MatchKind | None = Field(default=None, description="Set by grounding.")
    match_score: float = Field(
        default=0.0, ge=0, le=100, description="100 exact, partial_ratio when computed, else 0."
    )
    reason: GroundingReason = ""


class JudgeVerdict(_Frozen):
    """One judge's PASS/FAIL on one dimension of one trial, as parsed from its strict JSON."""

    judge: str | None = Field(
        default=None, description="The judge target's name (absent from older records)."
    )
    judge_model: str = Field(description="Dated snapshot id of the judge model.")
    dimension: Dimension | Literal["failure_category"] = Field(
        description="The dimension judged, or `failure_category`: PASS when a failed trial's "
        "category fits it."
    )
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    critique: str = ""
    evidence: tuple[Evidence, ...] = ()
    verified_fraction: float | None = Field(default=None, ge=0, le=1)
    valid: bool | None = Field(default=None, description="False = abstains; None = not grounded.")
    effective_confidence: float | None = Field(default=None, ge=0, le=1)
    partially_grounded: bool = False
    retried: bool = False


class CategoryCheck(_Frozen):
    """The panel's one-vs-rest check of a failed trial's primary category (§9.2): does it fit?"""

    votes: tuple[JudgeVerdict, ...] = Field(description="PASS: the category fits the trial.")
    errors: JudgeErrors = ()
    n_valid: int = Field(ge=0)
    confirmed: bool | None = Field(
        description="The panel's majority; None below the quorum or without a majority."
    )


class FailureClassification(_Frozen):
    """Why a failed trial failed (§9): one primary category, its tier, and what fired the rule."""

    primary: FailureCategory
    tier: FailureTier
    secondary: tuple[str, ...] = Field(
        default=(), description="Other categories that fired, then tags such as `looping`."
    )
    evidence: tuple[str, ...] = Field(default=(), description="Event ids and snippets.")
    rule_id: str = Field(description="The rule and clause that fired, e.g. `E2.backoff_share`.")
    check: CategoryCheck | None = Field(
        default=None, description="The panel's check of `primary` (judging.confirm_failures)."
    )

    @model_validator(mode="after")
    def _tier_matches_category(self) -> FailureClassification:
        expected = FAILURE_TAXONOMY[self.primary][1]
        if self.tier != expected:
            raise ValueError(f"{self.primary} is in tier {expected!r}, not {self.tier!r}")
        return self


class CategoryCount(_Frozen):
    """One failure category's share of a run's trials and of its failures (§9.2)."""

    count: int = Field(ge=0)
    rate_of_trials: float | None
    rate_of_failures: float | None
    confirmed: int = Field(default=0, ge=0, description="Of `count`, the panel confirmed.")
    disputed: int = Field(default=0, ge=0, description="Of `count`, the panel rejected.")


class TierCount(_Frozen):
    """One tier's share of a run's trials (§9.2)."""

    count: int = Field(ge=0)
    rate_of_trials: float | None


class FailureBreakdown(_Frozen):
    """The report's failure section (§9.2); rates are None when their denominator is 0."""

    n_trials: int = Field(ge=0)
    n_failed: int = Field(ge=0)
    by_category: dict[FailureCategory, CategoryCount]
    by_tier: dict[FailureTier, TierCount]
    infra_failure_rate: float | None
    pass_rate_incl_infra: float | None
    pass_rate_excl_infra: float | None


PairwiseSlot = Literal["A", "B", "TIE"]
DIMENSIONS: tuple[Dimension, ...] = (
    "correctness",
    "completeness",
    "codeQuality",
    "minimalDiff",
    "verification",
)


class DimensionJudgment(_Frozen):
    """One dimension of one trial: every judge's grounded vote, the panel, the heuristic, the blend."""

    dimension: Dimension
    votes: tuple[JudgeVerdict, ...] = ()
    errors: JudgeErrors = Field(
        default=(), description="Judges whose call failed (after retries), with the reason."
    )
    n_valid: int = Field(default=0, ge=0)
    panel_verdict: Verdict | None = None
    panel_score: float | None = None
    no_majority: bool = False
    heuristic_score: float | None = None
    heuristic_reason: str = ""
    weight_heuristic: float = Field(ge=0, le=1)
    blended_score: float | None = None
    passed: bool | None = Field(default=None, description="blended ≥ 0.5; None: no signal.")
    llm_excluded: bool = False


class TrialJudgment(_Frozen):
    """The judge layer's view of one trial: five dimensions, and why it failed if it did."""

    trial: int = 0
    judged: bool = Field(
        default=True, description="False when the agent run errored: nothing to judge."
    )
    dimensions: tuple[DimensionJudgment, ...] = ()
    failure: FailureClassification | None = None
    judge_input_chars: int = Field(default=0, ge=0, description="Size of what judges were shown.")


class CaseJudgment(_Frozen, StoredRecord):
    """The `judgments` record of one (case, agent) partition."""

    case_key: str
    test_id: str
    agent: str
    trials: tuple[TrialJudgment, ...]
    judge_calls: int = Field(default=0, ge=0)
    judge_errors: int = Field(default=0, ge=0)
    judge_input_tokens: int = Field(default=0, ge=0)
    judge_output_tokens: int = Field(default=0, ge=0)
    judge_cost_usd: float | None = Field(
        default=None, description="The judges' own cost; never added to the agent's."
    )


class PairwiseReading(_Frozen):
    """One judge's two position-swapped readings of a pair on one dimension (or `overall`)."""

    judge: str = Field(description="The judge target's name.")
    judge_model: str
    r1: Literal["FIRST", "SECOND", "TIE", "INVALID"]
    r2: Literal["FIRST", "SECOND", "TIE", "INVALID"]
    w1: PairwiseSlot | None
    w2: PairwiseSlot | None
    consistent: bool
    position_following: bool
    vote: PairwiseSlot | None


class PairwiseDimension(_Frozen):
    """The panel's swapped verdict on one dimension (or `overall`) of a pair."""

    dimension: str = Field(description="A dimension, or `overall`.")
    readings: tuple[PairwiseReading, ...]
    verdict: PairwiseSlot
    bias_detected: bool = Field(description="Some judge picked the same slot in both orders.")


class PairwiseVerdict(_Frozen):
    """Two agents on one case, compared by the panel with the order swapped (§5).

    Which agent is `agent_a` is drawn per case from the recorded seed, so no agent sits in the
    first slot by construction.
    """

    case_key: str
    test_id: str
    agent_a: str
    agent_b: str
    seed: int
    winner: str | None = Field(description="The winning agent overall; None for a tie.")
    overall: PairwiseDimension
    per_dimension: tuple[PairwiseDimension, ...] = ()
    bias_detected: bool
    errors: JudgeErrors = ()
    judge_calls: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    judge_cost_usd: float | None = None


class CasePairwise(_Frozen, StoredRecord):
    """The `pairwise_verdicts` record of one case: every pair of the agents that ran it."""

    case_key: str
    pairs: tuple[PairwiseVerdict, ...]

"""The judging layer's data model (reference spec `judging.md` §1, §9): judge verdicts with their
evidence, and failure classifications. Panel, pairwise, blending and corrected-rate results are
the return types of the pure functions in `evals_pipeline.statistics`.

Every model is frozen with `extra="forbid"`: a judge's JSON that carries an unknown field is
rejected rather than silently trimmed. Fields are snake_case, in JSON too. Fields marked "set by
grounding" keep their defaults until `evals_pipeline.judges.grounding` has checked the verdict.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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

    judge_model: str = Field(description="Dated snapshot id of the judge model.")
    dimension: Dimension
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    critique: str = ""
    evidence: tuple[Evidence, ...] = ()
    verified_fraction: float | None = Field(default=None, ge=0, le=1)
    valid: bool | None = Field(default=None, description="False = abstains; None = not grounded.")
    effective_confidence: float | None = Field(default=None, ge=0, le=1)
    partially_grounded: bool = False
    retried: bool = False


class FailureClassification(_Frozen):
    """Why a failed trial failed (§9): one primary category, its tier, and what fired the rule."""

    primary: FailureCategory
    tier: FailureTier
    secondary: tuple[str, ...] = Field(
        default=(), description="Other categories that fired, then tags such as `looping`."
    )
    evidence: tuple[str, ...] = Field(default=(), description="Event ids and snippets.")
    rule_id: str = Field(description="The rule and clause that fired, e.g. `E2.backoff_share`.")

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

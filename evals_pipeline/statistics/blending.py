"""Blending a code heuristic with the LLM panel score per dimension (judging.md §6).

Objective properties get heuristics and nuance gets model judges; the weight sets how far each
dimension trusts the heuristic. A weight change changes the decision, so TPR/TNR must be re-measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict

PASS_THRESHOLD: Final = 0.5
DEFAULT_WEIGHTS: Final[Mapping[str, float]] = {
    "correctness": 0.7,
    "completeness": 0.4,
    "codeQuality": 0.2,
    "minimalDiff": 0.6,
    "verification": 0.5,
}
"""Heuristic weight w_d per dimension (§0 design choices, independent per dimension)."""

# Float rounding must not fail a blend that is mathematically on the threshold.
_EPS: Final = 1e-12


class DimensionScore(BaseModel):
    """One dimension's heuristic, LLM and blended scores and its pass decision (§1, §6).

    `llm_excluded` is True whenever the panel gave no score (no quorum or no LLM judge).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dimension: str
    heuristic_score: float | None
    llm_score: float | None
    weight_heuristic: float
    blended_score: float | None
    passed: bool | None
    llm_excluded: bool


def blend(
    dimension: str,
    heuristic: float | None,
    llm: float | None,
    *,
    weight: float | None = None,
    threshold: float = PASS_THRESHOLD,
) -> DimensionScore:
    """blended = w·h + (1 - w)·l; h alone without quorum, l alone without a heuristic, None without both.

    `weight` defaults to the dimension's entry in DEFAULT_WEIGHTS; passed = blended ≥ threshold.
    """
    w = DEFAULT_WEIGHTS[dimension] if weight is None else weight
    for name, value in (("weight", w), ("heuristic", heuristic), ("llm", llm)):
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {value}")
    if heuristic is not None and llm is not None:
        blended: float | None = min(1.0, w * heuristic + (1 - w) * llm)
    else:
        blended = heuristic if heuristic is not None else llm
    return DimensionScore(
        dimension=dimension,
        heuristic_score=heuristic,
        llm_score=llm,
        weight_heuristic=w,
        blended_score=blended,
        passed=None if blended is None else blended >= threshold - _EPS,
        llm_excluded=llm is None,
    )


def blend_dimensions(
    heuristics: Mapping[str, float | None],
    llm_scores: Mapping[str, float | None],
    *,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    threshold: float = PASS_THRESHOLD,
) -> dict[str, DimensionScore]:
    """Blend every dimension named in either mapping; a missing entry counts as None."""
    names = list(dict.fromkeys([*heuristics, *llm_scores]))
    return {
        name: blend(
            name,
            heuristics.get(name),
            llm_scores.get(name),
            weight=weights[name],
            threshold=threshold,
        )
        for name in names
    }

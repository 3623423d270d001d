"""Judge calibration against human labels: TPR/TNR, Wilson intervals, Cohen's κ (judging.md §4, §7).

The pairs must come from the exact decision that produces the observed rate (panel + grounding +
blend), on the test split only: §8 feeds these TPR/TNR straight into the correction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

from pydantic import BaseModel, ConfigDict

from evals_pipeline.models.statistics import Calibration
from evals_pipeline.statistics.distributions import Z95
from evals_pipeline.statistics.labels import Verdict, is_pass

MAX_PILOT_RATE: Final = 0.99
"""Ceiling on pilot TPR/TNR in the label allocation; at 1 the ratio rho is 0 or infinite."""


class LabelAllocation(BaseModel):
    """How to split a labelling budget between human-PASS and human-FAIL items (§7, Lee et al. 2025)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rho: float
    m1_exact: float
    m1: int
    m0: int


def calibration_from_counts(tp: int, fn: int, tn: int, fp: int, *, z: float = Z95) -> Calibration:
    """Build from the four cells: tp/fn split the human-PASS items, tn/fp the human-FAIL ones."""
    if min(tp, fn, tn, fp) < 0:
        raise ValueError(f"counts must be ≥ 0, got tp={tp} fn={fn} tn={tn} fp={fp}")
    m1, m0 = tp + fn, tn + fp
    tpr = tp / m1 if m1 else None
    tnr = tn / m0 if m0 else None
    return Calibration(
        tp=tp, fn=fn, tn=tn, fp=fp, m1=m1, m0=m0, tpr=tpr, tnr=tnr,
        youden=tpr + tnr - 1 if tpr is not None and tnr is not None else None,
        cohen_kappa=cohen_kappa(tp, fn, tn, fp),
        tpr_ci95=wilson_interval(tp, m1, z=z), tnr_ci95=wilson_interval(tn, m0, z=z),
    )  # fmt: skip


def calibrate(pairs: Iterable[tuple[Verdict | bool, Verdict | bool]]) -> Calibration:
    """Calibration from (judge verdict, human verdict) pairs; PASS is the positive class (§0)."""
    tp = fn = tn = fp = 0
    for judge, human in pairs:
        judged_pass, human_pass = is_pass(judge), is_pass(human)
        if human_pass:
            tp, fn = tp + judged_pass, fn + (not judged_pass)
        else:
            tn, fp = tn + (not judged_pass), fp + judged_pass
    return calibration_from_counts(tp, fn, tn, fp)


def calibrate_by_dimension(
    rows: Iterable[tuple[str, Verdict | bool, Verdict | bool]],
) -> dict[str, Calibration]:
    """One Calibration per dimension from (dimension, judge verdict, human verdict) rows.

    Each dimension is a separate binary judge with its own TPR/TNR pair (§2), so nothing pools.
    """
    grouped: dict[str, list[tuple[Verdict | bool, Verdict | bool]]] = {}
    for dimension, judge, human in rows:
        grouped.setdefault(dimension, []).append((judge, human))
    return {dimension: calibrate(pairs) for dimension, pairs in grouped.items()}


def cohen_kappa(tp: int, fn: int, tn: int, fp: int) -> float | None:
    """Cohen's κ = (p_o - p_e)/(1 - p_e) of judge vs human (Cohen 1960); None if p_e = 1 or no items.

    Reported alongside TPR/TNR, not gated on: κ mixes both error rates with the prevalence.
    """
    total = tp + fn + tn + fp
    if total == 0:
        return None
    p_o = (tp + tn) / total
    judge_pass, human_pass = (tp + fp) / total, (tp + fn) / total
    p_e = judge_pass * human_pass + (1 - judge_pass) * (1 - human_pass)
    if p_e >= 1:
        return None
    return (p_o - p_e) / (1 - p_e)


def wilson_interval(successes: int, trials: int, *, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927); [0, 1] for zero trials.

    Used for TPR and TNR themselves: it stays inside [0, 1] and behaves at 46/50 or 50/50.
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 ≤ successes ≤ trials, got {successes}/{trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / (1 + z2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def allocate_labels(
    budget: int, prevalence: float, tpr: float, tnr: float, *, max_rate: float = MAX_PILOT_RATE
) -> LabelAllocation:
    """Split `budget` human labels into m1 PASS and m0 FAIL items to narrow the §8 interval.

    rho = (1 - TNR)/(1 - TPR), m1 = round(m / (1 + (1/p - 1)·√rho)), m0 = m - m1 (Lee et al. 2025,
    no pilot data). The spec clips only TPR below 1; TNR is clipped too (at `max_rate`), else a
    perfect pilot TNR sends the whole budget to PASS and leaves §8 with m0 = 0. Rounding is half up.
    """
    if budget < 0:
        raise ValueError(f"budget must be ≥ 0, got {budget}")
    if not 0 < prevalence <= 1:
        raise ValueError(f"prevalence must be in (0, 1], got {prevalence}")
    if not (0 <= tpr <= 1 and 0 <= tnr <= 1):
        raise ValueError(f"pilot TPR/TNR must be in [0, 1], got {tpr}, {tnr}")
    rho = (1 - min(tnr, max_rate)) / (1 - min(tpr, max_rate))
    m1_exact = budget / (1 + (1 / prevalence - 1) * math.sqrt(rho))
    m1 = math.floor(m1_exact + 0.5)
    return LabelAllocation(rho=rho, m1_exact=m1_exact, m1=m1, m0=budget - m1)

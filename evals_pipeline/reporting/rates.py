"""Per agent x dimension pass rates corrected for judge error, and the calibration behind them
(judging.md §7, §8, §11).

The observed rate of a dimension counts the trials whose blended decision passed, among the
judged trials with a decision that are not environmental failures. The human labels are matched
to this run's own blended decisions of the same (test, agent, trial, dimension): the calibration
measures the exact decision that produced the observed rate (panel + grounding + blend), pooled
over agents, and Rogan-Gladen with the Lang-Reiczigel interval corrects each agent's rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from evals_pipeline.models.judging import DIMENSIONS, CaseJudgment, Dimension, DimensionJudgment
from evals_pipeline.models.report import CalibrationReport, DimensionCalibration, DimensionRate
from evals_pipeline.reporting.labels import HumanLabel
from evals_pipeline.statistics import calibrate, corrected_rate
from evals_pipeline.statistics.rates import J_WARN
from evals_pipeline.suites.slugs import slugify

MIN_RATE = 0.80
"""§7's minimum TPR and TNR on the calibration labels; below it the dimension gets a warning."""
MIN_CLASS_LABELS = 30
"""§7: 30-50 labels per class; fewer and the corrected interval is wide."""

Key = tuple[str, str, int, Dimension]
"""(test id, agent slug, trial, dimension): what a decision and a label are about."""


@dataclass(frozen=True)
class Decision:
    """One dimension of one trial as the judges left it."""

    agent: str
    judgment: DimensionJudgment
    environmental: bool


@dataclass(frozen=True)
class LabelMatch:
    """The labels in the split used, split into those matched to a decision and the rest."""

    split: Literal["test", "all"]
    in_split: int
    matched: tuple[tuple[HumanLabel, Decision], ...]
    unmatched: int
    environmental: int


@cache
def agent_slug(agent: str) -> str:
    return slugify(agent)


def judged_dimensions(judgments: Iterable[CaseJudgment]) -> list[Dimension]:
    """The dimensions any trial was judged on, in the spec's order."""
    seen = {d.dimension for j in judgments for t in j.trials for d in t.dimensions}
    return [d for d in DIMENSIONS if d in seen]


def decisions(judgments: Iterable[CaseJudgment]) -> dict[Key, Decision]:
    """Every judged (test, agent, trial, dimension) of the run, keyed as labels are."""
    index: dict[Key, Decision] = {}
    for j in judgments:
        for t in j.trials:
            environmental = t.failure is not None and t.failure.tier == "environmental"
            for d in t.dimensions:
                key = (j.test_id, agent_slug(j.agent), t.trial, d.dimension)
                index[key] = Decision(j.agent, d, environmental)
    return index


def match_labels(labels: Sequence[HumanLabel], index: dict[Key, Decision]) -> LabelMatch:
    """The labels to use (test split when any label has a split, else all) matched to decisions.

    A label matches when its trial dimension has a decision (`passed` not None) and the trial is
    not an environmental failure: those trials are outside the judged set the rates describe.
    """
    split: Literal["test", "all"] = "test" if any(x.split for x in labels) else "all"
    used = [x for x in labels if x.split == "test"] if split == "test" else list(labels)
    matched: list[tuple[HumanLabel, Decision]] = []
    unmatched = environmental = 0
    for label in used:
        decision = index.get(label.key)
        if decision is None or decision.judgment.passed is None:
            unmatched += 1
        elif decision.environmental:
            environmental += 1
        else:
            matched.append((label, decision))
    return LabelMatch(split, len(used), tuple(matched), unmatched, environmental)


def calibration_report(
    labels: Sequence[HumanLabel], match: LabelMatch, *, source: str | None = None
) -> CalibrationReport:
    """TPR/TNR with Wilson intervals and κ per dimension, from the matched labels."""
    by_dimension: dict[Dimension, list[tuple[bool, bool]]] = {}
    for label, decision in match.matched:
        passed = decision.judgment.passed
        assert passed is not None  # match_labels keeps decided trials only
        by_dimension.setdefault(label.dimension, []).append((passed, label.human_verdict == "PASS"))
    rows = []
    for dimension in DIMENSIONS:
        if dimension not in by_dimension:
            continue
        c = calibrate(by_dimension[dimension])
        rows.append(
            DimensionCalibration(
                dimension=dimension, labels_used=c.m1 + c.m0,
                tp=c.tp, fn=c.fn, tn=c.tn, fp=c.fp, m1=c.m1, m0=c.m0,
                tpr=c.tpr, tnr=c.tnr, tpr_ci95=c.tpr_ci95, tnr_ci95=c.tnr_ci95,
                youden=c.youden, kappa=c.cohen_kappa, warnings=_calibration_warnings(c.tpr, c.tnr, c.m1, c.m0),
            )
        )  # fmt: skip
    return CalibrationReport(
        source=source,
        split=match.split,
        labels_total=len(labels),
        labels_in_split=match.in_split,
        labels_used=len(match.matched),
        unmatched=match.unmatched,
        environmental=match.environmental,
        dimensions=rows,
    )


def _calibration_warnings(
    tpr: float | None, tnr: float | None, m1: int, m0: int
) -> tuple[str, ...]:
    warnings = []
    if tpr is not None and tpr < MIN_RATE:
        warnings.append("tpr-below-0.80")
    if tnr is not None and tnr < MIN_RATE:
        warnings.append("tnr-below-0.80")
    if m1 < MIN_CLASS_LABELS:
        warnings.append("few-pass-labels")
    if m0 < MIN_CLASS_LABELS:
        warnings.append("few-fail-labels")
    if tpr is not None and tnr is not None and tpr + tnr - 1 < J_WARN:
        warnings.append("low-youden")
    return tuple(warnings)


def dimension_rates(
    judgments: Sequence[CaseJudgment],
    agents: Sequence[str],
    calibration: CalibrationReport | None,
) -> list[DimensionRate]:
    """One row per agent (in `agents` order, those with judgments) and judged dimension."""
    dimensions = judged_dimensions(judgments)
    by_dimension = {c.dimension: c for c in calibration.dimensions} if calibration else {}
    by_agent: dict[str, list[CaseJudgment]] = {}
    for j in judgments:
        by_agent.setdefault(j.agent, []).append(j)
    rows = []
    for agent in [a for a in agents if a in by_agent]:
        counts = _counts(by_agent[agent], dimensions)  # one pass over them for every dimension
        for dimension in dimensions:
            rows.append(
                _rate(agent, dimension, counts[dimension], by_dimension.get(dimension), calibration)
            )
    return rows


@dataclass
class _Counts:
    n: int = 0  # trials judged on the dimension
    k: int = 0  # of them passed
    environmental: int = 0
    undecided: int = 0  # no decision: no heuristic nor panel, or the trial errored


def _counts(
    judgments: Sequence[CaseJudgment], dimensions: Sequence[Dimension]
) -> dict[Dimension, _Counts]:
    """Each dimension's trial counts; a trial's first verdict on a dimension is the one counted."""
    counts = {dimension: _Counts() for dimension in dimensions}
    for j in judgments:
        for t in j.trials:
            if t.failure is not None and t.failure.tier == "environmental":
                for c in counts.values():
                    c.environmental += 1
                continue
            if not t.judged:
                # An errored trial: counted apart as undecided, never in n (so never a pass).
                for c in counts.values():
                    c.undecided += 1
                continue
            first: dict[str, DimensionJudgment] = {}
            for d in t.dimensions:
                first.setdefault(d.dimension, d)
            for dimension, c in counts.items():
                found = first.get(dimension)
                if found is None or found.passed is None:
                    c.undecided += 1
                    continue
                c.n += 1
                c.k += found.passed
    return counts


def _rate(
    agent: str,
    dimension: Dimension,
    counts: _Counts,
    cal: DimensionCalibration | None,
    calibration: CalibrationReport | None,
) -> DimensionRate:
    n, k = counts.n, counts.k
    environmental, undecided = counts.environmental, counts.undecided
    if cal is None:
        rate = corrected_rate(k, n, 0, 0, 0, 0, dimension=dimension)
        reason = "no-calibration-file" if calibration is None else "no-labels-for-dimension"
        if n == 0:
            reason = "no-judged-trials"
        rate = rate.model_copy(update={"reason": reason})
    else:
        rate = corrected_rate(k, n, cal.tp, cal.m1, cal.tn, cal.m0, dimension=dimension)
    return DimensionRate.model_validate(
        rate.model_dump(exclude={"dimension"})
        | {
            "agent": agent,
            "dimension": dimension,
            "n_passed": k,
            "n_environmental": environmental,
            "n_undecided": undecided,
        }
    )

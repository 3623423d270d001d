"""Heuristic + LLM blending per dimension, with the fallbacks of §6."""

from __future__ import annotations

import pytest

from evals_pipeline.statistics.blending import DEFAULT_WEIGHTS, blend, blend_dimensions
from evals_pipeline.statistics.labels import Verdict
from evals_pipeline.statistics.panel import PanelVote, panel_vote

TOL4 = 5e-5


def _votes(*verdicts: Verdict | None) -> list[PanelVote]:
    # None is an invalid vote (abstention)
    return [
        PanelVote(verdict=v or "FAIL", effective_confidence=0.9, valid=v is not None)
        for v in verdicts
    ]


# §6 vector table: dimension, h_d, panel votes, l_d, w_d, blended, passed, llm_excluded
SECTION6 = [
    ("correctness", 0.8, _votes("PASS", "PASS", "FAIL"), 0.6667, 0.7, 0.76, True, False),
    ("completeness", 1.0, _votes("PASS", "FAIL", "FAIL"), 0.3333, 0.4, 0.6, True, False),
    ("codeQuality", 0.5, _votes("PASS", "PASS", "PASS"), 1.0, 0.2, 0.9, True, False),
    ("minimalDiff", 0.9, _votes("PASS", None, None), None, 0.6, 0.9, True, True),
    ("verification", 0.0, _votes("FAIL", "FAIL", "FAIL"), 0.0, 0.5, 0.0, False, False),
]


@pytest.mark.parametrize(
    ("dimension", "heuristic", "votes", "llm", "weight", "blended", "passed", "excluded"),
    SECTION6,
    ids=[row[0] for row in SECTION6],
)
def test_section6_vectors(
    dimension: str,
    heuristic: float,
    votes: list[PanelVote],
    llm: float | None,
    weight: float,
    blended: float,
    passed: bool,
    excluded: bool,
) -> None:
    panel_score = panel_vote(votes).panel_score
    if llm is None:
        assert panel_score is None
    else:
        assert panel_score is not None and abs(panel_score - llm) < TOL4
    assert DEFAULT_WEIGHTS[dimension] == weight
    score = blend(dimension, heuristic, panel_score)
    assert score.blended_score is not None and abs(score.blended_score - blended) < TOL4
    assert score.passed is passed
    assert score.llm_excluded is excluded
    assert score.weight_heuristic == weight


def test_llm_only_and_nothing() -> None:
    # §6: l alone when h is None; None when both are (dimension skipped)
    llm_only = blend("codeQuality", None, 0.6667)
    assert (
        llm_only.blended_score == 0.6667
        and llm_only.passed is True
        and llm_only.llm_excluded is False
    )
    skipped = blend("codeQuality", None, None)
    assert skipped.blended_score is None and skipped.passed is None and skipped.llm_excluded is True


@pytest.mark.parametrize(
    ("weight", "h", "l"), [(0.7, 0.5, 0.5), (0.4, 0.5, 0.5), (0.4, 0.125, 0.75)]
)
def test_blend_on_the_threshold_passes(weight: float, h: float, l: float) -> None:  # noqa: E741
    # §6 passed = blended ≥ 0.5, also when float rounding lands a hair below 0.5
    assert blend("correctness", h, l, weight=weight).passed is True


def test_float_rounding_case_is_real() -> None:
    # 0.4·0.125 + 0.6·0.75 is 0.5 exactly, but 0.49999999999999994 in floats
    assert 0.4 * 0.125 + (1 - 0.4) * 0.75 < 0.5


def test_just_below_threshold_fails() -> None:
    assert blend("correctness", 0.49, 0.5, weight=1.0).passed is False


def test_custom_weight_and_threshold() -> None:
    score = blend("correctness", 1.0, 0.0, weight=0.3, threshold=0.25)
    assert score.blended_score == pytest.approx(0.3) and score.passed is True
    assert blend("correctness", 1.0, 0.0, weight=0.3, threshold=0.35).passed is False


@pytest.mark.parametrize(("h", "l", "w"), [(1.2, 0.5, 0.5), (0.5, -0.1, 0.5), (0.5, 0.5, 1.5)])
def test_out_of_range_inputs_raise(h: float, l: float, w: float) -> None:  # noqa: E741
    with pytest.raises(ValueError):
        blend("correctness", h, l, weight=w)


def test_unknown_dimension_needs_a_weight() -> None:
    with pytest.raises(KeyError):
        blend("style", 0.5, 0.5)
    assert blend("style", 0.5, 1.0, weight=0.5).blended_score == 0.75


def test_blend_dimensions_covers_either_mapping() -> None:
    scores = blend_dimensions(
        {"correctness": 0.8, "minimalDiff": 0.9}, {"correctness": 2 / 3, "verification": 0.0}
    )
    assert set(scores) == {"correctness", "minimalDiff", "verification"}
    assert abs(scores["correctness"].blended_score - 0.76) < TOL4  # type: ignore[operator]
    assert scores["minimalDiff"].llm_excluded is True
    assert scores["verification"].passed is False

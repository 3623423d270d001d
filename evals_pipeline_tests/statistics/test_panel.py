"""PoLL majority with quorum, position-swapped pairwise verdicts and per-judge position bias."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from evals_pipeline.statistics.labels import PairwiseVote, SlotReading, Verdict
from evals_pipeline.statistics.panel import (
    PanelVote,
    combine_pairwise,
    pairwise_judge,
    pairwise_verdict,
    panel_vote,
    pool_graded_scores,
    position_bias,
    position_bias_from_counts,
    win_rate,
)

TOL4 = 5e-5


def _v(verdict: Verdict, confidence: float | None) -> PanelVote:
    # None stands for an invalid (abstaining) vote, as in the §4 table
    if confidence is None:
        return PanelVote(verdict=verdict, effective_confidence=0.0, valid=False)
    return PanelVote(verdict=verdict, effective_confidence=confidence)


# §4 vectors P1-P4: votes, panel_verdict, panel_score, no_majority
POLL = [
    ("P1", [_v("PASS", 0.9), _v("PASS", 0.7), _v("FAIL", 0.8)], "PASS", 0.6667, False),
    ("P2", [_v("PASS", 0.9), _v("PASS", 0.7), _v("FAIL", None)], "PASS", 1.0, False),
    ("P3", [_v("PASS", 0.9), _v("PASS", None), _v("FAIL", 0.8)], "PASS", 0.5, True),
    ("P4", [_v("PASS", 0.9), _v("PASS", None), _v("FAIL", None)], None, None, False),
]


@pytest.mark.parametrize(
    ("vid", "votes", "verdict", "score", "no_majority"), POLL, ids=[p[0] for p in POLL]
)
def test_section4_poll_vectors(
    vid: str,
    votes: list[PanelVote],
    verdict: Verdict | None,
    score: float | None,
    no_majority: bool,
) -> None:
    outcome = panel_vote(votes)
    assert outcome.panel_verdict == verdict
    if score is None:
        assert outcome.panel_score is None
    else:
        assert outcome.panel_score is not None and abs(outcome.panel_score - score) < TOL4
    assert outcome.no_majority is no_majority
    assert outcome.n_valid == sum(v.valid for v in votes)


def test_section4_p5_graded_average_pooling() -> None:
    # §4 P5: graded scores 4, 3, 5 → 4.0000
    assert pool_graded_scores([4, 3, 5]) == 4.0
    assert pool_graded_scores([4]) is None  # below quorum


@pytest.mark.parametrize(
    ("pass_conf", "fail_conf", "verdict"),
    [
        (0.9, 0.8, "PASS"),  # s = 0.55 (P3)
        (0.7, 0.9, "FAIL"),  # s = 0.4
        (0.7, 0.7, "FAIL"),  # s = exactly 0.5 → FAIL, whatever float rounding of 1 - 0.7 does
        (0.1, 0.1, "FAIL"),
        (0.30000000000000004, 0.3, "PASS"),  # the smallest margin still decides
    ],
)
def test_tie_break_by_effective_confidence(
    pass_conf: float, fail_conf: float, verdict: Verdict
) -> None:
    outcome = panel_vote([_v("PASS", pass_conf), _v("FAIL", fail_conf)])
    assert outcome.panel_verdict == verdict and outcome.no_majority is True
    assert outcome.panel_score == 0.5


def test_failing_majority_and_no_votes() -> None:
    assert panel_vote([_v("FAIL", 0.6), _v("FAIL", 0.9), _v("PASS", 1.0)]).panel_verdict == "FAIL"
    empty = panel_vote([])
    assert (empty.n_valid, empty.panel_verdict, empty.panel_score) == (0, None, None)
    with pytest.raises(ValueError):
        panel_vote([], quorum=0)


def test_panel_reads_any_vote_like_object() -> None:
    @dataclass(frozen=True)
    class Grounded:  # stands in for the grounded JudgeVerdict of §1
        verdict: Verdict
        valid: bool
        effective_confidence: float

    outcome = panel_vote([Grounded("PASS", True, 0.6), Grounded("FAIL", True, 0.5)])
    assert outcome.panel_verdict == "PASS" and outcome.no_majority is True


def test_section5_b1_pair() -> None:
    # §5 B1: J1 FIRST/SECOND, J2 FIRST/FIRST, J3 FIRST/SECOND → votes A, TIE, A → A; bias (J2)
    judges = [
        pairwise_judge("FIRST", "SECOND", judge_model="j1"),
        pairwise_judge("FIRST", "FIRST", judge_model="j2"),
        pairwise_judge("FIRST", "SECOND", judge_model="j3"),
    ]
    assert [j.vote for j in judges] == ["A", "TIE", "A"]
    assert [j.position_following for j in judges] == [False, True, False]
    combined = combine_pairwise(judges)
    assert combined.verdict == "A" and combined.bias_detected is True and combined.n_valid == 3


@pytest.mark.parametrize(
    ("votes", "verdict"),
    [
        (["A", "A", "TIE"], "A"),  # §5 B2 {A:2, TIE:1}
        (["A", "TIE", "TIE"], "TIE"),  # §5 B2 {A:1, TIE:2}
        (["A", "B", "TIE"], "TIE"),  # §5 B2 {A:1, B:1, TIE:1}
        (["A", "TIE"], "TIE"),  # §5 B2 {A:1, TIE:1}
        (["B", "B", "A"], "B"),
        (["A", None, None], "A"),  # invalid judges cast no vote
        ([], "TIE"),
    ],
)
def test_section5_b2_votes(votes: list[PairwiseVote | None], verdict: PairwiseVote) -> None:
    assert pairwise_verdict(votes) == verdict


@pytest.mark.parametrize(
    ("r1", "r2", "w1", "w2", "consistent", "following", "vote"),
    [
        ("FIRST", "SECOND", "A", "A", True, False, "A"),
        ("SECOND", "FIRST", "B", "B", True, False, "B"),
        ("TIE", "TIE", "TIE", "TIE", True, False, "TIE"),
        ("FIRST", "FIRST", "A", "B", False, True, "TIE"),
        ("SECOND", "SECOND", "B", "A", False, True, "TIE"),
        (
            "FIRST",
            "TIE",
            "A",
            "TIE",
            False,
            False,
            "TIE",
        ),  # §5: inconsistent, not position-following
        ("INVALID", "FIRST", None, "B", False, False, None),
        ("INVALID", "INVALID", None, None, False, False, None),
    ],
)
def test_section5_judge_mapping(
    r1: SlotReading,
    r2: SlotReading,
    w1: PairwiseVote | None,
    w2: PairwiseVote | None,
    consistent: bool,
    following: bool,
    vote: PairwiseVote | None,
) -> None:
    result = pairwise_judge(r1, r2)
    assert (result.w1, result.w2) == (w1, w2)
    assert result.consistent is consistent
    assert result.position_following is following
    assert result.vote == vote


def test_invalid_judge_is_left_out_of_the_pair() -> None:
    combined = combine_pairwise(
        [pairwise_judge("SECOND", "FIRST"), pairwise_judge("INVALID", "FIRST")]
    )
    assert combined.verdict == "B" and combined.n_valid == 1 and combined.bias_detected is False


def test_win_rate_counts_ties_half() -> None:
    assert win_rate(["A", "B", "TIE", "TIE"]) == 0.5
    assert win_rate(["A", "A", "TIE", "B"]) == 0.625
    assert win_rate([]) is None


# §5 B3/B4: N, C, F, S → PC, primacy, recency, preference, binomial_p, bias
@pytest.mark.parametrize(
    ("n", "c", "f", "s", "pc", "primacy", "recency", "preference", "p", "bias"),
    [
        (40, 30, 8, 1, 0.75, 0.2, 0.025, 0.175, 20 / 512, True),  # B3
        (50, 45, 3, 2, 0.9, 0.06, 0.04, 0.02, 1.0, False),  # B4
        (50, 45, 0, 0, 0.9, 0.0, 0.0, 0.0, 1.0, False),  # F + S = 0 → p 1.0
        (
            100,
            85,
            10,
            1,
            0.85,
            0.1,
            0.01,
            0.09,
            24 / 2048,
            True,
        ),  # B5's F/S: biased despite good PC
        (10, 7, 2, 1, 0.7, 0.2, 0.1, 0.1, 1.0, True),  # low PC alone
    ],
)
def test_section5_position_bias_counts(
    n: int,
    c: int,
    f: int,
    s: int,
    pc: float,
    primacy: float,
    recency: float,
    preference: float,
    p: float,
    bias: bool,
) -> None:
    stats = position_bias_from_counts(n, c, f, s)
    assert stats.other == n - c - f - s
    assert stats.position_consistency is not None and abs(stats.position_consistency - pc) < TOL4
    assert stats.primacy_rate is not None and abs(stats.primacy_rate - primacy) < TOL4
    assert stats.recency_rate is not None and abs(stats.recency_rate - recency) < TOL4
    assert (
        stats.positional_preference is not None
        and abs(stats.positional_preference - preference) < TOL4
    )
    assert stats.binomial_p == pytest.approx(p, abs=1e-15)
    assert stats.bias_detected is bias


def test_section5_b3_from_judge_results() -> None:
    # §5 B3 built from readings: 30 consistent, 8 FIRST/FIRST, 1 SECOND/SECOND, 1 win-vs-TIE, plus invalid
    counts: list[tuple[SlotReading, SlotReading, int]] = [
        ("FIRST", "SECOND", 20), ("TIE", "TIE", 10), ("FIRST", "FIRST", 8),
        ("SECOND", "SECOND", 1), ("FIRST", "TIE", 1), ("INVALID", "FIRST", 3),
    ]  # fmt: skip
    stats = position_bias(pairwise_judge(r1, r2) for r1, r2, times in counts for _ in range(times))
    counted = (stats.n, stats.consistent, stats.first_first, stats.second_second, stats.other)
    assert counted == (40, 30, 8, 1, 1)
    assert stats.binomial_p == 20 / 512 and stats.bias_detected is True


def test_position_bias_without_pairs() -> None:
    stats = position_bias([])
    assert (
        stats.position_consistency is None
        and stats.binomial_p == 1.0
        and stats.bias_detected is False
    )


def test_position_bias_rejects_counts_above_n() -> None:
    with pytest.raises(ValueError):
        position_bias_from_counts(10, 8, 2, 1)


def test_ungrounded_votes_do_not_count() -> None:
    @dataclass(frozen=True)
    class Ungrounded:  # a §1 JudgeVerdict before grounding: valid and effective_confidence unset
        verdict: Verdict
        valid: bool | None
        effective_confidence: float | None

    outcome = panel_vote(
        [
            Ungrounded("PASS", None, None),
            Ungrounded("FAIL", True, 0.7),
            Ungrounded("FAIL", True, 0.6),
        ]
    )
    assert outcome.n_valid == 2 and outcome.panel_verdict == "FAIL" and outcome.no_majority is False
    with pytest.raises(ValueError):
        panel_vote([Ungrounded("PASS", True, None), Ungrounded("FAIL", True, 0.6)])

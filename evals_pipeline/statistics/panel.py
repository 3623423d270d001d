"""Panel decisions: PoLL majority vote (§4) and position-swapped pairwise verdicts (§5) of judging.md.

A panel of judges from different families outvotes any one judge's self-preference (Verga et al.
2024); judging each pair in both orders and counting only order-stable wins removes position bias
from the verdict, and the per-judge statistics show how much of it there was (Zheng et al. 2023).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from pydantic import BaseModel, ConfigDict

from evals_pipeline.models.statistics import PositionBias
from evals_pipeline.statistics.distributions import sign_test_p
from evals_pipeline.statistics.labels import PairwiseVote, SlotReading, Verdict

QUORUM: Final = 2
MIN_POSITION_CONSISTENCY: Final = 0.80
BIAS_ALPHA: Final = 0.05

# Slot → agent for each order: r1 judged (A, B), r2 judged (B, A); INVALID maps to no agent.
_A_FIRST: Final[dict[SlotReading, PairwiseVote]] = {"FIRST": "A", "SECOND": "B", "TIE": "TIE"}
_B_FIRST: Final[dict[SlotReading, PairwiseVote]] = {"FIRST": "B", "SECOND": "A", "TIE": "TIE"}


class PanelVoteLike(Protocol):
    """What the panel reads from a judge verdict; a grounded §1 `JudgeVerdict` satisfies it.

    `valid` None (not grounded yet) counts as no vote, like False: only located evidence votes.
    """

    @property
    def verdict(self) -> Verdict: ...
    @property
    def valid(self) -> bool | None: ...
    @property
    def effective_confidence(self) -> float | None: ...


class PanelVote(BaseModel):
    """One judge's grounded binary vote; `valid=False` is an abstention."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Verdict
    effective_confidence: float = 1.0
    valid: bool = True
    judge_model: str = ""


class PanelOutcome(BaseModel):
    """The decision fields of `PanelResult` (§1): None verdict and score mean no quorum."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_valid: int
    panel_verdict: Verdict | None
    panel_score: float | None
    no_majority: bool = False


class PairwiseJudgeResult(BaseModel):
    """One judge's two readings of a pair, mapped back to agents (§1, §5)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge_model: str = ""
    r1: SlotReading
    r2: SlotReading
    w1: PairwiseVote | None
    w2: PairwiseVote | None
    consistent: bool
    position_following: bool
    vote: PairwiseVote | None


class PairwiseCombination(BaseModel):
    """The panel's verdict on one pair and whether any judge followed a slot in both orders."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: PairwiseVote
    bias_detected: bool
    n_valid: int


def panel_vote(votes: Iterable[PanelVoteLike], *, quorum: int = QUORUM) -> PanelOutcome:
    """PoLL max voting over valid votes; panel_score is the PASS share (average pooling of 0/1).

    A PASS/FAIL tie is broken by s = mean(e if PASS else 1 - e) > 0.5, exactly 0.5 → FAIL. Since a
    tie has as many PASS as FAIL votes, s > 0.5 ⇔ Σe(PASS) > Σe(FAIL); that form is compared so
    that equal confidences (0.7 vs 0.7) give FAIL rather than a float-rounding PASS.
    """
    if quorum < 1:
        raise ValueError(f"quorum must be ≥ 1, got {quorum}")
    valid = [v for v in votes if v.valid is True]
    if len(valid) < quorum:
        return PanelOutcome(n_valid=len(valid), panel_verdict=None, panel_score=None)
    passes = [_confidence(v) for v in valid if v.verdict == "PASS"]
    fails = [_confidence(v) for v in valid if v.verdict == "FAIL"]
    score = len(passes) / len(valid)
    if len(passes) != len(fails):
        verdict: Verdict = "PASS" if len(passes) > len(fails) else "FAIL"
        return PanelOutcome(n_valid=len(valid), panel_verdict=verdict, panel_score=score)
    verdict = "PASS" if math.fsum(passes) > math.fsum(fails) else "FAIL"
    return PanelOutcome(
        n_valid=len(valid), panel_verdict=verdict, panel_score=score, no_majority=True
    )


def _confidence(vote: PanelVoteLike) -> float:
    if vote.effective_confidence is None:
        raise ValueError("a valid vote needs its effective_confidence (set by grounding)")
    return vote.effective_confidence


def pool_graded_scores(scores: Sequence[float], *, quorum: int = QUORUM) -> float | None:
    """Average pooling of graded (1-5) panel scores; None below quorum, as for binary votes."""
    if len(scores) < quorum:
        return None
    return math.fsum(scores) / len(scores)


def pairwise_judge(
    r1: SlotReading, r2: SlotReading, *, judge_model: str = ""
) -> PairwiseJudgeResult:
    """Map one judge's readings (r1: A first, r2: B first) to agents and its vote.

    An INVALID reading maps to w = None (the §1 type allows it) and the judge casts no vote;
    a win in one order and a TIE in the other is inconsistent but not position-following.
    """
    w1, w2 = _A_FIRST.get(r1), _B_FIRST.get(r2)
    valid = w1 is not None and w2 is not None
    consistent = valid and w1 == w2
    return PairwiseJudgeResult(
        judge_model=judge_model, r1=r1, r2=r2, w1=w1, w2=w2, consistent=consistent,
        position_following=valid and r1 == r2 and r1 in ("FIRST", "SECOND"),
        vote=(w1 if consistent else "TIE") if valid else None,
    )  # fmt: skip


def pairwise_verdict(votes: Iterable[PairwiseVote | None]) -> PairwiseVote:
    """A or B only with a plurality over both the other agent and TIE; otherwise TIE (None = no vote)."""
    counts = Counter(v for v in votes if v is not None)
    if counts["A"] > counts["B"] and counts["A"] > counts["TIE"]:
        return "A"
    if counts["B"] > counts["A"] and counts["B"] > counts["TIE"]:
        return "B"
    return "TIE"


def combine_pairwise(per_judge: Sequence[PairwiseJudgeResult]) -> PairwiseCombination:
    """The pair's verdict from the judges' votes; bias_detected if any judge followed a slot."""
    return PairwiseCombination(
        verdict=pairwise_verdict(j.vote for j in per_judge),
        bias_detected=any(j.position_following for j in per_judge),
        n_valid=sum(j.vote is not None for j in per_judge),
    )


def win_rate(verdicts: Sequence[PairwiseVote]) -> float | None:
    """A's win rate over cases, a TIE counting half; None with no cases."""
    if not verdicts:
        return None
    return (sum(v == "A" for v in verdicts) + 0.5 * sum(v == "TIE" for v in verdicts)) / len(
        verdicts
    )


def position_bias(
    results: Iterable[PairwiseJudgeResult],
    *,
    min_consistency: float = MIN_POSITION_CONSISTENCY,
    alpha: float = BIAS_ALPHA,
) -> PositionBias:
    """One judge's position statistics over its valid swapped pairs of a run (invalid pairs skipped)."""
    valid = [r for r in results if r.vote is not None]
    return position_bias_from_counts(
        n=len(valid),
        consistent=sum(r.consistent for r in valid),
        first_first=sum(r.r1 == r.r2 == "FIRST" for r in valid),
        second_second=sum(r.r1 == r.r2 == "SECOND" for r in valid),
        min_consistency=min_consistency,
        alpha=alpha,
    )


def position_bias_from_counts(
    n: int,
    consistent: int,
    first_first: int,
    second_second: int,
    *,
    min_consistency: float = MIN_POSITION_CONSISTENCY,
    alpha: float = BIAS_ALPHA,
) -> PositionBias:
    """PC = C/N, primacy F/N, recency S/N, preference (F - S)/N, and the exact binomial test of F vs S.

    Biased when PC < min_consistency (order-dependent verdicts) or p < alpha (a directional
    preference even with good PC); with F + S ≤ 5 the test cannot reach 0.05.
    """
    other = n - consistent - first_first - second_second
    if min(consistent, first_first, second_second, other) < 0:
        raise ValueError(
            f"need C + F + S ≤ N, got N={n} C={consistent} F={first_first} S={second_second}"
        )
    p = sign_test_p(first_first, first_first + second_second)
    pc = consistent / n if n else None
    return PositionBias(
        n=n, consistent=consistent, first_first=first_first, second_second=second_second,
        other=other, position_consistency=pc,
        primacy_rate=first_first / n if n else None,
        recency_rate=second_second / n if n else None,
        positional_preference=(first_first - second_second) / n if n else None,
        binomial_p=p,
        bias_detected=(pc is not None and pc < min_consistency) or p < alpha,
    )  # fmt: skip

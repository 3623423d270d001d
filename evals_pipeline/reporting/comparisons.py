"""Agent against agent (judging.md §5, §10): paired tests on the cases both ran, and the panel's
position-swapped pairwise verdicts.

Pairing by case cancels case difficulty. McNemar pairs the case verdicts (`pass` or not: the
case's aggregate over its trials); the bootstrap resamples whole cases and compares the per-case
share of passed trials, so several trials of one case stay together (Miller 2024). The same
seed is used for every pair and recorded. Pairwise verdicts are tallied from agent A's side:
wins, ties, losses and A's win rate (wins + ½·ties) / N, overall and per dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from statistics import fmean

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import DIMENSIONS, CasePairwise, PairwiseVerdict
from evals_pipeline.models.report import AgentComparison, JudgeHealth, PairwiseTally
from evals_pipeline.reporting.judge_health import pair_dimensions
from evals_pipeline.statistics import mcnemar, paired_bootstrap, paired_table

BOOTSTRAP_RESAMPLES = 10_000


def comparisons(
    grades: Sequence[CaseGrade],
    pairwise: Sequence[CasePairwise],
    agents: Sequence[str],
    health: Sequence[JudgeHealth],
    *,
    seed: int,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[AgentComparison]:
    """One comparison per pair of agents (in `agents` order) with shared cases or pairwise verdicts."""
    by_agent: dict[str, dict[str, CaseGrade]] = {}
    for g in grades:
        by_agent.setdefault(g.agent, {})[g.case_key] = g
    pairs = [p for case in pairwise for p in case.pairs]
    named = {a for p in pairs for a in (p.agent_a, p.agent_b)}
    order = list(agents) + sorted(named - set(agents))
    flagged = {h.judge for h in health if h.bias_detected}
    out = []
    for a, b in combinations(order, 2):
        shared = sorted(set(by_agent.get(a, {})) & set(by_agent.get(b, {})))
        theirs = [p for p in pairs if {p.agent_a, p.agent_b} == {a, b}]
        if not shared and not theirs:
            continue
        grades_a = [by_agent[a][k] for k in shared]
        grades_b = [by_agent[b][k] for k in shared]
        comparison = AgentComparison(agent_a=a, agent_b=b, n_cases=len(shared))
        if shared:
            table = paired_table(
                [g.verdict == "pass" for g in grades_a], [g.verdict == "pass" for g in grades_b]
            )
            comparison = comparison.model_copy(
                update={
                    "mcnemar": mcnemar(table),
                    "bootstrap": paired_bootstrap(
                        [_success(g) for g in grades_a],
                        [_success(g) for g in grades_b],
                        seed=seed,
                        n_resamples=n_resamples,
                    ),
                }
            )
        if theirs:
            judges = {r.judge for p in theirs for d in pair_dimensions(p) for r in d.readings}
            comparison = comparison.model_copy(
                update={
                    "n_pairwise": len(theirs),
                    "pairwise": _tallies(a, theirs),
                    "position_bias_detected": any(p.bias_detected for p in theirs)
                    or bool(judges & flagged),
                }
            )
        out.append(comparison)
    return out


def _success(grade: CaseGrade) -> float:
    """The case's share of passed trials (its verdict when it has no trials)."""
    if not grade.trials:
        return float(grade.verdict == "pass")
    return fmean(t.verdict == "pass" for t in grade.trials)


def _tallies(agent: str, pairs: Sequence[PairwiseVerdict]) -> list[PairwiseTally]:
    """Wins, ties and losses of `agent` per dimension, `overall` first, then the spec's order."""
    outcomes: dict[str, list[str]] = {}
    biased: dict[str, bool] = {}
    for pair in pairs:
        flip = pair.agent_a != agent
        for d in pair_dimensions(pair):
            verdict = d.verdict
            if flip and verdict != "TIE":
                verdict = "B" if verdict == "A" else "A"
            outcomes.setdefault(d.dimension, []).append(verdict)
            biased[d.dimension] = biased.get(d.dimension, False) or d.bias_detected
    rank = {name: i for i, name in enumerate(("overall", *DIMENSIONS))}
    tallies = []
    for dimension in sorted(outcomes, key=lambda d: (rank.get(d, len(rank)), d)):
        verdicts = outcomes[dimension]
        wins, ties = verdicts.count("A"), verdicts.count("TIE")
        tallies.append(
            PairwiseTally(
                dimension=dimension,
                n=len(verdicts),
                wins=wins,
                ties=ties,
                losses=len(verdicts) - wins - ties,
                win_rate=(wins + 0.5 * ties) / len(verdicts),
                bias_detected=biased[dimension],
            )
        )
    return tallies

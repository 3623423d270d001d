"""Judge health (judging.md §1, §3, §5, §7): how each judge behaved over the run.

Per judge: how many of its per-dimension votes grounding rejected (invalid, they abstain) or
never checked, how many were only partially grounded; its position statistics over every
position-swapped reading it made (each case x pair x dimension, `overall` included); and, with
human labels, its own votes against them. Readings and votes are credited to the judge target
that made them; a vote from a record older than the target's name in votes goes to the target
that used its model in the pairwise readings, else to the model id itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from evals_pipeline.models.judging import (
    CaseJudgment,
    CasePairwise,
    JudgeVerdict,
    PairwiseDimension,
    PairwiseReading,
    PairwiseVerdict,
    Verdict,
)
from evals_pipeline.models.report import JudgeHealth
from evals_pipeline.reporting.rates import LabelMatch
from evals_pipeline.statistics import PairwiseJudgeResult, calibrate, position_bias


def pair_dimensions(pair: PairwiseVerdict) -> tuple[PairwiseDimension, ...]:
    """The pair's `overall` verdict followed by its per-dimension ones."""
    return pair.overall, *pair.per_dimension


def readings(pairwise: Sequence[CasePairwise]) -> Iterator[PairwiseReading]:
    """Every judge reading of every pair and dimension of the run."""
    for case in pairwise:
        for pair in case.pairs:
            for dimension in pair_dimensions(pair):
                yield from dimension.readings


def judge_health(
    judgments: Sequence[CaseJudgment],
    pairwise: Sequence[CasePairwise],
    match: LabelMatch | None = None,
) -> list[JudgeHealth]:
    """One entry per judge, sorted by name."""
    names: dict[str, str] = {}
    models: dict[str, dict[str, None]] = {}
    by_judge: dict[str, list[PairwiseReading]] = {}
    for reading in readings(pairwise):
        names.setdefault(reading.judge_model, reading.judge)
        models.setdefault(reading.judge, {})[reading.judge_model] = None
        by_judge.setdefault(reading.judge, []).append(reading)

    def name(vote: JudgeVerdict) -> str:
        return vote.judge or names.get(vote.judge_model, vote.judge_model)

    votes: dict[str, list[JudgeVerdict]] = {}
    for j in judgments:
        for t in j.trials:
            for d in t.dimensions:
                for vote in d.votes:
                    votes.setdefault(name(vote), []).append(vote)
                    models.setdefault(name(vote), {})[vote.judge_model] = None
    labelled: dict[str, list[tuple[Verdict, Verdict]]] = {}
    for label, decision in match.matched if match else ():
        for vote in decision.judgment.votes:
            if vote.valid is True:
                labelled.setdefault(name(vote), []).append((vote.verdict, label.human_verdict))

    out = []
    for judge in sorted(models):
        cast = votes.get(judge, [])
        invalid = sum(v.valid is False for v in cast)
        ungrounded = sum(v.valid is None for v in cast)
        own = by_judge.get(judge, [])
        position = (
            position_bias(
                PairwiseJudgeResult.model_validate(r.model_dump(exclude={"judge"})) for r in own
            )
            if own
            else None
        )
        pairs = labelled.get(judge)
        out.append(
            JudgeHealth(
                judge=judge,
                models=tuple(models[judge]),
                votes=len(cast),
                invalid=invalid,
                ungrounded=ungrounded,
                partially_grounded=sum(v.partially_grounded for v in cast),
                retried=sum(v.retried for v in cast),
                grounding_failure_rate=invalid / len(cast) if cast else None,
                abstention_rate=(invalid + ungrounded) / len(cast) if cast else None,
                pairwise_readings=len(own),
                invalid_readings=sum(r.vote is None for r in own),
                position=position,
                bias_detected=position is not None and position.bias_detected,
                calibration=calibrate(pairs) if pairs else None,
            )
        )
    return out

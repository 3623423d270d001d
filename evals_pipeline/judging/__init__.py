"""The judged panel of docs/judging.md, without Dagster: grounded binary votes per dimension
(`dimension`, `grounding`) on one judge input (`input`), heuristics, the panel's verdict per trial
(`panel`), position-swapped pairwise comparison (`pairwise`), and failure attribution
(`attribution/`, with the category judge in `category` and whether a case expects file changes in
`changes`)."""

from evals_pipeline.judging.attribution import attribute_failure, failure_breakdown
from evals_pipeline.judging.pairwise import PairReadings
from evals_pipeline.judging.panel import (
    TrialVotes,
    compare_agents,
    judge_case,
    judge_trial,
    judged_trial,
    merge_votes,
    read_pairs,
    trial_votes,
)

__all__ = [
    "PairReadings",
    "TrialVotes",
    "attribute_failure",
    "compare_agents",
    "failure_breakdown",
    "judge_case",
    "judge_trial",
    "judged_trial",
    "merge_votes",
    "read_pairs",
    "trial_votes",
]

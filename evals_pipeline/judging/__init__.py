"""The judged panel of docs/judging.md, without Dagster: grounded binary votes per dimension
(`dimension`, `grounding`) on one judge input (`input`), heuristics, the panel's verdict per trial
(`panel`), position-swapped pairwise comparison (`pairwise`), and failure attribution
(`attribution/`, with the category judge in `category` and whether a case expects file changes in
`changes`)."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
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

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "PairReadings": "pairwise",
    "TrialVotes": "panel",
    "attribute_failure": "attribution",
    "compare_agents": "panel",
    "failure_breakdown": "attribution",
    "judge_case": "panel",
    "judge_trial": "panel",
    "judged_trial": "panel",
    "merge_votes": "panel",
    "read_pairs": "panel",
    "trial_votes": "panel",
}

__getattr__ = lazy_exports(__name__, _MODULES)

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

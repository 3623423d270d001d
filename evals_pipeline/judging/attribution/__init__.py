"""Failure attribution (reference spec `judging.md` §9): why a failed trial failed, as one of nine
categories in three tiers, read off the signals an enriched session and its events carry.

Environmental failures (provider, sandbox, task defects) say nothing about the agent and leave the
capability rates; resource failures mean the agent ran out of a budget before anything was
checked; capability failures mean it finished and was wrong. Rules are tried in the precedence of
§9.1 and the first that fires is the primary category; every other one that fired is secondary.

How the spec's inputs map to ours: `termination_reason` is `Session.status` plus its `error`
text (timed_out → R2, setup_error → E1, agent_error + provider / sandbox / context / budget
wording → E2 / E3 / R1 / R3). Provider errors are `error` events; `retry` events are back-off,
timed by the `retry_delay_ms` / `delayMs` the CLI reports (codex reports none, so its runs never
fire E2's back-off override). An E3 pattern counts only in a failed tool result: reading a log
that mentions ENOSPC is no infrastructure failure. `history_truncated` is a compaction summary
event (pi; claude's compact_boundary is not an event). C2's "no check after the last edit" needs
an Edit/Write event: edits made through the shell leave none.

Left out, for want of a signal: E1's pre-run task validation (reference patch, FAIL_TO_PASS tests
already passing) and flaky re-runs of the final patch, since nothing validates the task or
replays the patch; E3's tool-server 5xx, since tool results carry no HTTP status; C3's split into
FAIL_TO_PASS / PASS_TO_PASS / compile errors, since graders report one score each (C3 cites the
failing graders instead); the grounding flags, which belong to judge verdicts, not trials.

The rules of each tier are in `environmental`, `resource` and `capability`, the event signals they
read in `signals`, the secondary tags in `tags`; `classify` runs them in precedence
(`attribute_failure`) and `breakdown` counts the classifications (`failure_breakdown`).
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.judging.attribution.breakdown import failure_breakdown
    from evals_pipeline.judging.attribution.classify import attribute_failure
    from evals_pipeline.judging.attribution.environmental import (
        E2_BACKOFF_SHARE,
        PROVIDER_ERRORS_IN_A_ROW,
    )
    from evals_pipeline.judging.attribution.resource import CONTEXT_FULL_SHARE
    from evals_pipeline.judging.attribution.signals import PROVIDER_STATUSES
    from evals_pipeline.judging.attribution.tags import (
        LOOP_DUPLICATE_SHARE,
        LOOP_REPEATS,
        LOOP_WINDOW,
        TOOL_ERROR_RATE,
    )

# Each name loads its module when first used, so importing one submodule of the package
# does not run the others (and no submodule's import of a sibling loops back through here).
_MODULES = {
    "CONTEXT_FULL_SHARE": "resource",
    "E2_BACKOFF_SHARE": "environmental",
    "LOOP_DUPLICATE_SHARE": "tags",
    "LOOP_REPEATS": "tags",
    "LOOP_WINDOW": "tags",
    "PROVIDER_ERRORS_IN_A_ROW": "environmental",
    "PROVIDER_STATUSES": "signals",
    "TOOL_ERROR_RATE": "tags",
    "attribute_failure": "classify",
    "failure_breakdown": "breakdown",
}

__getattr__ = lazy_exports(__name__, _MODULES)

__all__ = [
    "CONTEXT_FULL_SHARE",
    "E2_BACKOFF_SHARE",
    "LOOP_DUPLICATE_SHARE",
    "LOOP_REPEATS",
    "LOOP_WINDOW",
    "PROVIDER_ERRORS_IN_A_ROW",
    "PROVIDER_STATUSES",
    "TOOL_ERROR_RATE",
    "attribute_failure",
    "failure_breakdown",
]

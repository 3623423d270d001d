"""A new report's place in its suite's history: the comparison with the previous report and the
trend over the last reports, filled in before the report is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evals_pipeline.history.bootstraps import Bootstraps
from evals_pipeline.history.comparison import DEFAULT_SEED, compare_runs
from evals_pipeline.history.entries import entry_for, suite_entries
from evals_pipeline.history.outcomes import CaseOutcome, read_outcomes
from evals_pipeline.history.previous import previous_entry, trend
from evals_pipeline.models.report import EvalReport


def with_history(
    report: EvalReport,
    folder: Path,
    storage_root: Path,
    outcomes: Sequence[CaseOutcome],
    *,
    seed: int = DEFAULT_SEED,
) -> EvalReport:
    """`report` (to be written into `folder`, its per-case `outcomes` given) with
    `since_previous` against the suite's previous report (the previous nightly for a nightly
    report) and `trend` over its last reports. The comparison's bootstraps are kept in `folder`
    (bootstraps.py), for `evals-pipeline compare` of the same two reports."""
    entries = suite_entries(storage_root, report.suite)
    current = entry_for(report, folder)
    previous = previous_entry(entries, current)
    since = None
    if previous is not None:
        bootstraps = Bootstraps()
        since = compare_runs(
            previous,
            read_outcomes(Path(previous.folder)),
            current,
            outcomes,
            reasons={(f.agent, f.test_id): f.reason for f in report.failures},
            seed=seed,
            bootstraps=bootstraps,
        )
        bootstraps.write(folder)
    return report.model_copy(update={"since_previous": since, "trend": trend(entries, current)})

"""Run history: a suite's reports found in the storage root, and two of them compared
(docs/report.md, "Run history and comparison"). Pure: no Dagster."""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from evals_pipeline.history.attach import ReportHistory
    from evals_pipeline.history.comparison import compare_runs, compare_stored
    from evals_pipeline.history.entries import (
        HISTORY_FILES,
        REPORT_ASSET,
        entry_for,
        mirror_reports,
        read_entry,
        suite_entries,
        suites_in,
    )
    from evals_pipeline.history.lookup import HistoryError, find_run, latest_two, pick_suite
    from evals_pipeline.history.outcomes import CaseOutcome, outcomes_from_grades, read_outcomes
    from evals_pipeline.history.previous import TREND_LENGTH, previous_entry, trend
    from evals_pipeline.history.regression import (
        RegressionCheck,
        check_regressions,
        required_test_ids,
    )

# Each name loads its module when first used: the comparison brings numpy's bootstraps and the
# outcomes pyarrow, neither of which `evals-pipeline run` needs before its agents start (the
# estimate reads past runs only).
_MODULES = {
    "ReportHistory": "attach",
    "compare_runs": "comparison",
    "compare_stored": "comparison",
    "HISTORY_FILES": "entries",
    "REPORT_ASSET": "entries",
    "entry_for": "entries",
    "mirror_reports": "entries",
    "read_entry": "entries",
    "suite_entries": "entries",
    "suites_in": "entries",
    "HistoryError": "lookup",
    "find_run": "lookup",
    "latest_two": "lookup",
    "pick_suite": "lookup",
    "CaseOutcome": "outcomes",
    "outcomes_from_grades": "outcomes",
    "read_outcomes": "outcomes",
    "TREND_LENGTH": "previous",
    "previous_entry": "previous",
    "trend": "previous",
    "RegressionCheck": "regression",
    "check_regressions": "regression",
    "required_test_ids": "regression",
}

__all__ = [
    "HISTORY_FILES",
    "REPORT_ASSET",
    "TREND_LENGTH",
    "CaseOutcome",
    "HistoryError",
    "RegressionCheck",
    "ReportHistory",
    "check_regressions",
    "compare_runs",
    "compare_stored",
    "entry_for",
    "find_run",
    "latest_two",
    "mirror_reports",
    "outcomes_from_grades",
    "pick_suite",
    "previous_entry",
    "read_entry",
    "read_outcomes",
    "required_test_ids",
    "suite_entries",
    "suites_in",
    "trend",
]

__getattr__ = lazy_exports(__name__, _MODULES)

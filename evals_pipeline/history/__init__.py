"""Run history: a suite's reports found in the storage root, and two of them compared
(docs/report.md, "Run history and comparison"). Pure: no Dagster."""

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
from evals_pipeline.history.outcomes import (
    CaseOutcome,
    outcomes_from_grades,
    read_outcomes,
)
from evals_pipeline.history.previous import TREND_LENGTH, previous_entry, trend
from evals_pipeline.history.regression import RegressionCheck, check_regressions, required_test_ids

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

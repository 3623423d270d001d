"""A new report's place in its suite's history: the comparison with the previous report and the
trend over the last reports, filled in before the report is written."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.history.bootstraps import Bootstraps
from evals_pipeline.history.comparison import DEFAULT_SEED, compare_runs
from evals_pipeline.history.entries import entry_for, suite_entries
from evals_pipeline.history.outcomes import CaseOutcome, read_outcomes
from evals_pipeline.history.previous import previous_entry, trend
from evals_pipeline.models.history import RunEntry
from evals_pipeline.models.report import EvalReport


@dataclass(frozen=True)
class ReportHistory:
    """A new report's place among its suite's reports: the entry it is compared with (the
    previous nightly for a nightly report) and the entries of its trend."""

    entries: list[RunEntry]
    current: RunEntry
    previous: RunEntry | None

    @classmethod
    def find(cls, report: EvalReport, folder: Path, storage_root: Path) -> ReportHistory:
        """The history of `report`, to be written into `folder`, among the reports in
        `storage_root`."""
        entries = suite_entries(storage_root, report.suite)
        current = entry_for(report, folder)
        return cls(entries, current, previous_entry(entries, current))

    @property
    def previous_folder(self) -> Path | None:
        """The folder of the report this one is compared with."""
        return None if self.previous is None else Path(self.previous.folder)

    def attach(
        self,
        report: EvalReport,
        outcomes: Sequence[CaseOutcome],
        *,
        seed: int = DEFAULT_SEED,
        agents: Collection[str] | None = None,
    ) -> EvalReport:
        """`report` (its per-case `outcomes` given) with `since_previous` against the previous
        report and `trend` over its last reports. The comparison's bootstraps are kept in the
        report's folder (bootstraps.py), for `evals-pipeline compare` of the same two reports.
        `agents`: compare only these (a report of some of the suite's agents, `run --target`)."""
        since = None
        if self.previous is not None:
            bootstraps = Bootstraps()
            earlier = read_outcomes(Path(self.previous.folder))
            if agents is not None:
                earlier = [o for o in earlier if o.agent in agents]
            since = compare_runs(
                self.previous,
                earlier,
                self.current,
                outcomes,
                reasons={(f.agent, f.test_id): f.reason for f in report.failures},
                seed=seed,
                bootstraps=bootstraps,
            )
            bootstraps.write(Path(self.current.folder))
        trend_entries = trend(self.entries, self.current)
        return report.model_copy(update={"since_previous": since, "trend": trend_entries})

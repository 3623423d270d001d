"""A suite's reports in the storage root, as history entries, oldest first.

Report folders are `<root>/<suite>/eval_report/<run id>/report.json` (docs/storage.md); a folder
without a readable report.json (a report being written, or not a report) is not an entry.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evals_pipeline.history.outcomes import CASES_FILE
from evals_pipeline.models.history import AgentRunFigures, RunEntry, Trigger
from evals_pipeline.models.report import EvalReport
from evals_pipeline.storage.root import StorageRoot

REPORT_ASSET = "eval_report"
REPORT_FILE = "report.json"
HISTORY_FILES = frozenset({REPORT_FILE, CASES_FILE})
"""What the history reads of each report folder (all an object-store root's mirror needs)."""


def entry_for(report: EvalReport, folder: Path | str) -> RunEntry:
    """The history entry of one report written (or to be written) into `folder`."""
    return _entry(report, folder)


def _entry(report: EvalReport | _ReportHead, folder: Path | str) -> RunEntry:
    return RunEntry(
        suite=report.suite,
        run_id=report.run_id,
        created_ms=report.created_ms,
        trigger=report.trigger,
        folder=str(folder),
        agents=[AgentRunFigures(**a.model_dump(include=_FIGURES)) for a in report.agents],
    )


_FIGURES = set(AgentRunFigures.model_fields)


def read_report(folder: Path) -> EvalReport | None:
    """The report.json of a report folder; None when it is missing or not a report."""
    try:
        return EvalReport.model_validate_json((folder / REPORT_FILE).read_bytes())
    except (OSError, ValidationError):
        return None


class _AgentHead(AgentRunFigures):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _ReportHead(BaseModel):
    """What a history entry reads of a report.json: these fields validated, the rest skipped
    (the report of a 10,000-case suite holds MBs of changes and failures; every `compare` and
    every report's history read each earlier report)."""

    suite: str
    created_ms: int
    run_id: str | None = None
    trigger: Trigger = "unknown"
    agents: list[_AgentHead]


def read_entry(folder: Path) -> RunEntry | None:
    """The history entry of a report folder; None when its report.json is missing or not a
    report."""
    try:
        head = _ReportHead.model_validate_json((folder / REPORT_FILE).read_bytes())
    except (OSError, ValidationError):
        return None
    return _entry(head, folder)


def mirror_reports(root: StorageRoot, suites: list[str] | None = None) -> Path:
    """The local folder of `root` holding what the history reads of every report of `suites`
    (default: all), fetched from an object store into this process's mirror."""
    if not root.remote:
        return root.local
    for suite in root.folders() if suites is None else suites:
        root.pull(f"{suite}/{REPORT_ASSET}", HISTORY_FILES)
    return root.local


def suites_in(root: Path) -> list[str]:
    """The suites that have at least one report folder under the storage root, by name."""
    if not root.is_dir():
        return []
    return sorted(p.parent.name for p in root.glob(f"*/{REPORT_ASSET}") if p.is_dir())


def suite_entries(root: Path, suite: str) -> list[RunEntry]:
    """Every report of `suite` under the storage root, oldest first (by creation time)."""
    folder = root / suite / REPORT_ASSET
    if not folder.is_dir():
        return []
    entries = [read_entry(run) for run in folder.iterdir() if run.is_dir()]
    return sorted((e for e in entries if e is not None), key=lambda e: (e.created_ms, e.folder))

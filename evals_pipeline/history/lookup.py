"""Finding the reports a command names: a run id, a unique prefix of one, or a report folder."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.history.entries import read_entry, suite_entries, suites_in
from evals_pipeline.models.history import RunEntry


class HistoryError(EvalsPipelineError):
    """A run that cannot be found or chosen; the message says what to give instead."""


def pick_suite(root: Path, suite: str | None) -> str:
    """`suite`, or the only suite with reports under `root`."""
    suites = suites_in(root)
    if suite is not None:
        if suite not in suites:
            known = ", ".join(suites) or "none"
            raise HistoryError(f"no reports of suite {suite!r} under {root} (suites: {known})")
        return suite
    if not suites:
        raise HistoryError(f"no reports under {root}; run a suite first (evals-pipeline run)")
    if len(suites) > 1:
        raise HistoryError(f"several suites have reports ({', '.join(suites)}); pick one: --suite")
    return suites[0]


def find_run(root: Path, spec: str, suite: str | None = None) -> RunEntry:
    """The report `spec` names: a report folder, a run id, or a prefix of exactly one run id."""
    path = Path(spec)
    if (path / "report.json").is_file():
        entry = read_entry(path.resolve())
        if entry is None:
            raise HistoryError(f"{path / 'report.json'} is not a readable report")
        return entry
    suites = [pick_suite(root, suite)] if suite else suites_in(root)
    entries = [e for s in suites for e in suite_entries(root, s)]
    exact = [e for e in entries if e.run_id == spec]
    matches = exact or [e for e in entries if (e.run_id or "").startswith(spec)]
    if not matches:
        raise HistoryError(
            f"no run {spec!r} under {root}: give a run id (or a unique prefix) from "
            "`evals-pipeline runs`, or a report folder"
        )
    if len(matches) > 1:
        named = ", ".join(f"{e.suite}/{e.run_id}" for e in matches[:5])
        raise HistoryError(f"{spec!r} names {len(matches)} runs ({named}); give more of the id")
    return matches[0]


def latest_two(root: Path, suite: str | None) -> tuple[RunEntry, RunEntry]:
    """The suite's report before the latest, and the latest."""
    name = pick_suite(root, suite)
    entries = suite_entries(root, name)
    if len(entries) < 2:
        raise HistoryError(
            f"suite {name!r} has {len(entries)} report(s) under {root}; compare needs two"
        )
    return entries[-2], entries[-1]

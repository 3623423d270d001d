"""Whether a trial's stored run is reused instead of running its agent again: the one rule the
case pipeline follows and the estimate before a run counts by."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.results.keys import CaseKeys
from evals_pipeline.results.regrading import reads_workspace
from evals_pipeline.results.store import ResultStore


@dataclass(frozen=True)
class StoredRun:
    """A trial's stored run to reuse (None: the agent runs), and why a stored run was not."""

    run: AgentRun | None
    rerun_reason: str | None = None


def stored_run(store: ResultStore, case: ResolvedCase, keys: CaseKeys, trial: int) -> StoredRun:
    """The stored run of this trial, when the case's cache is on and its key is unchanged.

    A run whose workspace was cleaned up is reused when this trial's grade is stored under its
    unchanged key, when no grader of the case reads the workspace, or when the workspace's final
    state was kept (grading restores it); else a changed grader that reads it needs the
    workspace, so the agent runs again (`rerun_reason` says why).
    """
    if not case.cache:
        return StoredRun(None)
    run = store.run(case.case_key, case.agent, keys.run(trial))
    if run is None or run.workspace_path is None or Path(run.workspace_path).exists():
        return StoredRun(run)
    if not reads_workspace(case):
        return StoredRun(run)
    if store.trial(case.case_key, case.agent, keys.trial_grade(trial)) is not None:
        return StoredRun(run)
    kept = store.workspace_state(case.case_key, case.agent, keys.run(trial))
    if kept is not None and kept.kept:
        return StoredRun(run)
    why = kept.not_kept if kept is not None else None
    return StoredRun(
        None,
        "a grader reads its deleted workspace, whose final state was not kept"
        + (f": {why}" if why else ""),
    )

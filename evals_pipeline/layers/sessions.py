"""Sessions: each run's transcript enriched once, or its stored session reused with it."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.enrichers.session import Enriched, enriched_run
from evals_pipeline.layers.agent_runs import run_folder
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.results import ResultStore


def session_record(made: Session, run: AgentRun, store: ResultStore | None = None) -> Session:
    """The sessions layer's record of `run`'s session `made`: with its run's result key, stored
    in `store` when given, then marked reused as its run is."""
    made = made.model_copy(update={"result_key": run.result_key})
    if store is not None:
        store.put("session", made)
    return made.model_copy(update={"reused": run.reused})


def session_of(run: AgentRun, folder: Path, store: ResultStore | None = None) -> Enriched:
    """`run`'s session as the layer records it, its messages still in hand when it was made
    now (a grader in this process takes them instead of reading the file back): a reused run's
    stored session, else the run enriched, its messages written once as Parquet under
    `folder`."""
    if store is not None and run.reused is not None and run.result_key is not None:
        stored = store.session(run.case_key, run.agent, run.result_key)
        if stored is not None:
            return Enriched(stored, None)
    made = enriched_run(run, run_folder(folder, run.case_key, run.agent, run.trial))
    return Enriched(session_record(made.session, run, store), made.messages)


def enrich_runs(
    runs: list[AgentRun], folder: Path, store: ResultStore | None = None
) -> list[Session]:
    """Enrich every run that was launched (not the runs the run budget left out), writing each
    session's messages once as Parquet under `folder`.

    With a `store`, each session is stored as it is made, and a reused run's stored session is
    reused with it (its messages stay where they were first written).
    """
    return [session_of(run, folder, store).session for run in runs if run.not_run is None]


def sessions_by_partition(sessions: list[Session]) -> dict[tuple[str, str], list[Session]]:
    by_partition: dict[tuple[str, str], list[Session]] = {}
    for session in sessions:
        by_partition.setdefault((session.case_key, session.agent), []).append(session)
    return by_partition

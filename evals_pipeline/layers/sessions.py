"""Sessions: each run's transcript enriched once, or taken as made ahead while the agents
ran."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals_pipeline.enrichers import enrich_run
from evals_pipeline.enrichers.ahead import SessionsAhead
from evals_pipeline.layers.agent_runs import run_folder
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.results import (
    ResultStore,
)


def sessions_ahead(ahead: SessionsAhead, folder: Path) -> Callable[[AgentRun], None]:
    """`run_agents`' `finished`: each run's session made by `ahead` while the other runs go on,
    where `enrich_runs` into `folder` would make it."""
    return lambda run: ahead.submit(run, run_folder(folder, run.case_key, run.agent, run.trial))


def session_record(made: Session, run: AgentRun, store: ResultStore | None = None) -> Session:
    """The sessions step's record of `run`'s session `made`: with its run's result key, stored
    in `store` when given, then marked reused as its run is."""
    made = made.model_copy(update={"result_key": run.result_key})
    if store is not None:
        store.put("session", made)
    return made.model_copy(update={"reused": run.reused})


def enrich_runs(
    runs: list[AgentRun],
    folder: Path,
    store: ResultStore | None = None,
    ahead: SessionsAhead | None = None,
) -> list[Session]:
    """Enrich every run that was launched (not the runs the run budget left out), writing each
    session's messages once as Parquet under `folder`; a session `ahead` made of the same run
    record while the agents ran (sessions_ahead) is taken as made.

    With a `store`, each session is stored as it is made, and a reused run's stored session is
    reused with it (its messages stay where they were first written).
    """

    def one(run: AgentRun) -> Session:
        if store is not None and run.reused is not None and run.result_key is not None:
            stored = store.session(run.case_key, run.agent, run.result_key)
            if stored is not None:
                return stored
        made = ahead.take(run) if ahead is not None else None
        if made is None:
            made = enrich_run(run, run_folder(folder, run.case_key, run.agent, run.trial))
        return session_record(made, run, store)

    return [one(run) for run in runs if run.not_run is None]


def sessions_by_partition(sessions: list[Session]) -> dict[tuple[str, str], list[Session]]:
    by_partition: dict[tuple[str, str], list[Session]] = {}
    for session in sessions:
        by_partition.setdefault((session.case_key, session.agent), []).append(session)
    return by_partition

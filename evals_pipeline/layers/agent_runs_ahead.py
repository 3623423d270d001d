"""Agent runs started before their step: `evals-pipeline run` starts its first run's agents
before it loads Dagster (2-3 s of imports and set-up here), and that run's agents step takes
their runs instead of running the agents itself; what they feed the later steps as each ends is
made meanwhile (layers/feed.py). Found by the step's folder (made_ahead.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

from evals_pipeline.made_ahead import MadeAhead
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun

RunCases = Callable[[list[ResolvedCase]], list[AgentRun]]
"""`run_agents` with all but its cases bound (its `finished` feeding the run's later steps:
layers/feed.py)."""


class AgentRunsAhead:
    """One `run_agents` call on a thread of its own, over the cases `cases_of` gives (made on
    that thread too, as the run's `cases` step makes them)."""

    def __init__(self, cases_of: Callable[[], list[ResolvedCase]], run: RunCases) -> None:
        self._known = threading.Event()
        self._cases: dict[tuple[str, str], ResolvedCase] | None = None
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agents-ahead")
        self._runs = pool.submit(self._run, cases_of, run)
        pool.shutdown(wait=False)

    def _run(self, cases_of: Callable[[], list[ResolvedCase]], run: RunCases) -> list[AgentRun]:
        try:
            cases = cases_of()
            self._cases = {(c.case_key, c.agent): c for c in cases}
        finally:
            self._known.set()
        return run(cases)

    def take(self, cases: list[ResolvedCase]) -> list[AgentRun] | None:
        """The runs of `cases`, in their order, once every one has ended; None when those
        started were of other cases (the suite changed meanwhile) or none could start."""
        self._known.wait()
        if self._cases != {(c.case_key, c.agent): c for c in cases}:
            return None
        runs = {(r.case_key, r.agent, r.trial): r for r in self._runs.result()}
        return [runs[(c.case_key, c.agent, t)] for c in cases for t in range(c.trials.count)]

    def close(self) -> None:
        """Wait for the runs started to end, claimed or not: none outlives the command."""
        wait([self._runs])


_steps: MadeAhead[AgentRunsAhead] = MadeAhead()


def start(folder: Path, ahead: AgentRunsAhead) -> AgentRunsAhead:
    """`ahead` for the agents step whose folder is `folder`."""
    return _steps.start(folder, ahead)


def claim(folder: Path) -> AgentRunsAhead | None:
    """The runs started ahead for the agents step whose folder is `folder`, if this process
    started any; the caller closes it."""
    return _steps.claim(folder)

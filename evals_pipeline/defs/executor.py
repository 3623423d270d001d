"""The executor the suites' jobs run on: in-process (the default), multiprocess (each step in a
process of its own on this host), or dagster-celery on a broker so the steps run on worker
processes, on this host or others (docs/scale-out.md)."""

from __future__ import annotations

import functools
import os
import re
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.reaping.killing import send_signal
from evals_pipeline.reaping.proc_table import ProcessStat, read_stat
from evals_pipeline.settings import Settings
from evals_pipeline.stopping import stopping, wait_for_stop

if TYPE_CHECKING:  # Dagster loads only when an executor is made: the CLI reads the setting first
    import dagster as dg

EXECUTOR_ENV = "EVALS_PIPELINE_EXECUTOR"
BROKER_ENV = "EVALS_PIPELINE_CELERY_BROKER"
BACKEND_ENV = "EVALS_PIPELINE_CELERY_BACKEND"
EXECUTORS = ("in_process", "multiprocess", "celery")
STOPPED_RUNS = "stopped on its worker, {} agent runs cut short"
"""The engine event a stopped celery step adds: how many agent runs it cut short."""
_STOPPED_RUNS = re.compile(re.escape(STOPPED_RUNS).replace(r"\{\}", r"(\d+)"))


class ExecutorSettingError(ValueError, EvalsPipelineError):
    """EVALS_PIPELINE_EXECUTOR (or the broker it needs) is not set right; the message says how."""


def executor_name(settings: Settings | None = None) -> str:
    """EVALS_PIPELINE_EXECUTOR of `settings` (default: this process's): `in_process` (the
    default), `multiprocess` or `celery`."""
    settings = settings or Settings.current()
    name = (settings.executor or "").strip() or "in_process"
    if name not in EXECUTORS:
        raise ExecutorSettingError(
            f"{EXECUTOR_ENV}={name!r} names no executor: use one of {', '.join(EXECUTORS)}"
        )
    if name == "celery" and not settings.celery_broker:
        raise ExecutorSettingError(
            f"{EXECUTOR_ENV}=celery needs {BROKER_ENV}, the broker the workers listen on "
            "(e.g. redis://127.0.0.1:6379/0); see docs/scale-out.md"
        )
    return name


def executor_from_env(settings: Settings | None = None) -> dg.ExecutorDefinition:
    """The executor EVALS_PIPELINE_EXECUTOR names. The celery executor reads its broker and
    result backend from the environment of each process that uses them (`{env: ...}`), so a
    broker password is never stored in a run's config or a job snapshot."""
    settings = settings or Settings.current()
    name = executor_name(settings)
    if name == "in_process":
        return in_process_executor()
    if name == "multiprocess":
        return multiprocess_executor()
    from celery.exceptions import DuplicateTaskNameWarning
    from dagster_celery import celery_executor

    # dagster-celery registers its step task again for every step it sends; harmless, and not
    # the user's to act on.
    warnings.filterwarnings("ignore", category=DuplicateTaskNameWarning)
    backend = BACKEND_ENV if settings.celery_backend else BROKER_ENV
    return _wrapped(celery_executor, _heard_from_celery).configured(
        {"broker": {"env": BROKER_ENV}, "backend": {"env": backend}}, name="celery"
    )


def _heard_from_celery(
    events: Callable[[], Iterator[dg.DagsterEvent]],
) -> Iterator[dg.DagsterEvent]:
    """A celery run's events, its steps on the workers counted until each is back: what a
    stopped command waits for (each stops itself once the command marks its run canceled:
    defs/celery_app.py)."""
    with _CelerySteps() as steps:
        for event in events():
            steps.heard(event)
            yield event


@functools.cache
def in_process_executor() -> dg.ExecutorDefinition:
    """Dagster's in-process executor, configured as it is, whose run, once interrupted (a run
    terminated in the Dagster UI: its worker gets SIGINT), stops its agents and graders as
    Ctrl-C does (stopping.py): no new one starts and those running end, their steps' threads
    and those working ahead alike, wherever Dagster raises the interrupt (in a step, or as the
    next one begins). `execute_in_process` (the CLI) uses an executor of its own."""
    import dagster as dg

    from evals_pipeline.stopping import stop_when_interrupted

    def within_stop(events: Callable[[], Iterator[dg.DagsterEvent]]) -> Iterator[dg.DagsterEvent]:
        with stop_when_interrupted():
            yield from events()

    return _wrapped(dg.in_process_executor, within_stop)


@functools.cache
def multiprocess_executor() -> dg.ExecutorDefinition:
    """Dagster's multiprocess executor (each step in a process of its own), configured as it is,
    whose steps' processes are interrupted (SIGINT) once this process is stopped (stopping.py:
    Ctrl-C or SIGTERM of `evals-pipeline run`), so each stops its agents and graders as an
    in-process step does. A run terminated in the Dagster UI reaches them through Dagster's own
    termination events."""
    import dagster as dg

    def heard_from(events: Callable[[], Iterator[dg.DagsterEvent]]) -> Iterator[dg.DagsterEvent]:
        # Each event carries the pid of the step process that sent it.
        with _StepProcesses() as steps:
            for event in events():
                if event.pid is not None:
                    steps.heard(event.pid)
                yield event

    return _wrapped(dg.multiprocess_executor, heard_from)


def _wrapped(
    base: dg.ExecutorDefinition,
    around: Callable[[Callable[[], Iterator[dg.DagsterEvent]]], Iterator[dg.DagsterEvent]],
) -> dg.ExecutorDefinition:
    """`base` (name, config, requirements) whose executor, as made from the run's config,
    executes each plan through `around`; built on the public Executor base (the types of its
    arguments are private, so Any)."""
    import dagster as dg

    class WrappedExecutor(dg.Executor):
        def __init__(self, inner: dg.Executor) -> None:
            self.inner = inner

        def execute(self, plan_context: Any, execution_plan: Any) -> Iterator[dg.DagsterEvent]:
            return around(lambda: self.inner.execute(plan_context, execution_plan))

        @property
        def retries(self) -> Any:
            return self.inner.retries

        @property
        def step_dependency_config(self) -> Any:
            return self.inner.step_dependency_config

        def __getattr__(self, name: str) -> Any:  # the base's own (celery's app_args)
            return getattr(self.inner, name)

    def create(init_context: dg.InitExecutorContext) -> dg.Executor:
        return WrappedExecutor(base.executor_creation_fn(init_context))  # type: ignore[misc]

    return dg.ExecutorDefinition(
        name=base.name,
        config_schema=base.config_schema.as_field(),
        executor_creation_fn=create,
        description=base.description,
        requirements=base.get_requirements,
    )


class _StepProcesses:
    """The step processes of one multiprocess run, by the pids their events carry: once this
    process is stopped, each gets SIGINT (Dagster raises it in the step, where the layers stop
    their agents and graders: stopping.stop_when_interrupted), those heard later as soon as
    they are heard. A pid is signalled only while it names the process first heard."""

    def __init__(self) -> None:
        self.own = os.getpid()
        self.known: dict[int, ProcessStat] = {}
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.watcher = threading.Thread(target=self._watch, name="step-processes", daemon=True)

    def __enter__(self) -> _StepProcesses:
        with _runs_lock:
            _runs.add(self)
        self.watcher.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        with _runs_lock:
            _runs.discard(self)

    def alive(self) -> int:
        """How many of the step processes heard still run (not exited, nor a zombie)."""
        with self.lock:
            known = list(self.known.values())
        return sum(1 for stat in known if _still_runs(stat))

    def heard(self, pid: int) -> None:
        if pid == self.own or pid in self.known:
            return
        stat = read_stat(pid)
        if stat is None:
            return  # gone already
        with self.lock:
            self.known[pid] = stat
        if stopping():
            send_signal(stat, signal.SIGINT)

    def _watch(self) -> None:
        while not self.done.is_set():
            if wait_for_stop(0.2):
                with self.lock:
                    known = list(self.known.values())
                for stat in known:
                    send_signal(stat, signal.SIGINT)
                return


class _CelerySteps:
    """The steps of one celery run sent to the workers and not yet back: a step's task returns
    all its events at once, so a step is out from the executor's `Submitting celery task`
    event (it starts a delegation) until any other event of it."""

    def __init__(self) -> None:
        self.out: set[str] = set()
        self.lock = threading.Lock()

    def __enter__(self) -> _CelerySteps:
        with _runs_lock:
            _runs.add(self)
        return self

    def __exit__(self, *_: object) -> None:
        with _runs_lock:
            _runs.discard(self)

    def heard(self, event: dg.DagsterEvent) -> None:
        if event.step_key is None:
            return
        data = event.event_specific_data
        told = _STOPPED_RUNS.fullmatch(event.message or "") if event.is_engine_event else None
        if told is not None:
            count_stopped_elsewhere(int(told.group(1)))
        sent = event.is_engine_event and getattr(data, "marker_start", None) is not None
        with self.lock:
            (self.out.add if sent else self.out.discard)(event.step_key)

    def alive(self) -> int:
        with self.lock:
            return len(self.out)


_runs: set[_StepProcesses | _CelerySteps] = set()
_runs_lock = threading.Lock()
_stopped_elsewhere = 0


def count_stopped_elsewhere(runs: int) -> None:
    """A stopped step elsewhere (a multiprocess step's process, a celery task) cut `runs` agent
    runs short."""
    global _stopped_elsewhere
    with _runs_lock:
        _stopped_elsewhere += runs


def stopped_elsewhere() -> int:
    """How many agent runs the stopped steps on celery workers cut short, as they told."""
    with _runs_lock:
        return _stopped_elsewhere


def live_steps() -> int:
    """How many steps of this process's multiprocess or celery runs still run elsewhere (step
    processes, celery tasks): what a stopped command waits for, as for its own children
    (cli/interrupts.py)."""
    with _runs_lock:
        runs = list(_runs)
    return sum(run.alive() for run in runs)


def _still_runs(stat: ProcessStat) -> bool:
    now = read_stat(stat.pid)
    return now is not None and now.running and now.start_ticks == stat.start_ticks


def celery_app_args() -> dict[str, object]:
    """What the workers' celery app is built with: the same broker and backend as the
    executor's (EVALS_PIPELINE_CELERY_BROKER, EVALS_PIPELINE_CELERY_BACKEND)."""
    from dagster_celery.executor import CeleryExecutor

    settings = Settings.current()  # a celery worker's, read once
    broker = settings.celery_broker
    if not broker:
        raise ExecutorSettingError(
            f"a celery worker needs {BROKER_ENV}, the broker the executor sends steps to "
            "(e.g. redis://127.0.0.1:6379/0); see docs/scale-out.md"
        )
    backend = settings.celery_backend or broker
    return dict(CeleryExecutor.for_cli(broker=broker, backend=backend).app_args())

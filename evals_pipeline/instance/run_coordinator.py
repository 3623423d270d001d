"""The shipped instance's run queue: Dagster's, tagging each submitted run with its suite and
agents (instance/run_tags.py) before the queue looks at it, so the queue's tag limits
(`tag_concurrency_limits` on `evals/agent`, docs/deployment.md) and the UI's filters see them."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from typing import Any, Self

import dagster as dg

from evals_pipeline.dagster_private import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    ConfigurableClassData,
    PostProcessingError,
    UserConfigSchema,
)
from evals_pipeline.instance.run_tags import eval_run_tags, range_agents, run_suites

log = logging.getLogger(__name__)


class _Seconds(dg.ScalarUnion):
    """A number of seconds above 0, fractions allowed, or `{env: VAR}` naming one, as Dagster's
    `IntSource` takes whole ones (Dagster's own queue interval is one)."""

    def __init__(self) -> None:
        super().__init__(
            scalar_type=float, non_scalar_schema=dg.Selector({"env": str}), _key="EvalsSeconds"
        )

    def post_process(self, value: Any) -> float:
        if isinstance(value, dict):
            [(_, name)] = value.items()
            value = _env_seconds(name)
        if value <= 0:  # a loop that never waits would take a core
            raise PostProcessingError(f"{value} s: an interval must be more than 0 seconds")
        return float(value)


def _env_seconds(name: str) -> float:
    raw = os.environ.get(name)
    if raw is None:
        raise PostProcessingError(f'environment variable "{name}" is not set')
    try:
        return float(raw)
    except ValueError:
        pass  # raised apart, so the chain does not carry the variable's value
    raise PostProcessingError(f'environment variable "{name}" is not a number of seconds')


class EvalRunCoordinator(dg.QueuedRunCoordinator):
    """Dagster's run queue, tagging each submitted run with its suite and agents first so that
    the queue's tag limits and the UI's run filters see them.

    Its `dequeue_interval_seconds` may be a fraction (Dagster's: whole seconds): at 0.5 the queue
    launches a run within half a second of its queueing, not a second. Its
    `backfill_interval_seconds` also sets the backfill daemon's loop (backfill_cadence.py):
    the daemon process builds the run queue before it starts its loops."""

    _dequeue_every: float | None = None

    @classmethod
    def config_type(cls) -> UserConfigSchema:
        queue = super().config_type()
        assert isinstance(queue, Mapping)  # Dagster's own schema is a dict of fields
        return {
            **queue,
            "dequeue_interval_seconds": dg.Field(
                _Seconds(),
                is_required=False,
                description="How often the daemon looks for queued runs to launch, in seconds; "
                "fractions allowed (Dagster: 5).",
            ),
            "backfill_interval_seconds": dg.Field(
                _Seconds(),
                is_required=False,
                description="How often the backfill daemon looks at backfills, in seconds "
                "(Dagster: 30).",
            ),
        }

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> Self:
        seconds = config_value.get("backfill_interval_seconds")
        if seconds is not None:
            # Here, not at the top: it imports Dagster's daemon (~0.15 s), which only the
            # processes that build the run queue need, never a run or a code location.
            from evals_pipeline.instance.backfill_cadence import set_backfill_interval

            set_backfill_interval(seconds)
        dequeue = config_value.get("dequeue_interval_seconds")
        # Dagster's queue takes whole seconds; its daemon's loop takes any number (below).
        whole = None if dequeue is None else math.ceil(dequeue)
        coordinator = super().from_config_value(
            inst_data, {**config_value, "dequeue_interval_seconds": whole}
        )
        coordinator._dequeue_every = dequeue
        return coordinator

    @property
    def dequeue_interval_seconds(self) -> float:  # type: ignore[override]  # Dagster's: int
        """The queue daemon's loop (Dagster's daemon takes any number; it waits in steps of half
        a second)."""
        if self._dequeue_every is None:
            return super().dequeue_interval_seconds
        return self._dequeue_every

    def register_instance(self, instance: Any) -> None:
        super().register_instance(instance)
        # The daemon builds its run queue when it starts and launches the runs: its run
        # launcher is built now too, so a warm one readies its workers' server before the
        # first run (run_launcher.py).
        from evals_pipeline.instance.run_launcher import in_daemon

        if in_daemon():
            instance.run_launcher  # noqa: B018

    def submit_run(self, context: dg.SubmitRunContext) -> dg.DagsterRun:
        run = context.dagster_run
        tags = eval_run_tags(run_suites(run), range_agents(run.tags, _range_keys(context)))
        missing = {k: v for k, v in tags.items() if k not in run.tags}
        if missing:
            self._instance.add_run_tags(run.run_id, missing)
            run = run.with_tags({**run.tags, **missing})
        return super().submit_run(context._replace(dagster_run=run))


def _range_keys(context: dg.SubmitRunContext) -> list[str] | None:
    """Every partition key of the run's range, read from its assets' partitions in the workspace;
    None when that cannot be read (the range's ends are used then)."""
    run = context.dagster_run
    start, end = (
        run.tags.get(ASSET_PARTITION_RANGE_START_TAG),
        run.tags.get(ASSET_PARTITION_RANGE_END_TAG),
    )
    if not (start and end and run.asset_selection):
        return None
    try:
        graph = context.workspace.asset_graph
        node = graph.get(next(iter(run.asset_selection)))
        partitions = node.partitions_def
        if partitions is None:
            return None
        with dg.partition_loading_context(dynamic_partitions_store=context.workspace.instance):
            return list(partitions.get_partition_keys_in_range(dg.PartitionKeyRange(start, end)))
    except Exception:  # tags are a convenience: never let them stop a run from being queued
        log.warning("could not list the partitions of run %s", run.run_id, exc_info=True)
        return None

"""The suite and agent tags every run carries, whoever started it (a sensor, a backfill, the
nightly automation, the UI, the CLI), so runs can be filtered by them and the run queue can
limit them (`tag_concurrency_limits` on `evals/agent`, docs/deployment.md).

Runs submitted to the instance get their tags from `EvalRunCoordinator`, the run queue of the
shipped dagster.yaml, before the queue looks at them; `evals-pipeline run` sets the same tags on
its in-process runs (defs/suite_run.py)."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, Self

import dagster as dg
from dagster._config import Field, ScalarUnion, Selector, UserConfigSchema
from dagster._config.errors import PostProcessingError
from dagster._core.definitions.partitions.context import partition_loading_context
from dagster._core.run_coordinator import QueuedRunCoordinator, SubmitRunContext
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import ConfigurableClassData

from evals_pipeline.defs.partitions import AGENT, split_key

SUITE_TAG = "evals/suite"
AGENT_TAG = "evals/agent"
"""Set only when the run covers one agent: the key per-agent run limits apply to."""
AGENTS_TAG = "evals/agents"
"""Every agent the run covers, comma-separated in the suite's order."""
REPORT_AGENTS_TAG = "evals/report_agents"
"""Set on the report run of `evals-pipeline run --target`: the only agents its report lists, so
stored results of the others are not shown as if this run had made them."""

_PARTITION = "dagster/partition"
_RANGE_START = "dagster/asset_partition_range_start"
_RANGE_END = "dagster/asset_partition_range_end"

log = logging.getLogger(__name__)


def eval_run_tags(suites: Sequence[str], agents: Sequence[str]) -> dict[str, str]:
    """The tags of a run of `suites`' assets over `agents` (either may be empty)."""
    tags: dict[str, str] = {}
    if suites:
        tags[SUITE_TAG] = ",".join(dict.fromkeys(suites))
    unique = list(dict.fromkeys(agents))
    if unique:
        tags[AGENTS_TAG] = ",".join(unique)
    if len(unique) == 1:
        tags[AGENT_TAG] = unique[0]
    return tags


def report_agents(tags: Mapping[str, str], agents: Sequence[str]) -> list[str]:
    """The agents a report run lists: those REPORT_AGENTS_TAG names, in the suite's order, or
    every agent of the suite when the tag is absent."""
    named = tags.get(REPORT_AGENTS_TAG)
    if not named:
        return list(agents)
    chosen = set(named.split(","))
    return [a for a in agents if a in chosen]


def run_suites(run: DagsterRun) -> list[str]:
    """The suites whose assets (or asset checks) the run materializes: their keys' first part."""
    keys = [*(run.asset_selection or []), *(c.asset_key for c in run.asset_check_selection or [])]
    return sorted({key.path[0] for key in keys if len(key.path) > 1})


def range_agents(tags: Mapping[str, str], range_keys: Sequence[str] | None = None) -> list[str]:
    """The agents of the run's partitions, from Dagster's partition tags: the single partition's,
    else those of `range_keys` (every key of the range), else the range's two ends."""
    if f"{_PARTITION}/{AGENT}" in tags:
        return [tags[f"{_PARTITION}/{AGENT}"]]
    keys: Sequence[str] = []
    if _PARTITION in tags:
        keys = [tags[_PARTITION]]
    elif range_keys:
        keys = range_keys
    elif _RANGE_START in tags and _RANGE_END in tags:
        keys = [tags[_RANGE_START], tags[_RANGE_END]]
    return [split_key(key)[1] for key in keys if "|" in key]


class _Seconds(ScalarUnion):
    """A number of seconds above 0, fractions allowed, or `{env: VAR}` naming one, as Dagster's
    `IntSource` takes whole ones (Dagster's own queue interval is one)."""

    def __init__(self) -> None:
        super().__init__(
            scalar_type=float, non_scalar_schema=Selector({"env": str}), _key="EvalsSeconds"
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


class EvalRunCoordinator(QueuedRunCoordinator):
    """Dagster's run queue, tagging each submitted run with its suite and agents first so that
    the queue's tag limits and the UI's run filters see them.

    Its `dequeue_interval_seconds` may be a fraction (Dagster's: whole seconds): at 0.5 the queue
    launches a run within half a second of its queueing, not a second. Its
    `backfill_interval_seconds` also sets the backfill daemon's loop (defs/backfill_cadence.py):
    the daemon process builds the run queue before it starts its loops."""

    _dequeue_every: float | None = None

    @classmethod
    def config_type(cls) -> UserConfigSchema:
        queue = super().config_type()
        assert isinstance(queue, Mapping)  # Dagster's own schema is a dict of fields
        return {
            **queue,
            "dequeue_interval_seconds": Field(
                _Seconds(),
                is_required=False,
                description="How often the daemon looks for queued runs to launch, in seconds; "
                "fractions allowed (Dagster: 5).",
            ),
            "backfill_interval_seconds": Field(
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
            from evals_pipeline.defs.backfill_cadence import set_backfill_interval

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
        # first run (defs/run_launcher.py).
        from evals_pipeline.defs.run_launcher import in_daemon

        if in_daemon():
            instance.run_launcher  # noqa: B018

    def submit_run(self, context: SubmitRunContext) -> DagsterRun:
        run = context.dagster_run
        tags = eval_run_tags(run_suites(run), range_agents(run.tags, _range_keys(context)))
        missing = {k: v for k, v in tags.items() if k not in run.tags}
        if missing:
            self._instance.add_run_tags(run.run_id, missing)
            run = run.with_tags({**run.tags, **missing})
        return super().submit_run(context._replace(dagster_run=run))


def _range_keys(context: SubmitRunContext) -> list[str] | None:
    """Every partition key of the run's range, read from its assets' partitions in the workspace;
    None when that cannot be read (the range's ends are used then)."""
    run = context.dagster_run
    start, end = run.tags.get(_RANGE_START), run.tags.get(_RANGE_END)
    if not (start and end and run.asset_selection):
        return None
    try:
        graph = context.workspace.asset_graph
        node = graph.get(next(iter(run.asset_selection)))
        partitions = node.partitions_def
        if partitions is None:
            return None
        with partition_loading_context(dynamic_partitions_store=context.workspace.instance):
            return list(partitions.get_partition_keys_in_range(dg.PartitionKeyRange(start, end)))
    except Exception:  # tags are a convenience: never let them stop a run from being queued
        log.warning("could not list the partitions of run %s", run.run_id, exc_info=True)
        return None

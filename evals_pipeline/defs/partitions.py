"""Partitions: each suite has its own case x agent space, so no agent runs a case its suite
does not list, and a backfill of "all partitions" is exactly the suite's matrix."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import click
import dagster as dg
from dagster import (
    DagsterInvalidSubsetError,
    DagsterUnknownPartitionError,
    partition_loading_context,
)

from evals_pipeline.dagster_private import DynamicPartitionsStore, PartitionLoadingContext
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.instance.registration import CASES_SUFFIX, registering

CASE = "case"
AGENT = "agent"
# One run per backfill over a range of partitions: each layer's step batches its partitions.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def case_partitions_name(suite: str) -> str:
    """The dynamic partitions set holding a suite's case keys."""
    return f"{suite}{CASES_SUFFIX}"


def failures_partitions_name(suite: str) -> str:
    """The dynamic partitions set of a suite's failing case x agent keys, `agent|case`
    (defs/case_failures.py)."""
    return f"{suite}__failures"


def register_cases(instance: dg.DagsterInstance, suite: str, case_keys: list[str]) -> list[str]:
    """Make `suite`'s dynamic case partitions exactly `case_keys` (one add call, in their order,
    stale keys deleted, with their failures) and return them in partition order. The one way
    case partitions are added (instance/registration.py)."""
    name = case_partitions_name(suite)
    registered = instance.get_dynamic_partitions(name)
    wanted, known = set(case_keys), set(registered)
    for stale in [k for k in registered if k not in wanted]:
        instance.delete_dynamic_partition(name, stale)
    new = [k for k in case_keys if k not in known]
    if new:
        with registering():
            instance.add_dynamic_partitions(name, new)
    failures = failures_partitions_name(suite)  # a removed case's failures leave too
    for key in instance.get_dynamic_partitions(failures):
        if split_key(key)[0] not in wanted:
            instance.delete_dynamic_partition(failures, key)
    return list(instance.get_dynamic_partitions(name))


class UnregisteredPartitionError(
    DagsterInvalidSubsetError, click.ClickException, EvalsPipelineError
):
    """A partition key that is not one of the suite's registered case x agent pairs. Also a
    click error, so `dagster asset materialize` prints it as "Error: ..." without a traceback."""

    def __init__(self, message: str) -> None:
        click.ClickException.__init__(self, message)
        DagsterInvalidSubsetError.__init__(self, message)

    def __str__(self) -> str:
        return self.message


class SuitePartitions(dg.MultiPartitionsDefinition):
    """A suite's case x agent partitions. Dagster's own error for an unknown key names neither
    the suite nor the fix; this one says which part is unknown, what the keys look like and how
    to register the cases."""

    def __init__(self, suite: str, agents: list[str], path: Path | None = None) -> None:
        super().__init__(
            {
                CASE: dg.DynamicPartitionsDefinition(name=case_partitions_name(suite)),
                AGENT: dg.StaticPartitionsDefinition(agents),
            }
        )
        self.suite, self.agents, self.path = suite, agents, path
        self._keys: tuple[tuple[str, ...], tuple[dg.MultiPartitionKey, ...]] | None = None

    def get_partition_keys(
        self,
        current_time: datetime | None = None,
        dynamic_partitions_store: DynamicPartitionsStore | None = None,
    ) -> Sequence[dg.MultiPartitionKey]:
        """Every agent x case key (Dagster's order), made again only when the registered cases
        changed: Dagster asks for all of them about twice per input of a report step, and each
        time made 10,000 MultiPartitionKeys (~0.25 s)."""
        with partition_loading_context(current_time, dynamic_partitions_store):
            by_name = {d.name: d.partitions_def for d in self.partitions_defs}
            cases = tuple(by_name[CASE].get_partition_keys())
            cached = self._keys
            if cached is None or cached[0] != cases:
                keys = (
                    dg.MultiPartitionKey({AGENT: agent, CASE: case})
                    for agent in by_name[AGENT].get_partition_keys()
                    for case in cases
                )
                cached = (cases, tuple(k for k in keys if self.is_valid_key_format(k)))
                self._keys = cached
        return list(cached[1])

    def validate_partition_key(self, partition_key: str, context: PartitionLoadingContext) -> None:
        try:
            super().validate_partition_key(partition_key, context)
        except DagsterUnknownPartitionError:
            cases = registered_cases(self.suite, context)
            raise UnregisteredPartitionError(
                unregistered_message(self.suite, self.agents, cases, partition_key, self.path)
            ) from None


def registered_cases(suite: str, context: PartitionLoadingContext) -> list[str]:
    """The suite's registered case keys, or none when no instance is at hand."""
    store = context.dynamic_partitions_store
    if store is None:
        return []
    with partition_loading_context(new_ctx=context):
        return list(store.get_dynamic_partitions(case_partitions_name(suite)))


def unregistered_message(
    suite: str, agents: list[str], cases: list[str], key: str, path: Path | None
) -> str:
    """What is wrong with `key` and what to do instead."""
    case, agent = split_key(key) if "|" in key else (key, "")
    if agent not in agents:
        problem = f"{agent!r} is not an agent of the suite (its agents: {', '.join(agents)})"
        if case in agents and agent not in agents:
            problem += "; keys are agent|case, agent first"
    elif not cases:
        problem = "the suite has no registered cases yet"
    else:
        shown = ", ".join(cases[:5]) + (", ..." if len(cases) > 5 else "")
        problem = f"case {case!r} is not one of its {len(cases)} registered cases ({shown})"
    example = f"{agents[0]}|{cases[0] if cases else '<test id>'}"
    register = f"evals-pipeline register {path or '<suite file>'}"
    return (
        f"partition {key!r} is not registered for suite {suite!r}: {problem}.\n"
        f"Partition keys are agent|case, e.g. {example!r}. A test added to the suite file becomes "
        f"a partition once its cases are registered: run `{register}` (or let the "
        f"{suite}_cases sensor tick), then materialize again."
    )


def suite_partitions(
    suite: str, agents: list[str], path: Path | None = None
) -> dg.MultiPartitionsDefinition:
    """Cases are dynamic (a sensor adds new tests without a restart); agents are the suite's
    targets, fixed when the code location loads."""
    return SuitePartitions(suite, agents, path)


def partition_key(case: str, agent: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({CASE: case, AGENT: agent})


def split_key(key: str | dg.MultiPartitionKey) -> tuple[str, str]:
    """(case, agent) of a partition key, given as a MultiPartitionKey or its "agent|case" string."""
    if isinstance(key, dg.MultiPartitionKey):
        dims = key.keys_by_dimension
        return dims[CASE], dims[AGENT]
    agent, case = key.split("|", 1)  # dimension names sort: "agent" < "case"
    return case, agent

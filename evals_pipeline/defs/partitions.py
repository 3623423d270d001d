"""Partitions: each suite has its own case x agent space, so no agent runs a case its suite
does not list, and a backfill of "all partitions" is exactly the suite's matrix."""

from __future__ import annotations

import dagster as dg

CASE = "case"
AGENT = "agent"
# One run per backfill over a range of partitions: each layer's step batches its partitions.
SINGLE_RUN = dg.BackfillPolicy.single_run()


def case_partitions_name(suite: str) -> str:
    """The dynamic partitions set holding a suite's case keys."""
    return f"{suite}__cases"


def suite_partitions(suite: str, agents: list[str]) -> dg.MultiPartitionsDefinition:
    """Cases are dynamic (a sensor adds new tests without a restart); agents are the suite's
    targets, fixed when the code location loads."""
    return dg.MultiPartitionsDefinition(
        {
            CASE: dg.DynamicPartitionsDefinition(name=case_partitions_name(suite)),
            AGENT: dg.StaticPartitionsDefinition(agents),
        }
    )


def partition_key(case: str, agent: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({CASE: case, AGENT: agent})


def split_key(key: str | dg.MultiPartitionKey) -> tuple[str, str]:
    """(case, agent) of a partition key, given as a MultiPartitionKey or its "agent|case" string."""
    if isinstance(key, dg.MultiPartitionKey):
        dims = key.keys_by_dimension
        return dims[CASE], dims[AGENT]
    agent, case = key.split("|", 1)  # dimension names sort: "agent" < "case"
    return case, agent

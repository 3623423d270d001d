"""Fewer writes to Dagster's event log per case x agent: one planned-materialization event per
asset of a run instead of one per partition, and a step's per-partition materializations stored
as one batch where the storage can (Postgres; our sqlite storage, instance/event_storage.py).

Both are Dagster's own switches, read from the environment of the process that creates the run
or executes the step; a value the user set is kept (docs/deployment.md).
"""

from __future__ import annotations

import os

SETTINGS = {
    # Planned events name the run's partition subset; Dagster's default writes one per partition.
    "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS": "1",
    # A layer's step stores its partitions' materializations in batches of this many.
    "DAGSTER_EVENT_BATCH_SIZE": "1000",
}


BATCH_SIZE = "DAGSTER_EVENT_BATCH_SIZE"


def lean_event_log() -> None:
    """Turn both switches on in this process, unless the environment already sets them."""
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)


def batched_event_writes() -> None:
    """Only the batched writes, unless the environment sets them: what the UI shows stays as
    Dagster has it (a partition of a failed run shows as failed, which needs a planned event per
    partition). For processes that open the instance but not our code location: the daemon
    and the webserver, which create the runs of sensors, backfills and UI launches."""
    os.environ.setdefault(BATCH_SIZE, SETTINGS[BATCH_SIZE])

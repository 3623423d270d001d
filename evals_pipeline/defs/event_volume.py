"""Fewer writes to Dagster's event log per case x agent: one planned-materialization event per
asset of a run instead of one per partition, and a step's per-partition materializations stored
as one batch where the storage can (Postgres; our sqlite storage, defs/event_storage.py).

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


def lean_event_log() -> None:
    """Turn both switches on in this process, unless the environment already sets them."""
    for name, value in SETTINGS.items():
        os.environ.setdefault(name, value)

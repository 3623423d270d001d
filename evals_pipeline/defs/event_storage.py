"""Dagster's sqlite event log, with the batch write Dagster's Postgres storage has: a layer step's
per-partition materializations, and a new run's per-partition planned materializations, go in
one transaction per database instead of two connections, two transactions and a statement
compile each (~20-40 ms per case x agent and layer under load)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from dagster._core.events import ASSET_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._serdes import ConfigurableClassData

from evals_pipeline.defs.event_volume import batched_event_writes


class BatchingSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage whose `store_event_batch` (Dagster sends batches when
    DAGSTER_EVENT_BATCH_SIZE is set, defs/event_volume.py) writes each run of asset events at
    once. Every process that opens the instance sends batches: the daemon and the webserver,
    which create the runs of sensors, backfills and the UI, never load our code location."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        batched_event_writes()
        super().__init__(base_dir, inst_data=inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> BatchingSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        # A new run's planned events come as one batch with its asset checks' planned events:
        # the asset events are written together, the others one by one, as Dagster does.
        for is_asset, group in itertools.groupby(events, key=_is_asset_event):
            batch = list(group)
            if is_asset and len(batch) > 1:
                self._store_asset_events(batch)
            else:
                for event in batch:
                    self.store_event(event)

    def _store_asset_events(self, events: Sequence[EventLogEntry]) -> None:
        """What `store_event` does for each asset event, in one statement on the run's database
        and one transaction on the index."""
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(self.prepare_insert_event_batch(events))
        # The cross-run index mirrors each event, its tags and the asset's latest record, as
        # `store_event` does one by one.
        with self.index_transaction() as conn:
            ids = []
            for event in events:
                key = conn.execute(self.prepare_insert_event(event)).inserted_primary_key
                assert key is not None  # an insert into a table with an integer key
                ids.append(key[0])
            self._store_asset_event_tags(conn, list(events), ids)
            for event, event_id in zip(events, ids, strict=True):
                self._store_asset_event(conn, event, event_id)


def _is_asset_event(event: EventLogEntry) -> bool:
    return event.is_dagster_event and event.dagster_event_type in ASSET_EVENTS


def event_log_settings(home: Path) -> str:
    """The dagster.yaml block that gives the instance in `home` this storage, where Dagster's
    default sqlite storage keeps its event logs (the runs and schedules keep their defaults)."""
    block = {
        "event_log_storage": {
            "module": __name__,
            "class": BatchingSqliteEventLogStorage.__name__,
            "config": {"base_dir": str(home.resolve() / "history" / "runs")},
        }
    }
    comment = "# Dagster's sqlite event log, writing a step's materializations in one batch.\n"
    return comment + yaml.safe_dump(block, sort_keys=False)

"""The run of each materialization by storage id, read as one range when the ids lie close
together and id by id otherwise: the same runs either way."""

from __future__ import annotations

import dagster as dg
import pytest
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage

from evals_pipeline.defs import io_manager


@dg.asset(partitions_def=dg.StaticPartitionsDefinition([f"p{i}" for i in range(6)]))
def numbers() -> int:
    return 1


def test_runs_by_storage_id_in_a_range_or_id_by_id(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    for partition in ("p0", "p1", "p2", "p0", "p5"):
        dg.materialize([numbers], instance=instance, partition_key=partition)
    records = instance.fetch_materializations(numbers.key, limit=100).records
    expected = {r.storage_id: r.run_id for r in records}
    assert len(set(expected.values())) == 5
    storage = instance.event_log_storage
    assert isinstance(storage, SqlEventLogStorage)
    some = sorted(expected)[1:4]
    monkeypatch.setattr(io_manager, "DENSE_IDS", 10**6)  # one range, other events in it
    assert io_manager._run_ids(storage, sorted(expected)) == expected
    assert io_manager._run_ids(storage, some) == {i: expected[i] for i in some}
    monkeypatch.setattr(io_manager, "DENSE_IDS", 0)  # id by id, in chunks of two
    monkeypatch.setattr(io_manager, "FILTERED_KEYS", 2)
    assert io_manager._run_ids(storage, sorted(expected)) == expected
    assert io_manager._run_ids(storage, []) == {}

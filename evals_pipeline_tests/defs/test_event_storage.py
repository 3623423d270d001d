"""The batching sqlite event log: a ranged run's per-partition materializations and check
evaluations, written in batches, read back exactly as Dagster's own sqlite storage records them
one by one."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.event_storage import BatchingSqliteEventLogStorage
from evals_pipeline.defs.event_volume import SETTINGS
from evals_pipeline.defs.instance import local_instance

PARTITIONS = dg.StaticPartitionsDefinition([f"case-{i:03d}" for i in range(40)])


@dg.asset(partitions_def=PARTITIONS, backfill_policy=dg.BackfillPolicy.single_run())
def runs(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"first": context.partition_keys[0]})


@dg.asset(
    partitions_def=PARTITIONS,
    deps=[runs],
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[dg.AssetCheckSpec("passes", asset="grades", partitions_def=PARTITIONS)],
)
def grades(
    context: dg.AssetExecutionContext,
) -> Iterator[dg.Output[None] | dg.AssetCheckEvaluation]:
    """Like the suites' grades: one `passes` evaluation per partition, after the output."""
    yield dg.Output(None, metadata={"count": len(context.partition_keys)})
    key = dg.AssetCheckKey(context.asset_key, "passes")
    yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(key))
    for partition in context.partition_keys:
        yield dg.AssetCheckEvaluation(
            asset_key=context.asset_key,
            check_name="passes",
            passed=int(partition[-3:]) % 3 != 0,
            partition=partition,
        )


class _Discard(dg.IOManager):
    """Stores nothing: these assets' values are not the point, their events are."""

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        pass

    def load_input(self, context: dg.InputContext) -> None:
        return None


def _materialize(instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    definitions = dg.Definitions(assets=[runs, grades], resources={"io_manager": _Discard()})
    job = definitions.resolve_implicit_global_asset_job_def()
    return job.execute_in_process(
        instance=instance,
        tags={
            "dagster/asset_partition_range_start": "case-000",
            "dagster/asset_partition_range_end": "case-039",
        },
    )


def _recorded(instance: dg.DagsterInstance, key: str) -> list[tuple[str | None, str]]:
    """Each stored materialization of `key`: its partition and its metadata."""
    records = instance.fetch_materializations(dg.AssetKey(key), limit=1000).records
    return sorted(
        (r.partition_key, str(r.asset_materialization.metadata))  # type: ignore[union-attr]
        for r in records
    )


def test_a_ranged_run_reads_back_as_dagsters_own_storage_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    ours = local_instance(tmp_path / "ours")
    assert isinstance(ours.event_log_storage, BatchingSqliteEventLogStorage)
    theirs = dg.DagsterInstance.from_config(str(_plain_home(tmp_path / "theirs")))
    assert type(theirs.event_log_storage).__name__ == "SqliteEventLogStorage"

    batches: list[int] = []
    store_batch = BatchingSqliteEventLogStorage.store_event_batch

    def counted(self: BatchingSqliteEventLogStorage, events: list[dg.EventLogEntry]) -> None:
        batches.append(len(events))
        store_batch(self, events)

    monkeypatch.setattr(BatchingSqliteEventLogStorage, "store_event_batch", counted)
    for instance in (ours, theirs):
        assert _materialize(instance).success
    assert batches.count(40) == 2  # each step's materializations went as one batch

    for key in ("runs", "grades"):
        assert _recorded(ours, key) == _recorded(theirs, key)
        assert ours.get_materialized_partitions(dg.AssetKey(key)) == set(
            PARTITIONS.get_partition_keys()
        )
    assert len(_recorded(ours, "runs")) == 40
    assert _checks(ours) == _checks(theirs)
    assert [status for _, status in _checks(ours)].count("FAILED") == 14  # 0, 3, ... 39
    latest = ours.get_latest_materialization_event(dg.AssetKey("grades"))
    assert latest is not None and latest.dagster_event is not None
    their_latest = theirs.get_latest_materialization_event(dg.AssetKey("grades"))
    assert their_latest is not None and their_latest.dagster_event is not None
    assert latest.dagster_event.partition == their_latest.dagster_event.partition


def _checks(instance: dg.DagsterInstance) -> list[tuple[str | None, str]]:
    """Each stored `passes` execution: its partition and its status."""
    key = dg.AssetCheckKey(dg.AssetKey("grades"), "passes")
    history = instance.event_log_storage.get_asset_check_execution_history(key, limit=1000)
    return sorted((str(r.partition), r.status.value) for r in history)


def _plain_home(home: Path) -> Path:
    """A home with Dagster's default storage (no dagster.yaml of ours)."""
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return home

"""The batching sqlite event log: a ranged run's per-partition materializations and check
evaluations, written in batches, read back exactly as Dagster's own sqlite storage records them
one by one; a run created outside our code location (by the daemon for a sensor or a backfill,
by the webserver for a UI launch) writes its planned events in one batch, and they still say
which partitions are in progress."""

# No `from __future__ import annotations`: Dagster reads the context annotation at runtime.
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.execution.api import create_execution_plan
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import register_cases
from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage
from evals_pipeline.instance.event_volume import BATCH_SIZE, SETTINGS
from evals_pipeline.instance.local import local_instance
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.defs.conftest import write_suite

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
    one_by_one: list[object] = []  # Dagster's own update of one check execution row
    update_one = BatchingSqliteEventLogStorage._update_asset_check_evaluation

    def updating(self: BatchingSqliteEventLogStorage, event: object, event_id: object) -> None:
        one_by_one.append(event)  # noted, then written for real
        update_one(self, event, event_id)  # type: ignore[arg-type]

    monkeypatch.setattr(BatchingSqliteEventLogStorage, "_update_asset_check_evaluation", updating)
    for instance in (ours, theirs):
        assert _materialize(instance).success
    assert batches.count(40) == 2  # each step's materializations went as one batch
    assert not one_by_one  # the step's check evaluations went as one statement

    for key in ("runs", "grades"):
        assert _recorded(ours, key) == _recorded(theirs, key)
        assert ours.get_materialized_partitions(dg.AssetKey(key)) == set(
            PARTITIONS.get_partition_keys()
        )
    assert len(_recorded(ours, "runs")) == 40
    assert _checks(ours) == _checks(theirs)
    assert [row[1] for row in _checks(ours)].count("FAILED") == 14  # 0, 3, ... 39
    latest = ours.get_latest_materialization_event(dg.AssetKey("grades"))
    assert latest is not None and latest.dagster_event is not None
    their_latest = theirs.get_latest_materialization_event(dg.AssetKey("grades"))
    assert their_latest is not None and their_latest.dagster_event is not None
    assert latest.dagster_event.partition == their_latest.dagster_event.partition
    # The asset table (one row per asset, written once per batch here): same last partition.
    for key in ("runs", "grades"):
        entries = [i.get_asset_records([dg.AssetKey(key)])[0].asset_entry for i in (ours, theirs)]
        last = [e.last_materialization_record for e in entries]
        assert all(r is not None and r.event_log_entry.dagster_event for r in last)
        partitions = {r.event_log_entry.dagster_event.partition for r in last}  # type: ignore[union-attr]
        assert len(partitions) == 1 and partitions != {None}
        assert entries[0].last_run_id == last[0].event_log_entry.run_id  # type: ignore[union-attr]


def _checks(instance: dg.DagsterInstance) -> list[tuple[object, ...]]:
    """Each stored `passes` execution: its partition, its status, and its evaluation event's
    type, partition and verdict."""
    key = dg.AssetCheckKey(dg.AssetKey("grades"), "passes")
    history = instance.event_log_storage.get_asset_check_execution_history(key, limit=1000)
    rows = []
    for r in history:
        assert r.event is not None and r.event.dagster_event is not None
        evaluation = r.event.dagster_event.event_specific_data
        rows.append(
            (
                str(r.partition),
                r.status.value,
                r.event.dagster_event_type.value,  # type: ignore[union-attr]
                getattr(evaluation, "partition", None),
                getattr(evaluation, "passed", None),
            )
        )
    return sorted(rows)


def _plain_home(home: Path) -> Path:
    """A home with Dagster's default storage (no dagster.yaml of ours)."""
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return home


SUBSET_EVENTS = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"


def test_a_daemon_created_run_plans_each_partition_in_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The daemon's environment: it never imports evals_pipeline.definitions.
    monkeypatch.delenv(BATCH_SIZE, raising=False)
    monkeypatch.delenv(SUBSET_EVENTS, raising=False)
    instance = local_instance(tmp_path / "home")
    assert os.environ.get(BATCH_SIZE), "opening the instance turns batched writes on"
    assert SUBSET_EVENTS not in os.environ, "the UI keeps its per-partition planned events"

    cases = ["a1", "b2", "c3"]
    defs = build_definitions(
        [load_suite(write_suite(tmp_path, [(c, c) for c in cases]))], str(tmp_path / "s")
    )
    register_cases(instance, "demo", cases)
    keys = {dg.AssetKey(["demo", layer]) for layer in ("cases", "agent_runs")}
    job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection=keys)
    tags = {
        "dagster/asset_partition_range_start": "echo|a1",
        "dagster/asset_partition_range_end": "echo|c3",
    }
    plan = create_execution_plan(job, tags=tags, instance_ref=instance.get_ref())
    run = instance.create_run_for_job(
        job, execution_plan=plan, tags=tags, asset_selection=frozenset(keys)
    )

    planned = instance.get_records_for_run(
        run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
    ).records
    assert sorted((r.asset_key, r.partition_key) for r in planned) == sorted(
        (key, f"echo|{c}") for key in keys for c in cases
    )
    storage = instance.event_log_storage
    for key in keys:
        # What the UI's partition bar reads: every partition of the run is in progress.
        attempts = (
            storage.get_latest_asset_partition_materialization_attempts_without_materializations(
                key
            )
        )
        assert {p: run_id for p, (run_id, _) in attempts.items()} == {
            f"echo|{c}": run.run_id for c in cases
        }


def test_dynamic_partition_keys_are_read_once_and_never_miss_a_new_or_deleted_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dagster lists a partition's keys and looks each key of a run's range up; the keys are
    read once and trusted briefly, while a key added or deleted through this storage, or a key
    looked up that another process added, is seen at once."""
    ours = BatchingSqliteEventLogStorage(str(tmp_path / "runs"))
    other = BatchingSqliteEventLogStorage(str(tmp_path / "runs"))  # another process's instance
    ours.add_dynamic_partitions("cases", [f"case-{i}" for i in range(50)])
    reads: list[str] = []
    read = SqlEventLogStorage.get_dynamic_partitions

    def counted(self: SqlEventLogStorage, name: str) -> Sequence[str]:
        if self is ours:
            reads.append(name)
        return read(self, name)

    monkeypatch.setattr(SqlEventLogStorage, "get_dynamic_partitions", counted)

    assert all(ours.has_dynamic_partition("cases", f"case-{i}") for i in range(50))
    assert ours.get_dynamic_partitions("cases") == [f"case-{i}" for i in range(50)]
    assert reads == ["cases"]
    other.add_dynamic_partitions("cases", ["case-new"])
    assert ours.has_dynamic_partition("cases", "case-new")  # a miss reads the keys again
    assert ours.get_dynamic_partitions("cases")[-1] == "case-new"
    assert not ours.has_dynamic_partition("elsewhere", "case-1")
    ours.delete_dynamic_partition("cases", "case-3")
    assert not ours.has_dynamic_partition("cases", "case-3")
    assert "case-3" not in ours.get_dynamic_partitions("cases")
    other.delete_dynamic_partition("cases", "case-4")
    assert "case-4" in ours.get_dynamic_partitions("cases")  # trusted briefly ...
    monkeypatch.setattr("evals_pipeline.instance.event_storage.PARTITION_KEYS_SECONDS", 0.0)
    assert not ours.has_dynamic_partition("cases", "case-4")  # ... then read again
    assert "case-4" not in ours.get_dynamic_partitions("cases")


def test_a_new_runs_database_is_what_dagster_sets_up_and_a_wipe_leaves_no_stale_connection(
    tmp_path: Path,
) -> None:
    """Run databases are copies of an empty one Dagster set up: the same tables, indexes,
    migration stamp and WAL journal as Dagster's own set-up; the kept connections go with a
    wipe, so what is written after it is not lost in a deleted file."""
    ours = BatchingSqliteEventLogStorage(str(tmp_path / "ours"))
    theirs = SqliteEventLogStorage(str(tmp_path / "theirs"))
    row = {"run_id": "run-1", "event": "{}", "dagster_event_type": None}
    for storage in (ours, theirs):
        with storage.run_connection("run-1") as conn:
            conn.execute(SqlEventLogStorageTable.insert().values(**row))

    def described(storage: SqliteEventLogStorage) -> list[object]:
        with closing(sqlite3.connect(storage.path_for_shard("run-1"))) as db:
            return [
                db.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall(),
                db.execute("SELECT version_num FROM alembic_version").fetchall(),
                db.execute("PRAGMA journal_mode").fetchall(),
                db.execute("SELECT run_id FROM event_logs").fetchall(),
            ]

    assert described(ours) == described(theirs)
    assert [p.name for p in (tmp_path / "ours").glob(".run-template-*.db")]
    ours.wipe()
    with ours.run_connection("run-1") as conn:
        conn.execute(SqlEventLogStorageTable.insert().values(**{**row, "run_id": "run-2"}))
    with closing(sqlite3.connect(ours.path_for_shard("run-1"))) as db:
        assert db.execute("SELECT run_id FROM event_logs").fetchall() == [("run-2",)]


def test_kept_connections_commit_without_a_flush_and_what_they_commit_survives_a_kill(
    tmp_path: Path,
) -> None:
    """synchronous=NORMAL on every kept connection (Dagster's own use FULL); a process killed
    right after its commits still leaves them all in the database."""
    ours = BatchingSqliteEventLogStorage(str(tmp_path / "ours"))
    theirs = SqliteEventLogStorage(str(tmp_path / "theirs"))
    with ours.run_connection("run-1") as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    with theirs.run_connection("run-1") as conn:
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    script = (
        "import os, sys\n"
        "from dagster._core.storage.event_log.schema import SqlEventLogStorageTable\n"
        "from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage\n"
        "storage = BatchingSqliteEventLogStorage(sys.argv[1])\n"
        "for i in range(50):\n"
        "    with storage.run_connection('run-2') as conn:\n"
        "        conn.execute(SqlEventLogStorageTable.insert().values(\n"
        "            run_id='run-2', event=str(i), dagster_event_type=None))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    killed = subprocess.run([sys.executable, "-c", script, str(tmp_path / "ours")], check=False)
    assert killed.returncode == -9
    with closing(sqlite3.connect(ours.path_for_shard("run-2"))) as db:
        assert db.execute("SELECT count(*) FROM event_logs").fetchone() == (50,)

"""Dagster's sqlite event log, with batched writes: a step's per-partition events, and a new
run's per-partition planned events, go in one transaction per database instead of two or three
connections and transactions each (~20-40 ms per case x agent and layer under load, most of
Dagster's cost per case).

- Asset events: Dagster hands a step's partition materializations, and a new run's planned
  materializations, over as batches when DAGSTER_EVENT_BATCH_SIZE is set (instance/event_volume.py;
  this storage sets it in every process that opens the instance: the daemon and the webserver,
  which create the runs of sensors, backfills and the UI, never load our code location).
  Postgres' storage writes such a batch at once, Dagster's sqlite storage one by one; this one
  at once.
- Dagster opens every connection on a new SQLAlchemy engine, so no statement is ever found in
  SQLAlchemy's compiled cache, and closes it after each event, which checkpoints the WAL to
  disk; here each database keeps its engine and one open connection.
- A new run's database is a copy of an empty one Dagster set up (once per Dagster version,
  with the home), not set up anew (tables, indexes and a migration stamp: ~0.2 s per run).
- Dagster reflects the asset table's columns for every asset event it stores, checks that the
  dynamic partitions table exists before each key it looks up, and looks each key of a run's
  range up with a query of its own, and a report's inputs list all of a partition's keys
  several times over. Here the column and the table, once seen, are remembered, and a
  partition's keys for PARTITION_KEYS_SECONDS (a key looked up but not among them is read
  again at once, so one just added is always found).
- A batch's events are serialized once for the run's database and the cross-run index.
- `case_passes` check evaluations, one per partition, are not batched by Dagster: they are held
  here and written together before the run's next other event (the step's output or end, at
  the latest), or every CHECK_BATCH of them. A process killed in between loses the held checks'
  statuses (at most one step's); the grades they describe are stored with the step's records.
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy as db
import yaml
from dagster import (
    AssetCheckEvaluation,
    AssetKey,
    DagsterEventType,
    EventLogEntry,
    serialize_value,
)
from dagster.version import __version__ as dagster_version
from sqlalchemy import event as sqlalchemy_event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool, QueuePool

from evals_pipeline.dagster_private import (
    ASSET_EVENTS,
    INDEX_SHARD_NAME,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    AssetCheckEvaluationPlanned,
    AssetCheckExecutionRecordStatus,
    AssetCheckExecutionsTable,
    ConfigurableClassData,
    SqlEventLogStorageTable,
    SqliteEventLogStorage,
    create_engine,
)
from evals_pipeline.instance.event_volume import batched_event_writes

CHECK_BATCH = 500
"""Held check evaluations are written at the latest when this many wait."""
PARTITION_KEYS_SECONDS = 2.0
"""How long a dynamic partition's keys, once read, answer `get_dynamic_partitions` and
`has_dynamic_partition` (keys another process adds or deletes meanwhile are listed, or a
deleted one found, as before for that long; this process's own changes are seen at once)."""
ENGINES = 8
"""Databases whose engines are kept (the index, and the shards of the latest runs)."""
REMEMBERED_STEPS = 16
"""(Run, asset) pairs whose stored materializations' ids are kept for their checks."""


class StoredMaterialization(NamedTuple):
    """A partition's materialization as stored: its event's storage id and time."""

    storage_id: int
    timestamp: float


def _write_ahead(engine: Engine) -> Engine:
    """`engine`, its connections with synchronous=NORMAL: in WAL mode (Dagster's event
    databases' mode) a commit then appends to the log without a flush to disk (~0.03 ms a
    commit against ~0.5 ms here), and a crash of the process still loses nothing committed; a
    power cut can lose the last commits, never corrupt the file."""

    def on_connect(dbapi_connection: Any, _: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA synchronous=NORMAL")  # per connection, not kept in the file
        finally:
            cursor.close()

    sqlalchemy_event.listen(engine, "connect", on_connect)
    return engine


class BatchingSqliteEventLogStorage(SqliteEventLogStorage):
    """SqliteEventLogStorage that writes a step's asset events and check evaluations in
    batches (see the module docstring)."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        batched_event_writes()
        self._held_checks: dict[str, list[EventLogEntry]] = {}
        self._held_lock = threading.Lock()
        self._batch = threading.local()  # the index connection a batch write is using
        self._tables: set[str] = set()
        self._asset_key_index_cols = False
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._keys: dict[str, tuple[float, list[str], frozenset[str]]] = {}
        self._keys_lock = threading.Lock()
        # Adds and deletes made through this storage: a read racing one is not kept.
        self._key_changes = 0
        self._stored: OrderedDict[tuple[str, str], dict[str, StoredMaterialization]] = OrderedDict()
        self._stored_lock = threading.Lock()
        super().__init__(base_dir, inst_data)  # it opens the index: the above must be there

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> BatchingSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def has_table(self, table_name: str) -> bool:
        # Asked before every dynamic-partition lookup, one per key of a run's range, at the cost
        # of a new engine each time; a table, once there, stays: a yes is remembered.
        if table_name not in self._tables:
            if not super().has_table(table_name):
                return False
            self._tables.add(table_name)
        return True

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        # Dagster's own, but on the shard's kept engine rather than a new one per connection.
        with self._db_lock:
            engine = self._engines.pop(shard, None) or _write_ahead(
                create_engine(
                    self.conn_string_for_shard(shard),
                    # One connection kept open (used by one thread at a time: the lock above):
                    # closing the last connection to a WAL database checkpoints it, a flush to
                    # disk per event.
                    poolclass=QueuePool,
                    pool_size=1,
                    max_overflow=2,
                    connect_args={
                        "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
                        "check_same_thread": False,
                    },
                )
            )
            self._engines[shard] = engine
            while len(self._engines) > ENGINES:
                self._engines.popitem(last=False)[1].dispose()
            if shard not in self._initialized_dbs:
                if not self._copy_of_template(shard):
                    self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _copy_of_template(self, shard: str) -> bool:
        """Create a new run's database as a copy of a set-up empty one: Dagster's set-up
        (tables, indexes, the stamp of its migrations, read from their scripts) costs ~0.2 s
        per run, a copy ~1 ms. False when the database is there (Dagster checks it, as usual)
        or another process is creating it."""
        path = Path(self.path_for_shard(shard))
        if shard == INDEX_SHARD_NAME or path.exists():
            return False
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            shutil.copyfile(self.run_shard_template(), tmp)
            os.link(tmp, path)  # never over a database another process made meanwhile
        except OSError:
            return False
        finally:
            tmp.unlink(missing_ok=True)
        return True

    def run_shard_template(self) -> Path:
        """An empty run database set up by Dagster's own code, one per Dagster version (its
        migrations come with it), made once in the event log's folder: by the home's set-up
        (instance/local.py; a fresh home's is copied from the home template), else by the first
        run that needs it."""
        template = Path(self._base_dir) / f".run-template-{dagster_version}.db"
        if not template.exists():
            tmp = template.with_name(f".{template.name}.{os.getpid()}.tmp")
            engine = create_engine(f"sqlite:///{tmp}", poolclass=NullPool)
            try:
                self._initdb(engine)
            finally:
                engine.dispose()  # the last connection closed: its WAL is in the file
            os.replace(tmp, template)
        return template

    def wipe(self) -> None:
        self._dispose_engines()  # its files are deleted: no connection may outlive them
        super().wipe()

    def dispose(self) -> None:
        self._dispose_engines()
        super().dispose()

    def _dispose_engines(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()

    def get_dynamic_partitions(self, partitions_def_name: str) -> Sequence[str]:
        with self._keys_lock:
            read_at, keys, _ = self._keys.get(partitions_def_name, (0.0, [], frozenset()))
            if time.monotonic() - read_at < PARTITION_KEYS_SECONDS:
                return list(keys)
        return list(self._read_keys(partitions_def_name)[0])

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        with self._keys_lock:
            read_at, _, known = self._keys.get(partitions_def_name, (0.0, [], frozenset()))
            if partition_key in known and time.monotonic() - read_at < PARTITION_KEYS_SECONDS:
                return True
        return partition_key in self._read_keys(partitions_def_name)[1]

    def _read_keys(self, partitions_def_name: str) -> tuple[list[str], frozenset[str]]:
        with self._keys_lock:
            changes = self._key_changes
        read_at = time.monotonic()
        keys = list(super().get_dynamic_partitions(partitions_def_name))
        known = frozenset(keys)
        with self._keys_lock:
            if changes == self._key_changes:  # no add or delete here while it was read
                self._keys[partitions_def_name] = (read_at, keys, known)
        return keys, known

    def add_dynamic_partitions(
        self, partitions_def_name: str, partition_keys: Sequence[str]
    ) -> None:
        super().add_dynamic_partitions(partitions_def_name, partition_keys)
        self._forget_keys(partitions_def_name)

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        super().delete_dynamic_partition(partitions_def_name, partition_key)
        self._forget_keys(partitions_def_name)

    def _forget_keys(self, partitions_def_name: str) -> None:
        with self._keys_lock:
            self._keys.pop(partitions_def_name, None)
            self._key_changes += 1

    def _has_asset_key_index_cols_on_connection(self, conn: Connection) -> bool:
        # Asked for every asset event, each time reflecting the table's columns; a column, once
        # there, stays: a yes is remembered.
        if not self._asset_key_index_cols:
            self._asset_key_index_cols = super()._has_asset_key_index_cols_on_connection(conn)
        return self._asset_key_index_cols

    def index_connection(self) -> AbstractContextManager[Connection]:
        # Inside a batch write, Dagster's per-event helpers reuse the batch's transaction.
        shared = getattr(self._batch, "conn", None)
        return nullcontext(shared) if shared is not None else super().index_connection()

    def store_event(self, event: EventLogEntry) -> None:
        if event.dagster_event_type == DagsterEventType.ASSET_CHECK_EVALUATION and event.run_id:
            with self._held_lock:
                held = self._held_checks.setdefault(event.run_id, [])
                held.append(event)
                full = len(held) >= CHECK_BATCH
            if full:
                self._write_held_checks(event.run_id)
            return
        if event.run_id:
            self._write_held_checks(event.run_id)  # they came first: they are stored first
        super().store_event(event)

    def store_event_batch(self, events: Sequence[EventLogEntry]) -> None:
        # A new run's planned events come as one batch with its asset checks' planned events:
        # the asset events are written together, the others one by one, as Dagster does.
        for is_asset, group in itertools.groupby(events, key=_is_asset_event):
            batch = list(group)
            if not is_asset or len(batch) == 1:
                for event in batch:
                    self.store_event(event)
                continue
            self._write_held_checks(batch[0].run_id)
            with self._index_batch(batch) as (conn, ids, _):
                self._store_asset_event_tags(conn, batch, ids)
                for event, event_id in _last_per_asset_and_type(batch, ids):
                    self._store_asset_event(conn, event, event_id)
            self._remember_materializations(batch, ids)

    def stored_materializations(
        self, run_id: str, asset_key: AssetKey
    ) -> Mapping[str, StoredMaterialization]:
        """The storage id and time of each partition's materialization of `asset_key` this
        process stored in a batch for the run (a step's checks point at them without reading
        the events back); partitions it did not store in a batch are missing."""
        with self._stored_lock:
            return dict(self._stored.get((run_id, asset_key.to_string()), {}))

    def _remember_materializations(
        self, batch: Sequence[EventLogEntry], ids: Sequence[int]
    ) -> None:
        with self._stored_lock:
            for event, event_id in zip(batch, ids, strict=True):
                dagster_event = event.dagster_event
                if (
                    dagster_event is None
                    or dagster_event.event_type != DagsterEventType.ASSET_MATERIALIZATION
                    or dagster_event.partition is None
                    or dagster_event.asset_key is None
                ):
                    continue
                key = (event.run_id, dagster_event.asset_key.to_string())
                found = self._stored.setdefault(key, {})
                found[dagster_event.partition] = StoredMaterialization(event_id, event.timestamp)
                self._stored.move_to_end(key)
            while len(self._stored) > REMEMBERED_STEPS:
                self._stored.popitem(last=False)

    def _write_held_checks(self, run_id: str) -> None:
        with self._held_lock:
            events = self._held_checks.pop(run_id, [])
        if events:
            with self._index_batch(events) as (conn, ids, serialized):
                if not self._update_check_executions(conn, events, ids, serialized):
                    for event, event_id in zip(events, ids, strict=True):
                        self.store_asset_check_event(event, event_id)

    def _update_check_executions(
        self,
        conn: Connection,
        events: Sequence[EventLogEntry],
        ids: Sequence[int],
        serialized: Sequence[str],
    ) -> bool:
        """Each evaluation's status into the execution row its planned event made, as Dagster's
        `_update_asset_check_evaluation` does one statement per evaluation (with the event
        serialized again), in one statement for all. False, with nothing written, unless every
        evaluation has a partition and exactly one such row to update."""
        table = AssetCheckExecutionsTable
        params = []
        for event, event_id, text in zip(events, ids, serialized, strict=True):
            evaluation = event.dagster_event.event_specific_data  # type: ignore[union-attr]
            if not isinstance(evaluation, AssetCheckEvaluation) or evaluation.partition is None:
                return False
            target = evaluation.target_materialization_data
            params.append(
                {
                    "b_asset_key": evaluation.asset_key.to_string(),
                    "b_check_name": evaluation.check_name,
                    "b_run_id": event.run_id,
                    "b_partition": evaluation.partition,
                    "execution_status": (
                        AssetCheckExecutionRecordStatus.SUCCEEDED.value
                        if evaluation.passed
                        else AssetCheckExecutionRecordStatus.FAILED.value
                    ),
                    "evaluation_event": text,
                    "evaluation_event_timestamp": self._event_insert_timestamp(event),
                    "evaluation_event_storage_id": event_id,
                    "materialization_event_storage_id": target.storage_id if target else None,
                }
            )
        wanted = Counter(
            (p["b_asset_key"], p["b_check_name"], p["b_run_id"], p["b_partition"]) for p in params
        )
        found: Counter[tuple[str, str, str, str]] = Counter()
        for asset_key, check_name, run_id in {key[:3] for key in wanted}:
            rows = conn.execute(
                db.select(table.c.partition).where(
                    table.c.asset_key == asset_key,
                    table.c.check_name == check_name,
                    table.c.run_id == run_id,
                )
            )
            found.update((asset_key, check_name, run_id, row[0]) for row in rows)
        if any(count != 1 or found[key] != 1 for key, count in wanted.items()):
            return False
        conn.execute(
            table.update()
            .where(
                table.c.asset_key == db.bindparam("b_asset_key"),
                table.c.check_name == db.bindparam("b_check_name"),
                table.c.run_id == db.bindparam("b_run_id"),
                table.c.partition == db.bindparam("b_partition"),
            )
            .values(
                execution_status=db.bindparam("execution_status"),
                evaluation_event=db.bindparam("evaluation_event"),
                evaluation_event_timestamp=db.bindparam("evaluation_event_timestamp"),
                evaluation_event_storage_id=db.bindparam("evaluation_event_storage_id"),
                materialization_event_storage_id=db.bindparam("materialization_event_storage_id"),
            ),
            params,
        )
        return True

    def _store_asset_check_evaluation_planned(
        self, event: EventLogEntry, event_id: int | None
    ) -> None:
        # Dagster's, with the event serialized once rather than once per partition (it holds
        # the run's whole subset, so that was quadratic in the partitions), and the rows sent as
        # one statement run per row (a single VALUES list of 10,000 rows passes SQLite's
        # limit on a statement's parameters).
        planned = event.dagster_event.event_specific_data  # type: ignore[union-attr]
        assert isinstance(planned, AssetCheckEvaluationPlanned)
        subset = planned.partitions_subset
        keys: list[str | None] = list(subset.get_partition_keys()) if subset else [None]
        common = {
            "asset_key": planned.asset_key.to_string(),
            "check_name": planned.check_name,
            "run_id": event.run_id,
            "execution_status": AssetCheckExecutionRecordStatus.PLANNED.value,
            "evaluation_event": serialize_value(event),
            "evaluation_event_timestamp": self._event_insert_timestamp(event),
            "evaluation_event_storage_id": event_id,
        }
        with self.index_connection() as conn:
            conn.execute(
                AssetCheckExecutionsTable.insert(), [{**common, "partition": k} for k in keys]
            )

    @contextmanager
    def _index_batch(
        self, events: Sequence[EventLogEntry]
    ) -> Iterator[tuple[Connection, list[int], list[str]]]:
        """Insert `events` (one run's) into the run's shard, then into the cross-run index, and
        yield the index transaction with their ids and serialized events for the rest of the
        mirroring, as `store_event` does one by one."""
        rows = [self._event_to_row(e) for e in events]  # each event serialized once, for both
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)
        insert = SqlEventLogStorageTable.insert().returning(
            SqlEventLogStorageTable.c.id, sort_by_parameter_order=True
        )
        with super().index_connection() as conn:
            ids = [row[0] for row in conn.execute(insert, rows)]
            self._batch.conn = conn
            try:
                yield conn, ids, [row["event"] for row in rows]
            finally:
                self._batch.conn = None


def _last_per_asset_and_type(
    events: Sequence[EventLogEntry], ids: Sequence[int]
) -> list[tuple[EventLogEntry, int]]:
    """The last event of each asset key and event type, in batch order. The asset table has one
    row per asset and each event type sets the same columns of it, so within a batch the earlier
    ones' writes are overwritten: Dagster's Postgres storage likewise writes only a batch's last."""
    last = {(e.dagster_event.asset_key, e.dagster_event_type): i for i, e in enumerate(events)}  # type: ignore[union-attr]
    return [(events[i], ids[i]) for i in sorted(last.values())]


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
    comment = "# Dagster's sqlite event log, writing a step's partition events in batches.\n"
    return comment + yaml.safe_dump(block, sort_keys=False)

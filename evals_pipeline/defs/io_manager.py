"""IO between layers: each step writes one run-scoped Parquet of records; a consumer loads the
latest record of each partition it needs, found through Dagster's event log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
import sqlalchemy as db
from pydantic import BaseModel

from evals_pipeline.dagster_private import SqlEventLogStorage, SqlEventLogStorageTable
from evals_pipeline.defs.partitions import partition_key, split_key
from evals_pipeline.defs.resources import step_folder
from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.record_digest import record_digest
from evals_pipeline.results.store import ResultStore
from evals_pipeline.secrets import run_redactor
from evals_pipeline.storage.record_reader import RecordReader
from evals_pipeline.storage.records import read_record_slots, write_records
from evals_pipeline.storage.root import open_root

IO_MANAGER_KEY = "records_io_manager"
ALLOW_MISSING = "allow_missing_partitions"
SKIP_HOLDING = "skip_records_holding"
FILTERED_KEYS = 1_000
"""Partition keys (or storage ids) a query names at most; more are filtered here."""
DENSE_IDS = 4
"""Storage ids read as one range when it holds at most this many events per id wanted."""
# What each layer's records are, by the asset's name: validated again on every load.
RECORD_MODELS: dict[str, type[BaseModel]] = {
    "cases": ResolvedCase,
    "agent_runs": AgentRun,
    "sessions": Session,
    "grades": CaseGrade,
    "judgments": CaseJudgment,
    "pairwise_verdicts": CasePairwise,
}


Records = list[tuple[str, BaseModel]]
"""What a layer's step returns: each record with the key of the partition it belongs to."""


class LoadedRecords(list[Any]):
    """The records a step loads, with the `record_digest` of each one's stored JSON by `id()` of
    the record (alive while this list is): the report keys its case pages with them instead of
    serializing 10,000 cases' records again (reporting/html/page_cache.py). `clean` holds the
    ids of those whose stored JSON holds none of this process's secrets: the report does not
    serialize them again to scrub them (~2 s for 10,000 cases' records)."""

    def __init__(self) -> None:
        super().__init__()
        self.digests: dict[int, bytes] = {}
        self.clean: set[int] = set()

    def add(self, record: BaseModel, text: str, *, clean: bool = False) -> None:
        self.append(record)
        self.digests[id(record)] = record_digest(text)
        if clean:
            self.clean.add(id(record))


def stored_digests(*loaded: Sequence[Any]) -> dict[int, bytes]:
    """The stored digests of every loaded list among `loaded` (none for other sequences)."""
    return {
        k: v
        for records in loaded
        if isinstance(records, LoadedRecords)
        for k, v in records.digests.items()
    }


def clean_records(*loaded: Sequence[Any]) -> set[int]:
    """The ids of the records among `loaded` known to hold no secret (LoadedRecords `clean`)."""
    return {i for records in loaded if isinstance(records, LoadedRecords) for i in records.clean}


def keyed(
    records: Sequence[ResolvedCase | AgentRun | Session | CaseGrade | CaseJudgment],
) -> Records:
    """Records of (case, agent) partitions paired with their partition keys."""
    return [(str(partition_key(r.case_key, r.agent)), r) for r in records]


def latest_materializations(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition_keys: Sequence[str]
) -> dict[str, dg.EventLogRecord]:
    """The newest materialization record of each partition, in a few queries."""
    wanted = set(partition_keys)
    found: dict[str, dg.EventLogRecord] = {}
    cursor = None
    while wanted - found.keys():
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=asset_key, asset_partitions=sorted(wanted - found.keys())
            ),
            limit=1000,
            cursor=cursor,
        )
        for record in result.records:
            partition = record.partition_key
            if partition is not None and partition not in found:
                found[partition] = record
        if not result.has_more:
            break
        cursor = result.cursor
    return found


def latest_uris(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition_keys: Sequence[str]
) -> dict[str, str]:
    """The `dagster/uri` of the newest materialization of each partition.

    A step writes all its partitions' records to one file, so the newest event of each
    partition is found by id alone and one event per run is read whole (a report's 10,000
    partitions' events, read whole, took ~2 s per layer)."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqlEventLogStorage):
        return _latest_uris_one_by_one(instance, asset_key, partition_keys)
    wanted = set(partition_keys)
    # Unfiltered beyond a few keys: an IN of 10,000 keys costs more than the rows it leaves out.
    ids = storage.get_latest_storage_id_by_partition(
        asset_key,
        dg.DagsterEventType.ASSET_MATERIALIZATION,
        wanted if len(wanted) <= FILTERED_KEYS else None,
    )
    run_of = _run_ids(storage, sorted({i for p, i in ids.items() if p in wanted}))
    ids = {partition: i for partition, i in ids.items() if i in run_of and partition in wanted}
    first_of_run: dict[str, int] = {}
    for storage_id in sorted(ids.values()):
        first_of_run.setdefault(run_of[storage_id], storage_id)
    uri_of_run: dict[str, str] = {}
    if first_of_run:
        found = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=list(first_of_run.values())),
            limit=len(first_of_run),
        )
        for record in found.records:
            uri = _uri(record)
            if uri is not None:
                uri_of_run[record.run_id] = uri
    return {
        partition: uri_of_run[run_of[i]] for partition, i in ids.items() if run_of[i] in uri_of_run
    }


def _run_ids(storage: SqlEventLogStorage, storage_ids: Sequence[int]) -> dict[int, str]:
    """The run of each event, by storage id (`storage_ids` sorted): one read of their range when
    they lie close together (a step stores its events in one batch), else a few thousand ids per
    query (ten IN queries of 1,000 ids cost ~0.1 s per layer of a 10,000-case report)."""
    table = SqlEventLogStorageTable
    found: dict[int, str] = {}
    if not storage_ids:
        return found
    low, high = storage_ids[0], storage_ids[-1]
    with storage.index_connection() as conn:
        if high - low < DENSE_IDS * len(storage_ids):
            wanted = set(storage_ids)
            query = db.select(table.c.id, table.c.run_id).where(table.c.id.between(low, high))
            found.update((int(i), str(r)) for i, r in conn.execute(query).all() if i in wanted)
            return found
        for start in range(0, len(storage_ids), FILTERED_KEYS):
            chunk = storage_ids[start : start + FILTERED_KEYS]
            query = db.select(table.c.id, table.c.run_id).where(table.c.id.in_(chunk))
            found.update((int(i), str(run_id)) for i, run_id in conn.execute(query).all())
    return found


def _uri(record: dg.EventLogRecord) -> str | None:
    materialization = record.asset_materialization
    uri = materialization.metadata.get("dagster/uri") if materialization else None
    return None if uri is None else str(uri.value)


def _latest_uris_one_by_one(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition_keys: Sequence[str]
) -> dict[str, str]:
    """latest_uris on an event log that is not SQL: each partition's newest event read whole."""
    found: dict[str, str] = {}
    for partition, record in latest_materializations(instance, asset_key, partition_keys).items():
        uri = _uri(record)
        if uri is not None:
            found[partition] = uri
    return found


class RecordsIOManager(dg.ConfigurableIOManager):
    """Stores lists of (partition key, pydantic record) under the storage root."""

    root: str

    def handle_output(self, context: dg.OutputContext, obj: list[tuple[str, BaseModel]]) -> None:
        root = open_root(self.root)
        folder = step_folder(self.root, context.asset_key, context.run_id)
        records = folder / "records.parquet"
        # A case's steps need the secrets the suite interpolated into it (its command, a
        # grader's key): where each was scrubbed is kept, to put it back by position on load.
        model = RECORD_MODELS.get(context.asset_key.path[-1])
        # Runs, sessions and grades the result store holds are named there, not copied.
        store = None
        if model in (AgentRun, Session, CaseGrade):
            store = ResultStore.of_suite(root, "/".join(context.asset_key.path[:-1]))
        rows = write_records(
            obj,
            records,
            root.record_context(),
            slots=model is ResolvedCase,
            stored=store.stored_file if store is not None else None,
        )
        # Its records and whatever else the step wrote that no stored result published yet
        # (stored results publish their own trial folders, never the step's folder itself).
        root.publish(folder)
        context.add_output_metadata({"dagster/uri": root.uri(records), "dagster/row_count": rows})

    def load_input(self, context: dg.InputContext) -> list[Any]:
        # A record per partition, 10,000 of them for a large suite's report, kept for the step.
        with gc_paused(kept=True):
            return self._load(context)

    def _load(self, context: dg.InputContext) -> list[Any]:
        settings = context.definition_metadata or {}
        return load_records(
            context.instance,
            self.root,
            context.asset_key,
            [str(k) for k in context.asset_partition_keys],
            allow_missing=settings.get(ALLOW_MISSING, False),
            skip_holding=tuple(settings.get(SKIP_HOLDING, ())),
        )


def load_records(
    instance: dg.DagsterInstance,
    root_url: str,
    asset_key: dg.AssetKey,
    keys: Sequence[str],
    *,
    allow_missing: bool = False,
    skip_holding: Sequence[str] = (),
) -> LoadedRecords:
    """The latest stored record(s) of each of `keys`, partitions of the layer at `asset_key`
    under the storage root `root_url`: what an input of that layer loads, and what a step that
    does not make a layer itself (a re-grade's stored sessions) reads of it."""
    model = RECORD_MODELS[asset_key.path[-1]]
    uris = latest_uris(instance, asset_key, keys)
    missing = [k for k in keys if k not in uris]
    if missing and not allow_missing:
        shown = ", ".join(_describe(key) for key in missing[:5])
        raise dg.Failure(
            f"{asset_key.to_user_string()} has no materialization for {len(missing)} "
            f"partition(s) ({shown}); materialize it first, or select it in the same run."
        )
    wanted = set(uris)
    root = open_root(root_url)
    reader = RecordReader(model, root.record_context())
    redactor = run_redactor()
    records = LoadedRecords()
    # The stored files rows name are here already on a local root; an object store's come down.
    fetch = root.fetch_file if root.remote else None
    for uri in sorted(set(uris.values())):
        path = root.local_path(uri)
        root.fetch_file(path)
        for key, text, slots in read_record_slots(path, wanted, fetch):
            if uris[key] == uri and not any(mark in text for mark in skip_holding):
                # A stored case's slots say where the suite's interpolated secrets were
                # scrubbed; the steps that run its command or its graders need them back.
                # Never a marker found in its text: a suite may write one to steal a key.
                record = reader.read(text, slots if model is ResolvedCase else None)
                root.fetch_record(record)  # the files it names, here for this step
                # Digested as stored, without the secrets; clean when it holds none.
                clean = not slots and not redactor.holds_secret(text)
                records.add(record, text, clean=clean)
    return records


def records_in(
    key: Sequence[str],
    *,
    partition_mapping: dg.PartitionMapping | None = None,
    allow_missing: bool = False,
    skip_holding: Sequence[str] = (),
) -> dg.AssetIn:
    """An input of a layer's records (`allow_missing`: partitions never materialized are left
    out; `skip_holding`: records whose stored JSON holds one of these texts are left out unread,
    for a step that needs only some). Typed `Any` for Dagster: this IO manager validates the
    records as it loads them, and Dagster's check of a `list[...]` input walks every item again
    (~0.2 s over a 10,000-case report's inputs)."""
    settings: dict[str, Any] = {}
    if allow_missing:
        settings[ALLOW_MISSING] = True
    if skip_holding:
        settings[SKIP_HOLDING] = list(skip_holding)
    return dg.AssetIn(
        key=list(key),
        partition_mapping=partition_mapping,
        metadata=settings or None,
        dagster_type=dg.Any,
    )


def _describe(key: str) -> str:
    """A partition key as the user knows it: case and agent, or the case alone."""
    if "|" not in key:
        return f"case {key}"
    case, agent = split_key(key)
    return f"case {case} / agent {agent}"

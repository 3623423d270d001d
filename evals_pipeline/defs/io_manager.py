"""IO between layers: each step writes one run-scoped Parquet of records; a consumer loads the
latest record of each partition it needs, found through Dagster's event log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
from pydantic import BaseModel

from evals_pipeline.defs.partitions import partition_key, split_key
from evals_pipeline.defs.resources import step_folder
from evals_pipeline.gc_pause import gc_paused
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.secrets import restore
from evals_pipeline.storage.records import read_records, write_records
from evals_pipeline.storage.root import open_root

IO_MANAGER_KEY = "records_io_manager"
ALLOW_MISSING = "allow_missing_partitions"
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


def keyed(records: Sequence[AgentRun | Session | CaseGrade | CaseJudgment]) -> Records:
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
    """The `dagster/uri` of the newest materialization of each partition."""
    found: dict[str, str] = {}
    for partition, record in latest_materializations(instance, asset_key, partition_keys).items():
        materialization = record.asset_materialization
        uri = materialization.metadata.get("dagster/uri") if materialization else None
        if uri is not None:
            found[partition] = str(uri.value)
    return found


class RecordsIOManager(dg.ConfigurableIOManager):
    """Stores lists of (partition key, pydantic record) under the storage root."""

    root: str

    def handle_output(self, context: dg.OutputContext, obj: list[tuple[str, BaseModel]]) -> None:
        root = open_root(self.root)
        folder = step_folder(self.root, context.asset_key, context.run_id)
        records = folder / "records.parquet"
        rows = write_records(obj, records, root.export_text)
        # Its records and whatever else the step wrote that no stored result published yet
        # (stored results publish their own trial folders, never the step's folder itself).
        root.publish(folder)
        context.add_output_metadata({"dagster/uri": root.uri(records), "dagster/row_count": rows})

    def load_input(self, context: dg.InputContext) -> list[Any]:
        with gc_paused(
            kept=True
        ):  # a record per partition: 10,000 of them for a large suite's report
            return self._load(context)

    def _load(self, context: dg.InputContext) -> list[Any]:
        model = RECORD_MODELS[context.asset_key.path[-1]]
        keys = [str(k) for k in context.asset_partition_keys]
        uris = latest_uris(context.instance, context.asset_key, keys)
        missing = [k for k in keys if k not in uris]
        allow_missing = (context.definition_metadata or {}).get(ALLOW_MISSING, False)
        if missing and not allow_missing:
            shown = ", ".join(_describe(key) for key in missing[:5])
            raise dg.Failure(
                f"{context.asset_key.to_user_string()} has no materialization for {len(missing)} "
                f"partition(s) ({shown}); materialize it first, or select it in the same run."
            )
        wanted = set(uris)
        root = open_root(self.root)
        records: list[Any] = []
        for uri in sorted(set(uris.values())):
            path = root.local_path(uri)
            root.fetch_file(path)
            for key, text in read_records(path, wanted):
                if uris[key] == uri:
                    # A stored case holds [REDACTED:VAR] where the suite interpolated a secret;
                    # the steps that run its command or its graders need the value back.
                    text = root.import_text(restore(text) if model is ResolvedCase else text)
                    record = model.model_validate_json(text)
                    root.fetch_record(record)  # the files it names, here for this step
                    records.append(record)
        return records


def _describe(key: str) -> str:
    """A partition key as the user knows it: case and agent, or the case alone."""
    if "|" not in key:
        return f"case {key}"
    case, agent = split_key(key)
    return f"case {case} / agent {agent}"

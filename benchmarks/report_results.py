"""W5's set-up: 10,000 case results without running 10,000 agents. One case run for real (by
`evals-pipeline run` on a one-case copy of the suite) gives each layer's record; each record is
copied for every case of the suite (each agent's, for a suite of several agents), written as a
step writes its records (one Parquet per layer) and recorded in the event log as that step's materializations (one batch per layer), so the
report step finds them exactly as after a real run.

    python -m benchmarks.report_results SUITE_SLUG CASES  (on DAGSTER_HOME, EVALS_PIPELINE_STORAGE)
"""

from __future__ import annotations

import logging
import sys
import time
import uuid

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
from dagster._core.events.log import EventLogEntry

from evals_pipeline.defs.partitions import partition_key, split_key
from evals_pipeline.defs.resources import step_folder
from evals_pipeline.storage.records import read_records, records_schema
from evals_pipeline.storage.root import open_root
from evals_pipeline.storage_env import storage_root_from_env

LAYERS = ("cases", "agent_runs", "sessions", "grades", "judgments")
TEMPLATE_CASE = "case-0"
JOB = "layers"


def template_records(instance: dg.DagsterInstance, root: str, key: dg.AssetKey) -> dict[str, str]:
    """The template case's latest record of layer `key`, by agent (each agent of the suite ran
    it once)."""
    found = instance.fetch_materializations(key, limit=100).records
    texts: dict[str, str] = {}
    for record in found:
        materialization = record.asset_materialization
        partition = materialization.partition if materialization else None
        assert materialization is not None and partition is not None, key.to_user_string()
        case, agent = split_key(partition)
        if case != TEMPLATE_CASE or agent in texts:
            continue  # an older one of the same agent
        uri = str(materialization.metadata["dagster/uri"].value)
        [(_, text)] = read_records(open_root(root).local_path(uri), {partition})
        texts[agent] = text
    return texts


def copy_layer(instance: dg.DagsterInstance, root: str, key: dg.AssetKey, cases: int) -> int:
    """Every case's copy of the template case's latest record of layer `key` (each agent's),
    stored as one step's output; returns how many were written (0 when the layer has none)."""
    templates = template_records(instance, root, key)
    if not templates:
        return 0
    run_id = str(uuid.uuid4())
    keys, texts = [], []
    for agent, text in sorted(templates.items()):
        keys += [str(partition_key(f"case-{i}", agent)) for i in range(cases)]
        texts += [text.replace(f'"{TEMPLATE_CASE}"', f'"case-{i}"') for i in range(cases)]
    records = step_folder(root, key, run_id) / "records.parquet"
    records.parent.mkdir(parents=True)
    table = pa.Table.from_pydict({"partition_key": keys, "record_json": texts}, records_schema())
    pq.write_table(table, records, compression="zstd")
    stored_uri = open_root(root).uri(records)
    now = time.time()
    instance.event_log_storage.store_event_batch(
        [
            EventLogEntry(
                error_info=None,
                level=logging.DEBUG,
                user_message="",
                run_id=run_id,
                timestamp=now,
                job_name=JOB,
                dagster_event=DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                    job_name=JOB,
                    event_specific_data=StepMaterializationData(
                        dg.AssetMaterialization(
                            key, partition=partition, metadata={"dagster/uri": stored_uri}
                        )
                    ),
                ),
            )
            for partition in keys
        ]
    )
    return len(keys)


def main() -> int:
    slug, cases = sys.argv[1], int(sys.argv[2])
    root = storage_root_from_env()
    with dg.DagsterInstance.get() as instance:
        for layer in LAYERS:
            written = copy_layer(instance, root, dg.AssetKey([slug, layer]), cases)
            print(f"{layer}: {written} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())

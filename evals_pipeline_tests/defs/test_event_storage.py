"""The batching sqlite event log: a run created outside our code location (by the daemon for a
sensor or a backfill, by the webserver for a UI launch) writes its planned events in one batch,
and they still say which partitions are in progress."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster._core.execution.api import create_execution_plan
from pytest import MonkeyPatch

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.event_volume import BATCH_SIZE
from evals_pipeline.defs.instance import local_instance
from evals_pipeline.defs.partitions import case_partitions_name
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.defs.conftest import write_suite

SUBSET_EVENTS = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"


def test_a_daemon_created_run_plans_each_partition_in_one_batch(
    tmp_path: Path, monkeypatch: MonkeyPatch
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
    instance.add_dynamic_partitions(case_partitions_name("demo"), cases)
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

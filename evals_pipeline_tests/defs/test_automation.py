"""The nightly pass: every partition of every layer after the cron tick, then the report."""

from __future__ import annotations

import datetime
from pathlib import Path

import dagster as dg

from evals_pipeline.defs.automation import AUTOMATION_SENSOR, nightly_label
from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import case_partitions_name
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.defs.conftest import write_suite


def test_nightly_requests_every_partition_after_the_cron_tick(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    defs = build_definitions([load_suite(path)], str(tmp_path / "storage"))
    instance.add_dynamic_partitions(case_partitions_name("demo"), ["greets", "waves"])
    day = datetime.datetime(2026, 11, 21, tzinfo=datetime.UTC)

    before = dg.evaluate_automation_conditions(
        defs=defs, instance=instance, evaluation_time=day.replace(hour=1, minute=50)
    )
    assert before.total_requested == 0, "nothing runs before the first tick"
    after = dg.evaluate_automation_conditions(
        defs=defs,
        instance=instance,
        cursor=before.cursor,
        evaluation_time=day.replace(hour=2, minute=1),
    )
    requested = {
        key.to_user_string(): after.get_num_requested(key)
        for key in defs.resolve_asset_graph().get_all_asset_keys()
    }
    for layer in ("cases", "agent_runs", "sessions", "grades"):
        assert requested[f"demo/{layer}"] == 4, requested  # 2 cases x 2 agents

    # Once the night's grades land, the report follows on the next evaluation.
    # cases, and the one step of agent_runs, sessions and grades.
    layers = [defs.resolve_assets_def(dg.AssetKey(["demo", n])) for n in ("cases", "grades")]
    result = dg.materialize(
        layers,
        instance=instance,
        tags={
            "dagster/asset_partition_range_start": "echo|greets",
            "dagster/asset_partition_range_end": "silent|waves",
        },
    )
    assert result.success
    later = dg.evaluate_automation_conditions(
        defs=defs,
        instance=instance,
        cursor=after.cursor,
        evaluation_time=day.replace(hour=2, minute=5),
    )
    assert later.get_num_requested(dg.AssetKey(["demo", "eval_report"])) == 1


def test_the_nightly_has_a_name_and_label_a_user_recognises(tmp_path: Path) -> None:
    defs = build_definitions([load_suite(write_suite(tmp_path, [("greets", "hello")]))], "s")
    sensor = defs.resolve_sensor_def(AUTOMATION_SENSOR)
    assert sensor.name == "nightly_evals"
    assert sensor.description and "nightly 02:00 UTC" in sensor.description
    # The night's requests become backfills, which the layers' single-run policy batches.
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition) and sensor.emit_backfills
    grades = defs.resolve_assets_def(dg.AssetKey(["demo", "grades"]))
    condition = grades.automation_conditions_by_key[dg.AssetKey(["demo", "grades"])]
    assert condition is not None and condition.get_label() == "nightly 02:00 UTC"
    assert nightly_label("30 23 * * *") == "nightly 23:30 UTC"
    assert nightly_label("0 2 * * 1-5") == "nightly (0 2 * * 1-5, UTC)"

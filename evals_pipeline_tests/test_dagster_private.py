"""Each private Dagster name evals_pipeline/dagster_private.py hands out still exists and
behaves as its users rely on (a small real call each), the module refuses an unsupported
Dagster, and no other module of the package reaches into `dagster._…`."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as db
from sqlalchemy.pool import NullPool

from evals_pipeline import dagster_private as private

PACKAGE = Path(private.__file__).parent
PRIVATE_DAGSTER = re.compile(r"\bdagster\._")


def test_private_dagster_names_are_used_in_one_module_only() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != Path(private.__file__)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE_DAGSTER.search(line)
    ]
    assert found == [], "\n".join(found)


def test_the_installed_dagster_is_supported_and_others_are_refused() -> None:
    private.check_version(dg.__version__)
    private.check_version("1.13.0")
    private.check_version("1.13.27rc1")
    for version in ("1.12.9", "1.14.0", "2.0.0"):
        with pytest.raises(private.UnsupportedDagsterError) as raised:
            private.check_version(version)
        assert f"Dagster {version} is installed" in str(raised.value)
        assert ">=1.13,<1.14" in str(raised.value)


def test_importing_it_with_an_unsupported_dagster_fails_naming_both_versions() -> None:
    code = (
        "import dagster.version as v; v.__version__ = '1.14.2'\n"
        "import evals_pipeline.dagster_private\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent
    )
    assert done.returncode != 0
    assert "UnsupportedDagsterError" in done.stderr
    assert "Dagster 1.14.2 is installed" in done.stderr
    assert ">=1.13,<1.14" in done.stderr


def test_its_costly_modules_load_only_when_asked_for() -> None:
    heavy = (
        "dagster._core.storage.event_log.sql_event_log",
        "dagster._cli.api",
        "dagster._daemon.controller",
    )
    code = (
        "import sys, evals_pipeline.dagster_private\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_asset_events_are_the_materialization_kinds() -> None:
    assert dg.DagsterEventType.ASSET_MATERIALIZATION in private.ASSET_EVENTS
    assert dg.DagsterEventType.RUN_START not in private.ASSET_EVENTS


def test_partition_range_tags_are_the_ones_a_backfill_run_carries() -> None:
    assert private.ASSET_PARTITION_RANGE_START_TAG == "dagster/asset_partition_range_start"
    assert private.ASSET_PARTITION_RANGE_END_TAG == "dagster/asset_partition_range_end"
    partitions = dg.StaticPartitionsDefinition(["a", "b", "c"])

    @dg.asset(partitions_def=partitions)
    def letters() -> None:
        pass

    job = dg.define_asset_job("letters_job", [letters], partitions_def=partitions)
    run = dg.Definitions(assets=[letters], jobs=[job]).get_job_def("letters_job")
    tags = {
        private.ASSET_PARTITION_RANGE_START_TAG: "a",
        private.ASSET_PARTITION_RANGE_END_TAG: "b",
    }
    result = run.execute_in_process(tags=tags, instance=dg.DagsterInstance.ephemeral())
    assert result.success
    materialized = {e.partition for e in result.get_asset_materialization_events()}
    assert materialized == {"a", "b"}


def test_check_evaluation_planned_and_target_materialization_data() -> None:
    key = dg.AssetKey(["demo", "grades"])
    planned = private.AssetCheckEvaluationPlanned(asset_key=key, check_name="passes")
    assert planned.asset_check_key == dg.AssetCheckKey(key, "passes")
    target = private.AssetCheckEvaluationTargetMaterializationData(
        storage_id=7, run_id="r", timestamp=1.0
    )
    evaluation = dg.AssetCheckEvaluation(
        asset_key=key, check_name="passes", passed=True, target_materialization_data=target
    )
    assert evaluation.target_materialization_data == target


def test_check_execution_statuses() -> None:
    statuses = {s.value for s in private.AssetCheckExecutionRecordStatus}
    assert {"PLANNED", "SUCCEEDED", "FAILED"} <= statuses


def test_event_log_tables_sqlite_storages_and_engine(tmp_path: Path) -> None:
    storage = private.SqliteEventLogStorage(str(tmp_path))
    assert isinstance(storage, private.SqlEventLogStorage)
    assert isinstance(dg.DagsterInstance.ephemeral(), private.DynamicPartitionsStore)
    # The index database is named INDEX_SHARD_NAME; its tables are the ones read and written.
    assert Path(storage.path_for_shard(private.INDEX_SHARD_NAME)).exists()
    engine = private.create_engine(
        storage.conn_string_for_shard(private.INDEX_SHARD_NAME),
        poolclass=NullPool,
        connect_args={"timeout": private.SQLITE_BUSY_TIMEOUT_SECONDS},
    )
    try:
        with engine.connect() as conn:
            tables = set(db.inspect(conn).get_table_names())
            assert private.SqlEventLogStorageTable.name in tables
            assert private.AssetCheckExecutionsTable.name in tables
            count = conn.execute(
                db.select(db.func.count()).select_from(private.SqlEventLogStorageTable)
            ).scalar()
            assert count == 0
    finally:
        engine.dispose()
    assert {"id", "run_id", "event", "dagster_event_type", "asset_key", "partition"} <= set(
        private.SqlEventLogStorageTable.c.keys()
    )


def test_configurable_class_data_rehydrates_its_class() -> None:
    data = private.ConfigurableClassData(
        "evals_pipeline.instance.run_coordinator", "EvalRunCoordinator", "{}"
    )
    coordinator = data.rehydrate(dg.QueuedRunCoordinator)
    assert type(coordinator).__name__ == "EvalRunCoordinator"


def test_config_post_processing_error_is_a_config_error() -> None:
    class Positive(dg.ScalarUnion):
        def __init__(self) -> None:
            super().__init__(
                scalar_type=float, non_scalar_schema=dg.Selector({"env": str}), _key="TestPos"
            )

        def post_process(self, value: float) -> float:
            if value <= 0:
                raise private.PostProcessingError("must be positive")
            return value

    schema = dg.QueuedRunCoordinator.config_type()
    assert isinstance(schema, dict) and "max_concurrent_runs" in schema  # a UserConfigSchema
    from dagster._config import process_config

    assert process_config(dg.Shape({"x": dg.Field(Positive())}), {"x": 2}).success
    failed = process_config(dg.Shape({"x": dg.Field(Positive())}), {"x": -1})
    assert not failed.success
    assert "must be positive" in str(failed.errors)


def test_partition_loading_context_is_what_partition_loading_yields() -> None:
    with dg.partition_loading_context() as context:
        assert isinstance(context, private.PartitionLoadingContext)


def test_launcher_types() -> None:
    health = private.CheckRunHealthResult(private.WorkerStatus.FAILED, "gone")
    assert (health.status, health.msg) == (private.WorkerStatus.FAILED, "gone")
    assert private.LaunchRunContext._fields[:2] == ("dagster_run", "workspace")


def test_instance_ref_round_trips_and_opens(tmp_path: Path) -> None:
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        text = dg.serialize_value(instance.get_ref())
    ref = dg.deserialize_value(text, private.InstanceRef)
    with dg.DagsterInstance.from_ref(ref) as instance:
        assert instance.get_runs_count() == 0


def test_run_execution_body_signature_and_interrupts() -> None:
    parameters = list(inspect.signature(private.execute_run_command_body).parameters)
    assert parameters == ["run_id", "instance", "write_stream_fn", "set_exit_code_on_failure"]
    with private.capture_interrupts():
        pass
    message = private.get_run_crash_explanation(prefix="Run execution process for r", exit_code=-9)
    assert message.startswith("Run execution process for r") and "SIGKILL" in message


def test_daemon_loop_constant_and_main_modules() -> None:
    import importlib.util

    interval = private.daemon_controller.DEFAULT_DAEMON_INTERVAL_SECONDS
    assert isinstance(interval, int | float) and interval > 0
    assert importlib.util.find_spec(private.DAEMON_MAIN_MODULES[1]) is not None
    for module in private.RUN_WORKER_MODULES:
        assert importlib.util.find_spec(module) is not None, module

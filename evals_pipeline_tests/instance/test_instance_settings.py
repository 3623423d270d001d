"""The shipped instance settings (dagster.yaml): one set for `evals-pipeline`'s own instance, for
`make dev` and for a bare `dagster dev -w workspace.yaml`, which keeps its runs in .evals/dagster
beside the CLI's; every run the queue takes carries its suite and agent tags."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._config import process_config
from dagster._core.errors import DagsterInvalidConfigError
from dagster._core.instance.config import dagster_instance_config_schema
from dagster._daemon.controller import create_daemon_of_type
from dagster._daemon.run_coordinator import QueuedRunCoordinatorDaemon
from pytest import MonkeyPatch

from evals_pipeline.instance.event_storage import BatchingSqliteEventLogStorage
from evals_pipeline.instance.local import local_instance, shipped_settings
from evals_pipeline.instance.registration import EvalInstance
from evals_pipeline.instance.run_coordinator import EvalRunCoordinator
from evals_pipeline_tests.dagster_dev import BIN, backfill, dagster_dev, graphql, run_tags
from evals_pipeline_tests.defs.conftest import REPO, write_suite
from evals_pipeline_tests.test_cli import cli

STORAGE_KEYS = (
    "run_storage",
    "event_log_storage",
    "schedule_storage",
    "local_artifact_storage",
    "compute_logs",
)
BACKFILL_TIMEOUT_SECONDS = 240


INSTANCE = """
{
  instance {
    runQueueConfig { maxConcurrentRuns tagConcurrencyLimitsYaml }
    poolConfig { poolGranularity defaultPoolLimit }
  }
  assetNodeOrError(assetKey: {path: ["demo", "cases"]}) {
    ... on AssetNode {
      partitionKeysByDimension { name partitionKeys }
      repository { name location { name } }
    }
  }
}"""

# The backfill dialog's "Add partition", as the UI sends it.
ADD_PARTITION = """
mutation Add($repo: RepositorySelector!, $name: String!, $key: String!) {
  addDynamicPartition(repositorySelector: $repo, partitionsDefName: $name, partitionKey: $key) {
    __typename
    ... on PythonError { message }
  }
}"""


def test_the_checkout_dagster_yaml_is_the_shipped_settings_plus_its_storage() -> None:
    checkout = yaml.safe_load((REPO / "dagster.yaml").read_text())
    assert checkout["event_log_storage"] == {
        "module": "evals_pipeline.instance.event_storage",
        "class": "BatchingSqliteEventLogStorage",
        "config": {"base_dir": ".evals/dagster/history/runs"},
    }
    settings = {k: v for k, v in checkout.items() if k not in STORAGE_KEYS}
    assert settings == yaml.safe_load(shipped_settings())


def test_a_fresh_home_gets_the_shipped_settings_and_a_home_keeps_its_own(tmp_path: Path) -> None:
    fresh = local_instance(tmp_path / "fresh")
    assert isinstance(fresh.run_coordinator, EvalRunCoordinator)
    assert isinstance(fresh.event_log_storage, BatchingSqliteEventLogStorage)
    assert Path(fresh.event_log_storage._base_dir) == tmp_path / "fresh" / "history" / "runs"
    assert fresh.run_monitoring_enabled and not fresh.telemetry_enabled
    pools = fresh.get_concurrency_config().pool_config
    assert (pools.pool_granularity.value, pools.default_pool_limit) == ("run", 1)  # type: ignore[union-attr]

    empty = tmp_path / "empty"  # as earlier versions left it: an empty file
    empty.mkdir()
    (empty / "dagster.yaml").touch()
    assert isinstance(local_instance(empty).run_coordinator, EvalRunCoordinator)

    own = tmp_path / "own"
    own.mkdir()
    (own / "dagster.yaml").write_text("telemetry: {enabled: true}\n")
    assert not isinstance(local_instance(own).run_coordinator, EvalRunCoordinator)
    assert (own / "dagster.yaml").read_text() == "telemetry: {enabled: true}\n"


def test_a_bare_dagster_dev_shares_the_cli_instance_and_tags_its_backfill_runs(
    tmp_path: Path,
) -> None:
    # A checkout of one's own: the repository's dagster.yaml and workspace.yaml, no DAGSTER_HOME.
    shutil.copy(REPO / "dagster.yaml", tmp_path / "dagster.yaml")
    (tmp_path / "workspace.yaml").write_text(
        "load_from:\n  - python_module: {module_name: evals_pipeline.definitions}\n"
    )
    suite = write_suite(tmp_path, [("greets", "hello"), ("waves", "wave")])
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env |= {"EVALS_PIPELINE_SUITES": str(suite), "EVALS_PIPELINE_STORAGE": str(tmp_path / "s")}
    # The CLI registers the cases in .evals/dagster, as `make run` would ...
    cli_env = {**env, "DAGSTER_HOME": str(tmp_path / ".evals" / "dagster")}
    subprocess.run(
        [str(BIN / "evals-pipeline"), "register", str(suite)],
        cwd=tmp_path,
        env=cli_env,
        check=True,
        timeout=120,
    )
    # ... and the bare dagster dev sees them: one instance, not a temporary one.
    with dagster_dev(["-w", "workspace.yaml"], tmp_path, env, tmp_path / "dev.log") as port:
        data = graphql(port, INSTANCE)
        queue = data["instance"]["runQueueConfig"]
        assert queue["maxConcurrentRuns"] == 4
        assert "evals/agent" in queue["tagConcurrencyLimitsYaml"]
        pools = data["instance"]["poolConfig"]
        assert (pools["poolGranularity"], pools["defaultPoolLimit"]) == ("run", 1)
        dims = data["assetNodeOrError"]["partitionKeysByDimension"]
        assert {d["name"]: d["partitionKeys"] for d in dims}["case"] == ["greets", "waves"]

        # A case is the suite's to add: the dialog's "Add partition" is refused with the fix.
        repository = data["assetNodeOrError"]["repository"]
        selector = {
            "repositoryName": repository["name"],
            "repositoryLocationName": repository["location"]["name"],
        }
        added = graphql(
            port, ADD_PARTITION, {"repo": selector, "name": "demo__cases", "key": "greetz"}
        )["addDynamicPartition"]
        assert added["__typename"] == "PythonError", added
        assert "'greetz' not added" in added["message"]
        assert "demo_cases sensor registers it" in added["message"]
        dims = graphql(port, INSTANCE)["assetNodeOrError"]["partitionKeysByDimension"]
        assert {d["name"]: d["partitionKeys"] for d in dims}["case"] == ["greets", "waves"]

        launched = backfill(
            port,
            ["echo|greets", "echo|waves"],
            [["demo", n] for n in ("cases", "agent_runs")],
            BACKFILL_TIMEOUT_SECONDS,
        )
        runs = run_tags(port, {"tags": [{"key": "dagster/backfill", "value": launched}]})
    assert runs, "the backfill launched no run"
    for tags in runs:
        assert tags["evals/suite"] == "demo"
        assert (tags["evals/agent"], tags["evals/agents"]) == ("echo", "echo")
        # Its worker was forked from the daemon's warm server, not spawned by the code server.
        assert "evals/run_worker" in tags and "dagster/grpc_info" not in tags
    assert (tmp_path / ".evals" / "dagster" / "history" / "runs.db").exists()
    assert not list(tmp_path.glob(".tmp_dagster_home_*")), "the temporary home is removed"


# The daemon's backfill loop, run for one pass as `dagster-daemon run` runs it: the instance is
# loaded, its run queue built (for the daemons it requires), then the loop starts.
BACKFILL_PASS = """
import logging, sys, threading
from pathlib import Path
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._daemon.backfill import execute_backfill_iteration_loop
from evals_pipeline.instance.local import local_instance

class Pause(threading.Event):
    seconds: list[float] = []
    def wait(self, timeout=None):  # the loop's pause after a pass; ends the loop
        self.seconds.append(timeout)
        return True

instance = local_instance(Path(sys.argv[1]))
instance.get_required_daemon_types()
with WorkspaceProcessContext(instance, None) as context:
    for _ in execute_backfill_iteration_loop(context, logging.getLogger("backfill"), Pause()):
        if Pause.seconds:
            break
print(Pause.seconds[0])
"""


def backfill_pause(home: Path) -> float:
    """The pause of the real backfill daemon loop after a pass with nothing to do, on `home`."""
    done = subprocess.run(
        [str(BIN / "python"), "-c", BACKFILL_PASS, str(home)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return float(done.stdout)


def test_the_backfill_daemon_looks_at_backfills_every_second(tmp_path: Path) -> None:
    assert 0 <= backfill_pause(tmp_path / "shipped") <= 1
    # A home with its own settings keeps Dagster's 30 s loop.
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "dagster.yaml").write_text("telemetry: {enabled: false}\n")
    assert backfill_pause(tmp_path / "own") > 20


def test_the_queue_daemon_looks_for_runs_every_half_second(
    tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    def daemon_interval(home: Path) -> float:
        """The loop of the queue's daemon as Dagster's daemon process builds it."""
        daemon = create_daemon_of_type(
            QueuedRunCoordinatorDaemon.daemon_type(), local_instance(home)
        )
        assert isinstance(daemon, QueuedRunCoordinatorDaemon)
        return float(daemon.interval_seconds)

    assert daemon_interval(tmp_path / "shipped") == 0.5
    # Whole seconds, as Dagster's own queue takes them, an environment variable as its
    # IntSource does, and Dagster's default without the key.
    monkeypatch.setenv("EVALS_TEST_DEQUEUE", "0.25")
    written = {
        "{dequeue_interval_seconds: 3}": 3.0,
        "{dequeue_interval_seconds: {env: EVALS_TEST_DEQUEUE}}": 0.25,
        "{}": 5.0,
    }
    for config, seconds in written.items():
        home = tmp_path / str(seconds)
        home.mkdir()
        (home / "dagster.yaml").write_text(
            "run_coordinator: {module: evals_pipeline.instance.run_coordinator, "
            f"class: EvalRunCoordinator, config: {config}}}\n"
        )
        assert daemon_interval(home) == seconds
    monkeypatch.setenv("EVALS_TEST_DEQUEUE", "soon")
    with pytest.raises(DagsterInvalidConfigError, match=r"EVALS_TEST_DEQUEUE\" is not a number"):
        daemon_interval(tmp_path / "0.25")
    # A loop that never waits would take a core.
    (tmp_path / "3.0" / "dagster.yaml").write_text(
        (tmp_path / "3.0" / "dagster.yaml").read_text().replace(": 3}", ": 0}")
    )
    with pytest.raises(DagsterInvalidConfigError, match="must be more than 0 seconds"):
        daemon_interval(tmp_path / "3.0")


def test_a_home_written_before_instance_moved_out_of_defs_still_opens(tmp_path: Path) -> None:
    """Homes set up by earlier releases name the instance's classes under evals_pipeline.defs."""
    from evals_pipeline.instance.run_launcher import WarmRunLauncher

    (tmp_path / "dagster.yaml").write_text(
        "run_coordinator: {module: evals_pipeline.defs.run_tags, class: EvalRunCoordinator,"
        " config: {dequeue_interval_seconds: 0.5}}\n"
        "run_launcher: {module: evals_pipeline.defs.run_launcher, class: WarmRunLauncher}\n"
        "event_log_storage: {module: evals_pipeline.defs.event_storage,"
        f" class: BatchingSqliteEventLogStorage, config: {{base_dir: {tmp_path / 'runs'}}}}}\n"
    )
    with local_instance(tmp_path) as instance:
        assert isinstance(instance.run_coordinator, EvalRunCoordinator)
        assert instance.run_coordinator.dequeue_interval_seconds == 0.5
        assert isinstance(instance.run_launcher, WarmRunLauncher)
        assert isinstance(instance.event_log_storage, BatchingSqliteEventLogStorage)


def test_the_production_example_is_a_valid_instance_config(monkeypatch: MonkeyPatch) -> None:
    for name in ("HOST", "USERNAME", "PASSWORD", "DB"):
        monkeypatch.setenv(f"DAGSTER_PG_{name}", "evals")
    monkeypatch.setenv("DAGSTER_PG_PORT", "5432")
    config = yaml.safe_load((REPO / "deploy" / "dagster.postgres.yaml").read_text())
    result = process_config(dg.Shape(dagster_instance_config_schema()), config)
    assert result.success, result.errors
    assert config["run_coordinator"]["class"] == EvalRunCoordinator.__name__
    assert config["instance_class"]["class"] == EvalInstance.__name__
    limits = config["concurrency"]["runs"]["tag_concurrency_limits"]
    assert {limit["key"] for limit in limits} == {"evals/agent", "evals/suite"}


def test_cli_runs_carry_the_suite_and_agent_tags(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [("greets", "hello")])
    done = cli("run", str(suite), "--target", "echo", home=tmp_path)
    assert done.code == 0, done.explain()
    both = cli("run", str(suite), home=tmp_path)
    assert both.code in (0, 1), both.explain()  # `silent` fails its case on purpose
    instance = dg.DagsterInstance.from_config(str(tmp_path / "dagster"))
    runs = instance.get_runs()
    assert runs and all(run.tags.get("evals/suite") == "demo" for run in runs)
    layers = [r.tags for r in runs if "dagster/asset_partition_range_start" in r.tags]
    assert sorted(t["evals/agents"] for t in layers) == ["echo", "echo,silent"]
    assert sorted(t.get("evals/agent", "-") for t in layers) == ["-", "echo"]

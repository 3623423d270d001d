"""A backfill of some cases launched as the Dagster UI launches it: a real `dagster dev` (webserver
and daemon) and its GraphQL API. Three of the batch example's five cases are backfilled; the
batch runner runs once and exactly those three are graded; the UI then shows the failing one's
verdict and score on its partition, and its `case_passes` check failed."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.dagster_dev import LAUNCH, STATUS
from evals_pipeline_tests.defs.conftest import REPO
from evals_pipeline_tests.defs.test_batch_screening import copy_example
from evals_pipeline_tests.executor_passes import workers_with

BIN = Path(sys.executable).parent
LAYERS = ("cases", "agent_runs", "sessions", "grades")
CHOSEN = ("watch-list-origin", "exact-threshold", "near-threshold")  # neighbours; the last fails
START_TIMEOUT_SECONDS = 180
BACKFILL_TIMEOUT_SECONDS = 300


PARTITION = """
query Partition($path: [String!]!, $partition: String!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode {
      latestMaterializationByPartition(partitions: [$partition]) {
        partition
        metadataEntries {
          label
          ... on TextMetadataEntry { text }
          ... on FloatMetadataEntry { floatValue }
          ... on IntMetadataEntry { intValue }
        }
      }
    }
  }
  assetCheckExecutions(
    assetKey: {path: $path}, checkName: "case_passes", partition: $partition, limit: 1
  ) {
    status
    partition
    evaluation {
      success
      severity
      description
      targetMaterialization { runId }
      metadataEntries { label ... on TextMetadataEntry { text } }
    }
  }
}"""

MATERIALIZED = """
query Materialized($path: [String!]!) {
  assetNodeOrError(assetKey: {path: $path}) {
    ... on AssetNode { partitionStats { numMaterialized } }
  }
}"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _graphql(port: int, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body: dict[str, Any] = json.load(response)
    assert "errors" not in body, body
    return body["data"]


@pytest.fixture(scope="module")
def dagster_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path, Path, Path]]:
    """`dagster dev` serving the copied batch example: (port, eval file, runner log, storage)."""
    tmp_path = tmp_path_factory.mktemp("ui")
    suite, log = copy_example(tmp_path)
    home, storage = tmp_path / "dagster", tmp_path / "storage"
    home.mkdir()
    (home / "dagster.yaml").touch()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EVALS_PIPELINE_SUITES": str(suite),
        "EVALS_PIPELINE_STORAGE": str(storage),
        WRITABLE_VAR: str(log.parent),  # the runner logs in the sandbox
    }
    with workers_with(env) as env:
        yield from _serving(tmp_path, suite, log, storage, env)


def _serving(
    tmp_path: Path, suite: Path, log: Path, storage: Path, env: dict[str, str]
) -> Iterator[tuple[int, Path, Path, Path]]:
    """The suite registered, then `dagster dev` on a free port until the generator ends."""
    subprocess.run(
        [str(BIN / "evals-pipeline"), "register", str(suite)], env=env, check=True, timeout=120
    )
    port = _free_port()
    command = [str(BIN / "dagster"), "dev", "-w", str(REPO / "workspace.yaml")]
    server = subprocess.Popen(
        [*command, "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=(tmp_path / "dagster-dev.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            try:
                _graphql(port, "{ version }", {})
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "dagster dev did not start:\n" + (tmp_path / "dagster-dev.log").read_text()
                    )
                time.sleep(1)
        yield port, suite, log, storage
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.fixture(scope="module")
def backfilled(dagster_dev: tuple[int, Path, Path, Path]) -> tuple[int, Path, Path, Path]:
    """The chosen cases backfilled through the layers, as the UI's "Materialize" launches it."""
    port = dagster_dev[0]
    params = {
        "partitionNames": [f"screener|{case}" for case in CHOSEN],
        "assetSelection": [{"path": ["batch_screening", layer]} for layer in LAYERS],
        "fromFailure": False,
    }
    launched = _graphql(port, LAUNCH, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    deadline = time.monotonic() + BACKFILL_TIMEOUT_SECONDS
    status = ""
    while time.monotonic() < deadline:
        backfill = _graphql(port, STATUS, {"id": launched["backfillId"]})
        status = backfill["partitionBackfillOrError"]["status"]
        if status not in ("REQUESTED", "IN_PROGRESS"):
            break
        time.sleep(2)
    assert status in ("COMPLETED", "COMPLETED_SUCCESS"), status
    return dagster_dev


def test_a_ui_backfill_of_three_cases_runs_the_batch_once_and_grades_those(
    backfilled: tuple[int, Path, Path, Path],
) -> None:
    port, suite, log, storage = backfilled
    # One batch invocation read the whole eval file; only the chosen cases were graded.
    assert log.read_text().splitlines() == [str(suite)]
    graded = _graphql(port, MATERIALIZED, {"path": ["batch_screening", "grades"]})
    assert graded["assetNodeOrError"]["partitionStats"]["numMaterialized"] == len(CHOSEN)
    trials = (storage / "batch_screening" / "agent_runs").glob("*/screener/*/trial-0")
    runs = {p.parent.name for p in trials if not p.parent.name.startswith(".")}
    assert runs == set(CHOSEN)


def test_the_failing_partition_shows_its_verdict_and_score_and_its_check_failed(
    backfilled: tuple[int, Path, Path, Path],
) -> None:
    port = backfilled[0]
    partition = "screener|near-threshold"
    path = ["batch_screening", "grades"]
    data = _graphql(port, PARTITION, {"path": path, "partition": partition})
    [materialization] = data["assetNodeOrError"]["latestMaterializationByPartition"]
    assert materialization["partition"] == partition
    shown = {
        e["label"]: e.get("text", e.get("floatValue", e.get("intValue")))
        for e in materialization["metadataEntries"]
    }
    assert shown["verdict"] == "fail"
    assert 0 <= shown["score"] < shown["threshold"]
    assert shown["reason"].startswith(f"score {shown['score']:.2f} < ")
    assert shown["dagster/row_count"] == 1 and "duration_s" in shown

    [execution] = data["assetCheckExecutions"]
    assert (execution["status"], execution["partition"]) == ("FAILED", partition)
    evaluation = execution["evaluation"]
    assert (evaluation["success"], evaluation["severity"]) == (False, "ERROR")
    assert evaluation["description"] == shown["reason"]
    assert evaluation["targetMaterialization"] is not None
    reason = {e["label"]: e.get("text") for e in evaluation["metadataEntries"]}["reason"]
    assert reason == shown["reason"]

    passing = _graphql(port, PARTITION, {"path": path, "partition": "screener|exact-threshold"})
    [passed] = passing["assetCheckExecutions"]
    assert (passed["status"], passed["evaluation"]["success"]) == ("SUCCEEDED", True)

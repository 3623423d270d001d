"""A real `dagster dev` (webserver and daemon) on 127.0.0.1 and its GraphQL API, for the tests
and the benchmarks (benchmarks/daemon.py, which run without pytest installed)."""

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
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
START_TIMEOUT_SECONDS = 180

RUNS = """
query Runs($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId status tags { key value } } }
  }
}"""


LAUNCH = """
mutation Launch($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}"""

STATUS = """
query Status($id: String!) {
  partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { status } }
}"""


def backfill(port: int, partitions: list[str], assets: list[list[str]], timeout: float) -> str:
    """Launch a backfill of `partitions` of `assets` as the UI does; its id once it has ended
    (the test fails when it did not complete within `timeout` seconds)."""
    params = {
        "partitionNames": partitions,
        "assetSelection": [{"path": path} for path in assets],
        "fromFailure": False,
    }
    launched = graphql(port, LAUNCH, {"params": params})["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    backfill_id = str(launched["backfillId"])
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = graphql(port, STATUS, {"id": backfill_id})["partitionBackfillOrError"]["status"]
        if status not in ("REQUESTED", "IN_PROGRESS"):
            break
        time.sleep(2)
    assert status in ("COMPLETED", "COMPLETED_SUCCESS"), status
    return backfill_id


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def graphql(port: int, query: str, variables: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The `data` of a GraphQL query; fails the test on a GraphQL error. A result that is a
    PythonError comes with HTTP status 500, and is returned as the UI reads it."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": dict(variables or {})}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body: dict[str, Any] = json.load(response)
    except urllib.error.HTTPError as failed:
        if failed.code != 500:
            raise
        body = json.load(failed)
    assert "errors" not in body, body
    return body["data"]


def run_tags(port: int, run_filter: Mapping[str, Any]) -> list[dict[str, str]]:
    """The tags of each run the filter selects that has been submitted (a run is created, then
    submitted to the run queue, which tags it), newest first."""
    data = graphql(port, RUNS, {"filter": dict(run_filter)})
    return [
        {t["key"]: t["value"] for t in r["tags"]}
        for r in data["runsOrError"]["results"]
        if r["status"] != "NOT_STARTED"
    ]


@contextmanager
def dagster_dev(args: list[str], cwd: Path, env: Mapping[str, str], log: Path) -> Iterator[int]:
    """`dagster dev ARGS` started in `cwd`, serving on a free port (yielded); stopped after."""
    port = free_port()
    command = [str(BIN / "dagster"), "dev", *args, "-h", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(
        command,
        cwd=cwd,
        env=dict(env),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            try:
                graphql(port, "{ version }")
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("dagster dev did not start:\n" + log.read_text()) from None
                time.sleep(1)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

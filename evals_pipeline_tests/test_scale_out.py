"""The quickstart suite on the engines a deployment runs: the Dagster instance on a real
PostgreSQL, then the steps on two celery workers (Redis broker) with the storage root on an
S3-compatible server, each worker in its own working folder, so no step can read another's disk.
Each run's per-case results (verdicts, scores, errors, tokens, every grader's score) must equal
the embedded run's (sqlite instance, in-process executor, a local folder).

The servers are real (evals_pipeline_tests/servers.py starts them on 127.0.0.1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import dagster as dg
import psycopg2
import pyarrow.parquet as pq
import pytest
from dagster_postgres import PostgresRunStorage

from evals_pipeline.defs.executor import BROKER_ENV, EXECUTOR_ENV
from evals_pipeline.defs.io_manager import latest_uris
from evals_pipeline.instance.local import local_instance
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.storage.records import read_records
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline_tests.servers import S3, Postgres, Redis, running_celery_worker
from evals_pipeline_tests.test_cli import QUICKSTART, Done

SUITE = QUICKSTART / "quickstart.eval.yaml"
# What a case's result is, beyond its timing: compared field by field across engines.
CASE_FIELDS = [
    "verdict",
    "score",
    "execution_status",
    "failure_stage",
    "error",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "llm_calls",
    "tool_calls_json",
]
GRADER_FIELDS = ["type", "score", "verdict", "weight", "error"]
# Graders whose evidence is a measured time ("took 12 ms"): their verdicts compare, not that.
TIMED_GRADERS = {"latency"}


def run_quickstart(home: Path, env: dict[str, str] | None = None) -> tuple[Done, Path]:
    """`evals-pipeline run` of the quickstart in a child process; its result and report folder."""
    full_env = {
        **os.environ,
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(SUITE)],
        env=full_env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=600,
    )
    result = Done(done.returncode, done.stdout, done.stderr)
    # Exit 1: some quickstart cases fail on purpose (as `make run` says).
    assert result.code == 1, result.explain()
    found = re.search(r"^report: (.+)/summary\.md$", result.stdout, re.M)
    assert found, result.explain()
    return result, Path(found.group(1))


def case_results(folder: Path) -> dict[str, Any]:
    """Every case x agent's result and every grader's, by key; what two engines must agree on."""
    cases = pq.read_table(folder / "cases.parquet").to_pylist()
    graders = pq.read_table(folder / "graders.parquet").to_pylist()
    return {
        "cases": {(r["case_key"], r["agent"]): {f: r[f] for f in CASE_FIELDS} for r in cases},
        "graders": {
            (r["case_key"], r["agent"], r["trial"], r["grader"]): {
                **{f: r[f] for f in GRADER_FIELDS},
                "assertions": grader_assertions(r),
            }
            for r in graders
        },
    }


def grader_assertions(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A grader's assertion lines, without the evidence of the timed ones."""
    lines = json.loads(row["assertions_json"] or "[]")
    if row["type"] in TIMED_GRADERS:
        return [{k: v for k, v in line.items() if k != "evidence"} for line in lines]
    return list(lines)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The quickstart's results on the embedded defaults: sqlite instance, in-process."""
    _, folder = run_quickstart(tmp_path_factory.mktemp("embedded"))
    results = case_results(folder)
    # The suite is built to pass, fail and error: a comparison over it covers all three.
    verdicts = {c["verdict"] for c in results["cases"].values()}
    assert verdicts == {"pass", "fail", "error"}, verdicts
    assert len(results["cases"]) == 20, sorted(results["cases"])
    return results


def postgres_home(home: Path, server: Postgres, database: str) -> Path:
    """A DAGSTER_HOME whose dagster.yaml puts every storage on `database`."""
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True)
    (dagster_home / "dagster.yaml").write_text(
        "storage:\n"
        "  postgres:\n"
        "    postgres_db:\n"
        f"      hostname: 127.0.0.1\n"
        f"      port: {server.port}\n"
        f"      username: {server.user}\n"
        f"      db_name: {database}\n"
        # dagster-postgres drives psycopg2; SQLAlchemy 2.1's bare postgresql:// means psycopg 3.
        "      scheme: postgresql+psycopg2\n"
        # Only registration adds case partitions, on Postgres as on sqlite.
        "instance_class:\n"
        "  module: evals_pipeline.instance.registration\n"
        "  class: EvalInstance\n"
        "telemetry:\n"
        "  enabled: false\n"
    )
    return dagster_home


def stored_runs(server: Postgres, database: str) -> list[tuple[str, str]]:
    """(run id, status) of every run in the database's runs table."""
    connection = psycopg2.connect(server.url(database))
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT run_id, status FROM runs")
            return [(str(a), str(b)) for a, b in cursor.fetchall()]
    finally:
        connection.close()


def test_the_quickstart_on_a_postgres_instance_matches_the_embedded_run(
    tmp_path: Path, postgres_server: Postgres, embedded: dict[str, Any]
) -> None:
    database = postgres_server.create_database("quickstart_instance")
    dagster_home = postgres_home(tmp_path, postgres_server, database)

    done, folder = run_quickstart(tmp_path)

    assert case_results(folder) == embedded, done.explain()
    # Every run is in PostgreSQL, finished, and nothing went to a local sqlite file.
    runs = stored_runs(postgres_server, database)
    assert len(runs) >= 2 and {status for _, status in runs} == {"SUCCESS"}, runs
    assert not [p for p in dagster_home.rglob("*") if p.suffix == ".db"]
    # The locked set-up of the CLI's instance opens the configured storages, as they are.
    instance = local_instance(dagster_home)
    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert {r.run_id for r in instance.get_runs()} == {run_id for run_id, _ in runs}
    assert "postgres_db" in (dagster_home / "dagster.yaml").read_text()


def code_location_env(storage: str) -> dict[str, str]:
    """The code location's suites and storage root."""
    return {"EVALS_PIPELINE_SUITES": str(SUITE), "EVALS_PIPELINE_STORAGE": storage}


def test_two_commands_at_once_set_up_a_fresh_postgres_instance(
    tmp_path: Path, postgres_server: Postgres
) -> None:
    """Two processes opening the CLI's instance on a fresh database at once both get it, and
    a third finds it whole (the locked set-up of instance/local.py, on PostgreSQL)."""
    database = postgres_server.create_database("fresh_setup")
    dagster_home = postgres_home(tmp_path, postgres_server, database)
    code = (
        "import sys; from pathlib import Path; "
        "from evals_pipeline.instance.local import local_instance; "
        "instance = local_instance(Path(sys.argv[1])); "
        "print(type(instance.run_storage).__name__, instance.get_runs_count())"
    )

    def open_instance() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", code, str(dagster_home)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finished(process: subprocess.Popen[str]) -> None:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert out.split() == ["PostgresRunStorage", "0"], (out, err)

    together = [open_instance(), open_instance()]
    for process in together:
        finished(process)
    finished(open_instance())


@pytest.fixture
def two_workers(
    tmp_path: Path, redis_server: Redis, s3_server: S3
) -> Iterator[tuple[str, list[Path]]]:
    """Two celery workers, each in its own working folder, on a fresh Redis database and the
    storage root `s3://evals/quickstart-celery`; yields the broker URL and their logs. No worker
    process is left when the test ends."""
    broker = redis_server.url(db=1)
    # The workers get no DAGSTER_HOME: each step's task carries the instance's settings. Their
    # mirrors of the storage root are in their own working folders (.evals/storage-cache).
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(code_location_env(s3_server.url("quickstart-celery")))
    env.update(s3_server.env)
    env[BROKER_ENV] = broker
    folders = [tmp_path / "worker-a", tmp_path / "worker-b"]
    with ExitStack() as stack:
        logs = [
            stack.enter_context(running_celery_worker(folder.name, folder, env))
            for folder in folders
        ]
        yield broker, logs
    assert not processes_in(folders), "a worker process outlived its worker"


def processes_in(folders: list[Path]) -> list[str]:
    """The processes whose working folder is one of `folders` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cwd = (proc / "cwd").resolve(strict=True)
        except OSError:  # not a process, gone, or not ours to read
            continue
        if proc.name.isdigit() and any(cwd == f.resolve() for f in folders):
            found.append(
                f"{proc.name}: {(proc / 'cmdline').read_bytes().replace(bytes(1), b' ')!r}"
            )
    return found


def steps_and_workers(
    instance: dg.DagsterInstance, run_ids: list[str]
) -> tuple[set[str], dict[str, str]]:
    """The steps that succeeded in these runs, and the celery worker each step was sent to."""
    workers: dict[str, str] = {}
    steps: set[str] = set()
    for run_id in run_ids:
        for entry in instance.all_logs(run_id):
            event = entry.dagster_event
            if event is None:
                continue
            if event.is_step_success:
                steps.add(f"{run_id}:{event.step_key}")
            metadata = getattr(event.event_specific_data, "metadata", None) or {}
            if "Celery worker" in metadata:
                workers[f"{run_id}:{event.step_key}"] = str(metadata["Celery worker"].value)
    return steps, workers


def materialize_one_case(
    home: Path, dagster_home: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`dagster asset materialize` of one quickstart case's steps up to its grades, on the code
    location, as the UI launches it."""
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "dagster"),
            "asset",
            "materialize",
            "-m",
            "evals_pipeline.definitions",
            "--select",
            "quickstart/cases,quickstart/agent_runs,quickstart/sessions,quickstart/grades",
            "--partition",
            "hasty|add-numbers",
        ],
        env={
            **os.environ,
            **env,
            "DAGSTER_HOME": str(dagster_home),
        },
        cwd=home,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_quickstart_on_two_celery_workers_matches_the_embedded_run(
    tmp_path: Path,
    postgres_server: Postgres,
    two_workers: tuple[str, list[Path]],
    s3_server: S3,
    embedded: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broker, logs = two_workers
    assert len(processes_in([log.parent for log in logs])) >= 2  # both workers are up
    database = postgres_server.create_database("quickstart_celery")
    home = tmp_path / "coordinator"
    dagster_home = postgres_home(home, postgres_server, database)
    storage = s3_server.url("quickstart-celery")
    celery_env = {
        EXECUTOR_ENV: "celery",
        BROKER_ENV: broker,
        **s3_server.env,
        **code_location_env(storage),
    }

    done, folder = run_quickstart(home, celery_env)

    assert case_results(folder) == embedded, done.explain()
    assert "steps run on the celery workers" in done.stdout, done.explain()
    # Every step ran in a worker, and each worker ran some: the steps hand over through the
    # instance (PostgreSQL) and the object store, not a process's memory or a shared folder.
    instance = dg.DagsterInstance.from_config(str(dagster_home))
    run_ids = [run.run_id for run in instance.get_runs()]
    steps, workers = steps_and_workers(instance, run_ids)
    assert steps and steps <= workers.keys(), (steps, workers)
    assert {w.split("@")[0] for w in workers.values()} == {"worker-a", "worker-b"}, workers

    # A run of the code location (what the UI and `dagster asset materialize` launch) goes to
    # the workers too; they rebuild the code location from their own environment.
    materialize = materialize_one_case(home, dagster_home, celery_env)
    assert materialize.returncode == 0, materialize.stderr[-3000:]
    new_runs = [run.run_id for run in instance.get_runs() if run.run_id not in run_ids]
    assert len(new_runs) == 1
    steps, workers = steps_and_workers(instance, new_runs)
    assert steps and steps <= workers.keys(), (steps, workers)
    uri = latest_uris(instance, dg.AssetKey(["quickstart", "grades"]), ["hasty|add-numbers"])
    assert uri["hasty|add-numbers"].startswith(f"{storage}/quickstart/grades/"), uri
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    reader = StorageRoot(storage, cache=tmp_path / "reader")
    records = reader.local_path(uri["hasty|add-numbers"])
    assert reader.fetch_file(records)
    grade = CaseGrade.model_validate_json(
        next(text for _, text in read_records(records, {"hasty|add-numbers"}, reader.fetch_file))
    )
    assert grade.verdict == embedded["cases"][("add-numbers", "hasty")]["verdict"] == "fail"
    # The stored records name paths relative to the root, never a worker's folder.
    sessions = latest_uris(instance, dg.AssetKey(["quickstart", "sessions"]), ["hasty|add-numbers"])
    session_records = reader.local_path(sessions["hasty|add-numbers"])
    assert reader.fetch_file(session_records)
    stored = "".join(text for _, text in read_records(session_records, None, reader.fetch_file))
    assert '"messages_path":"quickstart/sessions/' in stored and str(tmp_path) not in stored
    assert not (home / "storage").exists()  # nothing went to a local storage folder
    for log in logs:
        assert "Traceback" not in log.read_text(), log.read_text()

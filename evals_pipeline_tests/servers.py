"""Real PostgreSQL and Redis servers on 127.0.0.1 for the scale-out tests, started by the tests
from Debian's packages (`make servers` installs them), and an S3-compatible server (moto's server
mode, a dev dependency from PyPI); all stopped at the end of the session.

PostgreSQL refuses to run as root, so as root it runs as the `postgres` user the Debian package
creates, with its data folder in a fresh temporary folder. A server that cannot start fails the
test with the reason and the fix; nothing is skipped.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

HOST = "127.0.0.1"
START_TIMEOUT_SECONDS = 60
STOP_TIMEOUT_SECONDS = 30
INSTALL_HINT = "run `make servers` (as root it runs apt-get install -y postgresql redis-server)"


@dataclass(frozen=True)
class Postgres:
    """A running PostgreSQL server: connect as `user` (no password, loopback only)."""

    port: int
    user: str

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@{HOST}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new, empty database (for one test's Dagster instance); returns its name."""
        import psycopg2

        connection = psycopg2.connect(self.url("postgres"))
        try:
            connection.autocommit = True  # CREATE DATABASE cannot run in a transaction
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            connection.close()
        return name


@dataclass(frozen=True)
class Redis:
    port: int

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"


@dataclass(frozen=True)
class S3:
    """A running S3-compatible server with one empty bucket; `env` is what a client needs."""

    port: int
    bucket: str

    @property
    def endpoint(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """AWS's standard variables, as a deployment sets them (pyarrow.fs reads them)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "evals-test",
            "AWS_SECRET_ACCESS_KEY": "evals-test-secret",
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def url(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"


def free_port() -> int:
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def find_program(name: str) -> str:
    """A server program from Debian's packages (PostgreSQL's live under
    /usr/lib/postgresql/<version>/bin), or fail with how to install it."""
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    if found is None:
        pytest.fail(f"{name} is not installed: {INSTALL_HINT}")
    return found


@contextmanager
def server_process(
    argv: list[str],
    log: Path,
    *,
    user: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """`argv` in its own process group, its output in `log`; stopped (SIGTERM, then SIGKILL of
    the whole group) when the block ends, whatever happens in it."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            user=user,
            cwd=cwd,
            env=env,
        )
    try:
        yield process
    finally:
        stop_process_group(process)


def stop_process_group(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Stop `process` and everything in its process group; SIGKILL what ignores `sig`."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_TIMEOUT_SECONDS)
    with suppress(ProcessLookupError):  # children left in the group (a server's helpers) go too
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def wait_until_ready(
    process: subprocess.Popen[bytes], log: Path, what: str, ready: Callable[[], bool]
) -> None:
    """Poll `ready()` until it returns true; fail with the server's log if it exits or stalls."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    error = ""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode}:\n{tail(log)}")
        try:
            if ready():
                return
        except Exception as exc:  # not up yet: connection refused and the like
            error = str(exc)
        time.sleep(0.2)
    pytest.fail(f"{what} did not answer within {START_TIMEOUT_SECONDS} s ({error}):\n{tail(log)}")


def tail(log: Path, lines: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""


def _run_as(user: str | None) -> str | None:
    """Who PostgreSQL runs as: itself when not root; as root, the `postgres` user."""
    if os.geteuid() != 0:
        return None
    try:
        import pwd

        pwd.getpwnam(user or "postgres")
    except KeyError:
        pytest.fail(
            f"PostgreSQL cannot run as root and there is no `postgres` user: {INSTALL_HINT}"
        )
    return user or "postgres"


@contextmanager
def running_postgres() -> Iterator[Postgres]:
    """A fresh PostgreSQL cluster on a free loopback port (trust auth, no Unix socket)."""
    initdb, postgres = find_program("initdb"), find_program("postgres")
    user = _run_as(None)
    # Not under pytest's tmp folder: its parents are private to root, and postgres is not root.
    folder = Path(tempfile.mkdtemp(prefix="evals-pg-"))
    try:
        data, log = folder / "data", folder / "postgres.log"
        if user is not None:
            shutil.chown(folder, user)
        db_user = user or "postgres"
        init = subprocess.run(
            [initdb, "-D", str(data), "-U", db_user, "--auth=trust", "-E", "UTF8", "--no-sync"],
            user=user,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if init.returncode != 0:
            pytest.fail(f"initdb failed ({init.returncode}):\n{init.stdout}\n{init.stderr}")
        port = free_port()
        argv = [
            postgres,
            "-D",
            str(data),
            "-p",
            str(port),
            "-c",
            f"listen_addresses={HOST}",
            "-c",
            "unix_socket_directories=",
            "-c",
            "fsync=off",  # a throwaway cluster: speed over durability
            "-c",
            "max_connections=200",
        ]
        with server_process(argv, log, user=user, cwd=folder) as process:
            server = Postgres(port=port, user=db_user)

            def ready() -> bool:
                import psycopg2

                psycopg2.connect(server.url("postgres"), connect_timeout=2).close()
                return True

            wait_until_ready(process, log, f"postgres on {HOST}:{port}", ready)
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_redis() -> Iterator[Redis]:
    """A Redis server on a free loopback port, nothing persisted."""
    program = find_program("redis-server")
    folder = Path(tempfile.mkdtemp(prefix="evals-redis-"))
    try:
        port = free_port()
        argv = [
            program,
            "--bind",
            HOST,
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ]
        log = folder / "redis.log"
        with server_process(argv, log, cwd=folder) as process:
            server = Redis(port=port)

            def ready() -> bool:
                import redis

                return bool(redis.Redis(host=HOST, port=port, socket_timeout=2).ping())

            wait_until_ready(process, log, f"redis-server on {HOST}:{port}", ready)
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def running_s3() -> Iterator[S3]:
    """moto's S3-compatible server on a free loopback port, with the bucket `evals`."""
    import sys

    folder = Path(tempfile.mkdtemp(prefix="evals-s3-"))
    try:
        port = free_port()
        argv = [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)]
        log = folder / "s3.log"
        server = S3(port=port, bucket="evals")
        with server_process(argv, log, cwd=folder) as process:

            def ready() -> bool:
                with socket.create_connection((HOST, port), timeout=2):
                    return True

            wait_until_ready(process, log, f"moto S3 server on {HOST}:{port}", ready)
            import pyarrow.fs as pafs

            pafs.S3FileSystem(
                endpoint_override=server.endpoint,
                access_key=server.env["AWS_ACCESS_KEY_ID"],
                secret_key=server.env["AWS_SECRET_ACCESS_KEY"],
                region="us-east-1",
                allow_bucket_creation=True,
            ).create_dir(server.bucket)
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3]:
    """One S3-compatible server per test session (per xdist worker); tests use own prefixes."""
    with running_s3() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Postgres]:
    """One PostgreSQL per test session (per xdist worker); tests create their own databases.
    Used by name: evals_pipeline_tests/conftest.py registers this module as a plugin."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Redis]:
    """One Redis per test session (per xdist worker); tests pick their own database number."""
    with running_redis() as server:
        yield server


@contextmanager
def running_celery_worker(name: str, folder: Path, env: dict[str, str]) -> Iterator[Path]:
    """One `celery worker` of evals-pipeline's celery app (defs/celery_app.py), concurrency 1,
    working in `folder` (its own), until the block ends; yields its log file."""
    import sys

    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "worker.log"
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evals_pipeline.defs.celery_app",
        "worker",
        "--concurrency",
        "1",
        "--loglevel",
        "INFO",
        "--hostname",
        f"{name}@%h",
        "--without-gossip",
        "--without-mingle",
    ]
    with server_process(argv, log, cwd=folder, env=env) as process:
        wait_until_ready(process, log, f"celery worker {name}", lambda: " ready." in tail(log))
        yield log

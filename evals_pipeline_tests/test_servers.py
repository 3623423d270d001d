"""The test servers of servers.py: a missing one fails with the fix, never skips; a running one
answers on 127.0.0.1 and leaves no process behind when stopped."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg2
import pyarrow.fs as pafs
import pytest
import redis

from evals_pipeline_tests.servers import (
    HOST,
    find_program,
    running_postgres,
    running_redis,
    running_s3,
)


def test_a_missing_server_program_fails_with_the_fix() -> None:
    with pytest.raises(
        pytest.fail.Exception, match=r"no-such-server is not installed: run `make servers`"
    ):
        find_program("no-such-server")


def test_postgres_and_redis_start_answer_and_stop_whole() -> None:
    with running_postgres() as postgres, running_redis() as server:
        database = postgres.create_database("smoke")
        connection = psycopg2.connect(postgres.url(database))
        with connection.cursor() as cursor:
            cursor.execute("SELECT inet_server_addr()::text")
            assert cursor.fetchone() == (f"{HOST}/32",)
        connection.close()
        client = redis.Redis(host=HOST, port=server.port)
        assert client.set("k", "v") and client.get("k") == b"v"
        pids = server_pids(postgres.port, server.port)
        assert len(pids) >= 4  # postmaster, its helpers, redis-server
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def test_the_s3_server_starts_with_its_bucket_and_stops_whole() -> None:
    with running_s3() as server:
        fs = pafs.S3FileSystem(
            endpoint_override=server.endpoint,
            access_key=server.env["AWS_ACCESS_KEY_ID"],
            secret_key=server.env["AWS_SECRET_ACCESS_KEY"],
            region=server.env["AWS_REGION"],
        )
        with fs.open_output_stream(f"{server.bucket}/k") as out:
            out.write(b"v")
        assert fs.open_input_stream(f"{server.bucket}/k").read() == b"v"
        pids = server_pids(server.port)
        assert pids
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def server_pids(*ports: int) -> list[int]:
    """The server processes started with one of `ports` on their command line, and their
    children (PostgreSQL's checkpointer, writers and the like)."""
    found: list[int] = []
    parents: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            text = (proc / "cmdline").read_bytes().replace(bytes(1), b" ").decode(errors="replace")
            parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if any(str(p) in text.split() or f"{HOST}:{p}" in text for p in ports):
            found.append(int(proc.name))
    assert os.getpid() not in found
    return found + [pid for pid, parent in parents.items() if parent in found]

"""Child processes: allowlisted environment, process-group timeouts, start failures as data."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from evals_pipeline.process import child_env, run_process


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" not in status.read_text()


def test_child_env_keeps_only_allowlisted_variables() -> None:
    parent = {
        "PATH": "/usr/bin",
        "HOME": "/home/x",
        "ANTHROPIC_API_KEY": "sk-secret",
        "AWS_SECRET": "s",
    }
    env = child_env({"EXTRA": "1"}, parent=parent)
    assert "ANTHROPIC_API_KEY" not in env and "AWS_SECRET" not in env
    assert env["HOME"] == "/home/x" and env["EXTRA"] == "1"
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)


def test_secret_in_parent_environment_does_not_reach_the_child(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    result = run_process(["env"], cwd=tmp_path, env=child_env(), timeout_seconds=10)
    assert result.exit_code == 0
    assert b"sk-do-not-leak" not in result.stdout
    assert b"PATH=" in result.stdout


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait"
    started = time.monotonic()
    result = run_process(["bash", "-c", script], cwd=tmp_path, env=child_env(), timeout_seconds=1)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 30
    recorded = [int(p) for p in pids.read_text().split()]
    assert len(recorded) == 2
    assert not any(_alive(pid) for pid in recorded)


def test_a_background_child_left_by_a_finished_leader_is_gone_on_return(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    result = run_process(
        ["bash", "-c", f"sleep 300 >/dev/null 2>&1 & echo $! >> {pids}; exit 0"],
        cwd=tmp_path,
        env=child_env(),
        timeout_seconds=30,
    )
    assert result.exit_code == 0 and not result.timed_out
    assert not _alive(int(pids.read_text()))


def test_stdout_streams_to_a_file_and_stderr_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    result = run_process(
        "echo out; echo err >&2; exit 3",
        cwd=tmp_path,
        env=child_env(),
        timeout_seconds=10,
        stdout_path=out,
    )
    assert result.exit_code == 3
    assert out.read_text() == "out\n"
    assert result.stderr == "err\n"


def test_a_command_that_cannot_start_is_an_error_not_an_exception(tmp_path: Path) -> None:
    result = run_process(["/no/such/binary"], cwd=tmp_path, env=child_env(), timeout_seconds=5)
    assert result.error is not None and "/no/such/binary" in result.error
    assert result.exit_code is None

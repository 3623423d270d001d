"""Child processes: allowlisted environment, timeouts that end everything a child started (setsid
escapees too), children of a SIGKILLed runner swept, start failures as data."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evals_pipeline.process import (
    ENV_ALLOWLIST,
    NETWORK_ENV,
    child_env,
    run_process,
    stderr_reason,
)
from evals_pipeline.reaping import proc_table
from evals_pipeline.reaping.ledger import STATE_DIR_VAR, sweep_leftovers
from evals_pipeline.reaping.owner import OWNER_VAR, TOKEN_VAR
from evals_pipeline.reaping.proc_table import NewerStats, all_pids, environ_value
from evals_pipeline.secrets import is_secret_name


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


def test_tls_proxy_and_index_variables_reach_the_child_and_no_secret_does() -> None:
    parent = {
        "SSL_CERT_FILE": "/etc/corp/ca.pem",
        "NODE_EXTRA_CA_CERTS": "/etc/corp/ca.pem",
        "https_proxy": "http://proxy.corp:3128",
        "HTTPS_PROXY": "http://proxy.corp:3128",
        "no_proxy": "localhost,127.0.0.1",
        "PIP_INDEX_URL": "https://pypi.corp/simple",
        "UV_DEFAULT_INDEX": "https://pypi.corp/simple",
        "npm_config_registry": "https://npm.corp/",
        "BUN_CONFIG_REGISTRY": "https://npm.corp/",
        "NPM_TOKEN": "npm_0123456789",
        "npm_config__authToken": "npm_0123456789",
        "UV_INDEX_CORP_PASSWORD": "hunter2hunter2",
    }
    env = child_env(parent=parent)
    passed = {k for k in parent if "TOKEN" not in k.upper() and "PASSWORD" not in k}
    assert {k: env[k] for k in passed} == {k: parent[k] for k in passed}
    assert not {"NPM_TOKEN", "npm_config__authToken", "UV_INDEX_CORP_PASSWORD"} & set(env)
    # No allowlisted name is one the redactor takes for a secret's.
    assert not [name for name in (*ENV_ALLOWLIST, *NETWORK_ENV) if is_secret_name(name)]


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


def _wait_for_pids(path: Path, count: int, limit_seconds: float = 30) -> list[int]:
    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().split()) >= count:
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never listed {count} pids")


def _marked(token_prefix: str) -> list[int]:
    """Processes whose environment carries a marker value starting with `token_prefix`."""
    found = []
    for pid in all_pids():
        value = environ_value(pid, TOKEN_VAR.encode()) or environ_value(pid, OWNER_VAR.encode())
        if value is not None and value.decode().startswith(token_prefix) and _alive(pid):
            found.append(pid)
    return found


def test_a_setsid_child_holding_stdout_does_not_hang_a_finished_leader(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # The escapee keeps the stdout pipe open: a plain communicate() would wait 600 s.
    script = f"setsid sleep 600 & echo $! >> {pids}; echo done"
    result = run_process(["bash", "-c", script], cwd=tmp_path, env=child_env(), timeout_seconds=60)
    assert result.exit_code == 0 and not result.timed_out
    assert result.stdout == b"done\n"
    assert result.duration_ms < 30_000
    assert not _alive(int(pids.read_text()))


def test_a_setsid_child_of_a_hung_leader_dies_at_the_timeout(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"setsid sleep 600 & echo $! >> {pids}; echo $$ >> {pids}; sleep 600"
    result = run_process(["bash", "-c", script], cwd=tmp_path, env=child_env(), timeout_seconds=2)
    assert result.timed_out and result.exit_code is None
    assert result.duration_ms < 2_000 + 30_000
    recorded = [int(p) for p in pids.read_text().split()]
    assert len(recorded) == 2 and not any(_alive(pid) for pid in recorded)
    assert _marked(f"{os.getpid()}-") == []


def test_a_child_that_daemonizes_twice_is_found_by_its_marker(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # The grandchild's parent exits at once: it is re-parented (to us, the subreaper) and in its
    # own session, so neither the group nor the leader's tree holds it any more.
    daemon = f"(setsid bash -c 'sleep 600 & echo $! >> {pids}' &) ; sleep 600"
    result = run_process(["bash", "-c", daemon], cwd=tmp_path, env=child_env(), timeout_seconds=2)
    assert result.timed_out
    assert not _alive(_wait_for_pids(pids, 1)[0])


def _guard_of(runner_pid: int) -> int:
    """The pid of the guard process of the runner `runner_pid` (reaping/guard.py)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in all_pids():
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if (
                    b"evals_pipeline.reaping.guard" in argv
                    and f":{runner_pid}:".encode() in argv[-2]
                ):
                    return pid
        time.sleep(0.05)
    raise AssertionError(f"no guard for runner {runner_pid}")


def _start_runner(tmp_path: Path, pids: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A runner process whose one child leaves an escapee and a sleep of its own; the pids of
    the escapee, the leader (bash) and the leader's sleep, once all three run."""
    agent = f"setsid sleep 600 & echo $! >> {pids}; echo $$ >> {pids}; sleep 600 & echo $! >> {pids}; wait"
    runner_code = (
        "from evals_pipeline.process import child_env, run_process\n"
        f"run_process(['bash', '-c', {agent!r}], cwd='.', env=child_env(), timeout_seconds=600)\n"
    )
    runner = subprocess.Popen([sys.executable, "-c", runner_code], cwd=tmp_path)
    return runner, _wait_for_pids(pids, 3)


def _wait_for_files(folder: Path, pattern: str, limit_seconds: float = 10) -> list[Path]:
    deadline = time.monotonic() + limit_seconds
    while not (found := list(folder.glob(pattern))) and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def _await_dead(pids: list[int], limit_seconds: float = 10) -> None:
    deadline = time.monotonic() + limit_seconds
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_everything_a_killed_runner_started_dies_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))
    runner, started = _start_runner(tmp_path, tmp_path / "pids")
    # The runner notes its child once Popen returns; the child may have written its pids first.
    records = _wait_for_files(tmp_path / "state" / "children", "*/*/*.json")
    assert len(records) == 1 and f'"pid":{started[1]}' in records[0].read_text()
    guard = _guard_of(runner.pid)
    runner.kill()
    runner.wait()
    _await_dead([*started, guard])  # the leader by its parent-death signal, the rest by the guard
    assert not any(map(_alive, started))
    assert not _alive(guard)
    assert _marked(f"{runner.pid}-") == []


def test_what_a_runner_and_its_guard_left_is_swept_on_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))
    runner, (escapee, leader, grandchild) = _start_runner(tmp_path, tmp_path / "pids")
    os.kill(_guard_of(runner.pid), signal.SIGKILL)  # as an OOM killer or a container stop might
    runner.kill()
    runner.wait()
    # Left behind until a sweep (checked at once: a test running beside this one may sweep).
    assert _alive(escapee) and _alive(grandchild)
    _await_dead([leader])
    assert not _alive(leader)  # its parent-death signal
    sweep_leftovers()
    assert not _alive(escapee) and not _alive(grandchild)
    assert _marked(f"{runner.pid}-") == []
    assert not list((tmp_path / "state" / "children").glob("*/*"))


def test_the_sweep_spares_children_of_a_live_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))
    pids = tmp_path / "pids"
    swept: list[int] = []
    script = f"echo $$ >> {pids}; sleep 2"
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(
            run_process, ["bash", "-c", script], cwd=tmp_path, env=child_env(), timeout_seconds=60
        )
        leader = _wait_for_pids(pids, 1)[0]
        swept = sweep_leftovers()
        result = future.result()
    assert leader not in swept
    assert result.exit_code == 0
    assert not list((tmp_path / "state" / "children").glob("*/*/*.json"))  # forgotten on exit


def test_a_trees_scan_reads_only_processes_newer_than_its_leader_until_pids_wrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real processes: one started before the leader is not read, one started after is; once
    the kernel's last pid drops (a wrap, faked here: no test can make the kernel wrap), every
    process is read again, the older one included."""
    older = subprocess.Popen(["sleep", "30"])
    leader = subprocess.Popen(["sleep", "30"])
    try:
        scans = NewerStats(leader.pid)
        newer = subprocess.Popen(["sleep", "30"])
        try:
            pids = {s.pid for s in scans.now()}
            assert newer.pid in pids or newer.pid < leader.pid  # a wrap right here reads all
            if not scans.wrapped:
                assert older.pid not in pids and leader.pid not in pids
            fake = tmp_path / "ns_last_pid"
            fake.write_text(str((scans.last or 2) - 1))
            monkeypatch.setattr(proc_table, "LAST_PID", fake)
            pids = {s.pid for s in scans.now()}
            assert scans.wrapped
            assert {older.pid, leader.pid, newer.pid} <= pids
        finally:
            newer.kill()
            newer.wait()
    finally:
        for process in (older, leader):
            process.kill()
            process.wait()


def test_a_child_is_recorded_even_when_the_state_folder_went_away_since_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner's folder of records is made once, not for every child; removed meanwhile, it
    is made again, marker and all, for the next child's record."""
    state = tmp_path / "state"
    monkeypatch.setenv(STATE_DIR_VAR, str(state))
    mine = f"{state}/children/*/*"
    # The runner records its child once Popen returns: the child waits for that.
    wait = f"for i in $(seq 250); do ls {mine}/*.json >/dev/null 2>&1 && break; sleep 0.02; done"
    look = ["sh", "-c", f"{wait}; cat {mine}/marker; echo; ls {mine}/"]
    first = run_process(look, cwd=tmp_path, env=child_env(), timeout_seconds=30)
    assert first.exit_code == 0 and b".json" in first.stdout
    shutil.rmtree(state)
    second = run_process(look, cwd=tmp_path, env=child_env(), timeout_seconds=30)
    assert second.exit_code == 0, second.stderr
    assert second.stdout.splitlines()[0] == first.stdout.splitlines()[0]  # the marker
    assert b".json" in second.stdout
    assert not list(state.glob("children/*/*/*.json"))  # forgotten once done


def test_a_scan_of_the_few_pids_newer_than_a_leader_lists_no_proc_and_no_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With few pids handed out since the leader, a scan asks for each one's stat instead of
    listing /proc (~1 ms on a busy machine); /proc answers for a thread's id too, which is not
    a process and is left out."""
    listings: list[int] = []
    all_pids_of_proc = proc_table.all_pids

    def counted() -> Iterator[int]:
        listings.append(1)
        return all_pids_of_proc()

    monkeypatch.setattr(proc_table, "all_pids", counted)
    code = (
        "import threading, time\n"
        "t = threading.Thread(target=time.sleep, args=(30,), daemon=True); t.start()\n"
        "print(t.native_id, flush=True); time.sleep(30)\n"
    )
    leader = subprocess.Popen(["sleep", "30"])
    threaded = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert threaded.stdout is not None
        thread = int(threaded.stdout.readline())
        assert Path(f"/proc/{thread}/stat").exists()  # /proc answers for it
        scans = NewerStats(leader.pid)
        pids = {s.pid for s in scans.now()}
        if scans.wrapped or (scans.last or 0) - leader.pid > proc_table.DIRECT_RANGE:
            pytest.skip("pids wrapped, or this machine handed out too many pids meanwhile")
        assert listings == []
        assert threaded.pid in pids and thread not in pids and leader.pid not in pids
    finally:
        for process in (leader, threaded):
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("stderr", "reason"),
    [
        ("", ""),
        ("disk on fire\n", "disk on fire"),
        (
            "error: Cannot find module './x' from '/g.ts'\n\nBun v1.4.5 (Linux x64)\n",
            "error: Cannot find module './x' from '/g.ts' | Bun v1.4.5 (Linux x64)",
        ),
        (
            "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\n"
            "Error: Cannot find module './x'\nRequire stack:\n- /g.js\n"
            "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n"
            "    at Module._load (node:internal/modules/cjs/loader:1051:27) {\n"
            "  code: 'MODULE_NOT_FOUND'\n}\n\nNode.js v20.11.0\n",
            "Error: Cannot find module './x' | Node.js v20.11.0",
        ),
        (
            'Traceback (most recent call last):\n  File "g.py", line 1, in <module>\n'
            "    import rubric\nModuleNotFoundError: No module named 'rubric'\n",
            "ModuleNotFoundError: No module named 'rubric'",
        ),
        ("x" * 500, "x" * 300 + "…"),
    ],
)
def test_a_failures_reason_keeps_the_stderr_lines_that_say_what_went_wrong(
    stderr: str, reason: str
) -> None:
    assert stderr_reason(stderr) == reason

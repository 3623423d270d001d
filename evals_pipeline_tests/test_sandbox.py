"""The OS sandbox (bubblewrap, real) and the runner's exposure without it: an agent cannot read
the runner's environment nor write outside its workspace; graders get a private HOME; a forged
ledger entry gets nothing killed; without the sandbox no child learns the runner's pid and the
runner is non-dumpable. (A grader's private HOME: grading/test_code_grader.py.)"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evals_pipeline import process
from evals_pipeline.adapters import RunContext, run_agent
from evals_pipeline.grading.grader_process import run_grader
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.child import ChildRecord
from evals_pipeline.process import child_env, run_process
from evals_pipeline.reaping.ledger import MARKER_FILE, STATE_DIR_VAR, sweep_leftovers
from evals_pipeline.reaping.owner import OWNER_VAR, TOKEN_VAR
from evals_pipeline.reaping.proc_table import NewerStats, all_pids, environ_has, read_stat
from evals_pipeline.sandbox.bubblewrap import bwrap_argv
from evals_pipeline.sandbox.detection import SANDBOX_VAR, bubblewrap
from evals_pipeline.sandbox.policy import SandboxPolicy
from evals_pipeline.settings import Settings
from evals_pipeline.suites.interpolation import load_env_files

needs_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is Linux's"
)

PLANTED = "planted-runner-secret-" + secrets.token_hex(6)

SNOOP = """\
import json, os, sys
runner, out = int(sys.argv[1]), sys.argv[2]
found = {"runner_environ": None, "holders": [], "pids_seen": 0}
try:
    found["runner_environ"] = open(f"/proc/{runner}/environ", "rb").read().decode(errors="replace")
except OSError as exc:
    found["runner_environ_error"] = type(exc).__name__
for name in os.listdir("/proc"):
    if name.isdigit():
        found["pids_seen"] += 1
        try:
            if PLANTED.encode() in open(f"/proc/{name}/environ", "rb").read():
                found["holders"].append(int(name))
        except OSError:
            pass
found["pid1"] = open("/proc/1/cmdline", "rb").read().split(b"\\0")[0].decode()
json.dump({"text": json.dumps(found)}, open(out, "w"))
""".replace("PLANTED", repr(PLANTED))

WRITER = """\
import json, os, sys
out, targets = sys.argv[1], sys.argv[2:]
wrote = {}
for path in targets:
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
        wrote[path] = True
    except OSError as exc:
        wrote[path] = type(exc).__name__
json.dump({"text": json.dumps(wrote)}, open(out, "w"))
"""


@pytest.fixture(autouse=True)
def sandbox_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default (sandbox on), and child records under the test's folder."""
    monkeypatch.delenv(SANDBOX_VAR, raising=False)
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))


def cli_case(
    tmp_path: Path, command: str, *, workspace: bool = False, **target: object
) -> ResolvedCase:
    return ResolvedCase.model_validate(
        {
            "suite": "s",
            "suite_path": str(tmp_path / "suite" / "s.eval.yaml"),
            "case_key": "case-1",
            "test_id": "case-1",
            "agent": "snoop",
            "target": {"name": "snoop", "provider": "cli", "command": command, **target},
            "input": [{"role": "user", "content": "look around"}],
            "prompt": "look around",
            "base_dir": str(tmp_path / "suite"),
            "timeout_seconds": 60,
            **({"workspace": {}} if workspace else {}),
        }
    )


def run_cli(
    tmp_path: Path,
    script: str,
    source: str,
    args: str,
    *,
    workspace: bool = False,
    **target: object,
) -> dict:
    suite = tmp_path / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    (suite / script).write_text(source)
    command = f"{sys.executable} {suite / script} {args}"
    artifacts = tmp_path / "runs" / "t0"
    ctx = RunContext(artifacts, artifacts / "workspace")
    ctx.workspace.mkdir(parents=True)
    run = run_agent(cli_case(tmp_path, command, workspace=workspace, **target), ctx)
    assert run.error is None, run.stderr
    return json.loads(json.loads(ctx.output_path.read_text())["text"])


@needs_bwrap
def test_an_agent_in_the_sandbox_cannot_read_the_runners_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bubblewrap() is not None, "bubblewrap must work here (make sandbox)"
    # /proc shows the environment a process started with: a process of the host that holds
    # the secret stands in for the runner's keys.
    holder = subprocess.Popen(["sleep", "60"], env={**os.environ, "PLANTED_TOKEN": PLANTED})
    try:
        args = f"{holder.pid} {{OUTPUT_FILE}}"
        found = run_cli(tmp_path, "snoop.py", SNOOP, f"{os.getpid()} {{OUTPUT_FILE}}")
        assert found["runner_environ"] is None  # the runner's pid names nothing in there
        assert found["holders"] == []
        assert found["pid1"].endswith("bwrap")  # its own PID namespace: only its own pids
        assert found["pids_seen"] < 10
        found = run_cli(tmp_path / "holder", "snoop.py", SNOOP, args)
        assert found["runner_environ"] is None and found["holders"] == []

        # The same agent opted out of the sandbox finds it (as root, or as the same user): the
        # test can fail.
        monkeypatch.setenv(SANDBOX_VAR, "off")
        Settings.reload()  # the process's settings are read once
        exposed = run_cli(tmp_path / "off", "snoop.py", SNOOP, args)
        assert PLANTED in (exposed["runner_environ"] or "")
        assert holder.pid in exposed["holders"]
    finally:
        holder.kill()
        holder.wait()


@needs_bwrap
def test_an_agent_in_the_sandbox_writes_only_its_workspace_and_run_folder(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"]) / f".evals-sandbox-probe-{secrets.token_hex(4)}"
    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "runs" / "t0" / "workspace"
    targets = [
        tmp_path / "suite" / "written-into-suite",
        outside / "escaped",
        tmp_path / "escaped",
        home,
        Path("/tmp") / f"evals-sandbox-probe-{secrets.token_hex(4)}",
        workspace / "written",
        tmp_path / "runs" / "t0" / "written",
    ]
    try:
        args = "{OUTPUT_FILE} " + " ".join(map(str, targets))
        wrote = run_cli(tmp_path, "writer.py", WRITER, args, workspace=True)
        for path in (targets[0], targets[3]):  # the suite's folder, the user's HOME
            assert wrote[str(path)] == "OSError", path  # read-only file system
        for path in targets[:5]:
            # Under /tmp a write may succeed, into the sandbox's private /tmp: never the host's.
            assert not path.exists(), path
        assert (workspace / "written").read_text() == "escaped"
        assert (tmp_path / "runs" / "t0" / "written").read_text() == "escaped"
    finally:
        home.unlink(missing_ok=True)


@needs_bwrap
def test_a_cli_command_with_no_workspace_writes_only_the_folder_it_runs_in(
    tmp_path: Path,
) -> None:
    """As under AgentV, a `cli` command the suite gives no workspace works in its folder (a
    batch runner writes its input CSV there): that folder is its workspace, nothing else."""
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = [tmp_path / "suite" / "scratch.csv", outside / "escaped"]
    args = "{OUTPUT_FILE} " + " ".join(map(str, targets))
    wrote = run_cli(tmp_path, "writer.py", WRITER, args)
    assert (tmp_path / "suite" / "scratch.csv").read_text() == "escaped"
    assert wrote[str(outside / "escaped")] in ("OSError", "FileNotFoundError")
    assert not (outside / "escaped").exists()


READER = """\
import json, sys
out, paths = sys.argv[1], sys.argv[2:]
seen = {}
for path in paths:
    try:
        seen[path] = open(path).read()
    except OSError as exc:
        seen[path] = type(exc).__name__
json.dump({"text": json.dumps(seen)}, open(out, "w"))
"""


@needs_bwrap
def test_an_agent_in_the_sandbox_reads_no_credential_store_and_no_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Outside /tmp, which the sandbox's private /tmp would hide anyway.
    home = Path(os.environ["HOME"]) / f".evals-sandbox-home-{secrets.token_hex(4)}"
    stores = [
        home / ".aws" / "credentials",
        home / ".netrc",
        home / ".claude" / ".credentials.json",
    ]
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / ".env").write_text(f"PLANTED_TOKEN={PLANTED}\n")
    (suite / "s.eval.yaml").write_text("tests: []\n")
    try:
        for store in stores:
            store.parent.mkdir(parents=True, exist_ok=True)
            store.write_text(PLANTED)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("PLANTED_TOKEN", raising=False)
        assert load_env_files(suite / "s.eval.yaml") == [suite / ".env"]  # as a suite load does
        paths = " ".join(map(str, [*stores, suite / ".env"]))
        seen = run_cli(tmp_path, "reader.py", READER, f"{{OUTPUT_FILE}} {paths}")
        # Each one empty or absent (what it held would also show scrubbed, as [REDACTED:...]).
        assert set(seen.values()) <= {"", "PermissionError", "FileNotFoundError"}, seen
        assert seen[str(home / ".aws" / "credentials")] == "FileNotFoundError"

        monkeypatch.setenv(SANDBOX_VAR, "off")  # the same agent on the host reads them all
        Settings.reload()  # the process's settings are read once
        exposed = run_cli(tmp_path / "off", "reader.py", READER, f"{{OUTPUT_FILE}} {paths}")
        assert all("[REDACTED:PLANTED_TOKEN]" in text for text in exposed.values()), exposed
    finally:
        shutil.rmtree(home, ignore_errors=True)


SHIPPED_LOGINS = (
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".pi/agent/auth.json",
)

GRADER_ONLY = """\
import json, sys
from pathlib import Path
from evals_pipeline.grading.grader_process import run_grader
done = run_grader(["cat", *sys.argv[1:]], cwd=Path.cwd(), timeout_seconds=60, stdin=b"")
print(json.dumps({"stdout": done.stdout.decode(), "exit_code": done.exit_code}))
"""


@needs_bwrap
def test_a_grader_hides_every_shipped_agents_login_in_a_process_that_ran_no_agent(
    tmp_path: Path,
) -> None:
    """The agents' logins are the agent registry's to say (AgentKind.logins); a process that
    only grades loads it with the grader runner, so no grader reads the runner's logins."""
    if bubblewrap() is None:
        pytest.skip("needs a working bubblewrap")
    home = Path(os.environ["HOME"]) / f".evals-sandbox-home-{secrets.token_hex(4)}"
    logins = [home / login for login in SHIPPED_LOGINS]
    try:
        for login in logins:
            login.parent.mkdir(parents=True, exist_ok=True)
            login.write_text(PLANTED)
        env = {**os.environ, "HOME": str(home)}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
        done = subprocess.run(
            [sys.executable, "-c", GRADER_ONLY, *map(str, logins)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert json.loads(done.stdout) == {"stdout": "", "exit_code": 1}, done.stderr
    finally:
        shutil.rmtree(home, ignore_errors=True)


@needs_bwrap
def test_loopback_network_reaches_no_host_service(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = textwrap.dedent(
            """\
            import json, socket, sys
            try:
                socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()
                reached = True
            except OSError:
                reached = False
            json.dump({"text": json.dumps({"reached": reached})}, open(sys.argv[2], "w"))
            """
        )
        host = run_cli(tmp_path / "host", "probe.py", probe, f"{port} {{OUTPUT_FILE}}")
        loopback = run_cli(
            tmp_path / "lo",
            "probe.py",
            probe,
            f"{port} {{OUTPUT_FILE}}",
            sandbox_network="loopback",
        )
    assert host == {"reached": True}
    assert loopback == {"reached": False}


@needs_bwrap
def test_what_a_sandboxed_child_leaves_behind_is_gone_when_it_returns(tmp_path: Path) -> None:
    tag = secrets.token_hex(8)
    policy = SandboxPolicy(writable=(tmp_path,))
    env = child_env({"SANDBOX_TEST_TAG": tag})
    done = run_process(
        "setsid sleep 600 & sleep 600",
        cwd=tmp_path,
        env=env,
        timeout_seconds=2,
        sandbox=policy,
    )
    assert done.timed_out
    left = run_process(
        "setsid sleep 600 & echo started",
        cwd=tmp_path,
        env=env,
        timeout_seconds=30,
        sandbox=policy,
    )
    assert left.stdout == b"started\n"
    entry = f"SANDBOX_TEST_TAG={tag}".encode()
    assert [pid for pid in all_pids() if environ_has(pid, entry) and _running(pid)] == []


@pytest.mark.parametrize("why", ["switched off", "bubblewrap missing"])
def test_without_the_sandbox_no_child_learns_the_runners_pid_and_the_runner_is_not_dumpable(
    tmp_path: Path, why: str
) -> None:
    runner = textwrap.dedent(
        """\
        import json, os, sys
        from pathlib import Path
        from evals_pipeline.process import child_env, run_process
        from evals_pipeline.reaping.prctl import is_dumpable
        from evals_pipeline.sandbox.policy import SandboxPolicy
        before = is_dumpable()
        for _ in range(2):  # a missing bubblewrap is said once, not per child
            done = run_process(
                [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"],
                cwd=Path.cwd(), env=child_env(), timeout_seconds=30,
                sandbox=SandboxPolicy(writable=(Path.cwd(),)),
            )
        print(json.dumps({"pid": os.getpid(), "before": before, "after": is_dumpable(),
                          "env": json.loads(done.stdout)}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    if why == "switched off":
        env[SANDBOX_VAR] = "off"
    else:
        env.pop(SANDBOX_VAR, None)
        env["PATH"] = str(Path(sys.executable).parent)  # no bwrap on it
    out = subprocess.run(
        [sys.executable, "-c", runner],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    report = json.loads(out.stdout.decode().splitlines()[-1])
    warned = out.stderr.decode().count("children run unsandboxed")
    assert warned == (0 if why == "switched off" else 1), out.stderr.decode()
    assert report["before"] is True and report["after"] is False
    child = report["env"]
    assert set(child) >= {OWNER_VAR, TOKEN_VAR}
    for name, value in child.items():
        assert str(report["pid"]) not in value.split(":"), name
    assert len(child[OWNER_VAR]) == 32 and len(child[TOKEN_VAR]) == 32


def test_a_forged_ledger_entry_gets_no_unrelated_process_killed(tmp_path: Path) -> None:
    victim = subprocess.Popen(["sleep", "60"])  # started without any marker
    marker = secrets.token_hex(16)
    token = secrets.token_hex(16)
    marked = subprocess.Popen(
        ["sleep", "60"], env={**child_env(), OWNER_VAR: marker, TOKEN_VAR: token}
    )
    try:
        time.sleep(0.1)
        # A runner that is dead (no such pid with that start time) "recorded" both.
        folder = tmp_path / "state" / "children" / socket.gethostname() / "999999999-1"
        folder.mkdir(parents=True)
        (folder / MARKER_FILE).write_text(marker)
        for proc, name in ((victim, "forged"), (marked, token)):
            stat = read_stat(proc.pid)
            assert stat is not None
            record = ChildRecord(
                pid=proc.pid,
                start_ticks=stat.start_ticks,
                token=token,
                owner=marker,
                command="sleep 60",
                start_ms=0,
            )
            (folder / f"{name}.json").write_text(record.model_dump_json())
        killed = sweep_leftovers()
        assert victim.pid not in killed
        assert victim.poll() is None
        # The control: the process that carries the dead runner's marker is its, and dies.
        assert marked.pid in killed
        assert marked.wait(timeout=5) == -9
        assert not folder.exists()
    finally:
        for proc in (victim, marked):
            proc.kill()
            proc.wait()


def _running(pid: int) -> bool:
    stat = read_stat(pid)
    return stat is not None and stat.running


@needs_bwrap
def test_the_sandbox_binds_again_only_what_its_private_tmp_hides(tmp_path: Path) -> None:
    """The read-only `/` shows every folder outside /tmp as it is, so binding one again only
    slows each child's start; a folder under /tmp, named directly or through a link from
    outside it, is still readable in the sandbox."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "note.txt").write_text("seen")
    link = Path("/var/tmp") / f"evals-sandbox-link-{secrets.token_hex(4)}"
    link.symlink_to(data)
    try:
        policy = SandboxPolicy(
            writable=(tmp_path / "ws",), readable=(Path("/usr"), Path("/etc"), link)
        )
        (tmp_path / "ws").mkdir()
        argv = bwrap_argv("bwrap", policy, ["true"], cwd=tmp_path / "ws")
        bound = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind"]
        assert bound == ["/", str(data)], argv
        done = run_process(
            ["cat", str(link / "note.txt")],
            cwd=tmp_path / "ws",
            env=child_env(),
            timeout_seconds=30,
            sandbox=policy,
        )
        assert done.stdout == b"seen", done.stderr
    finally:
        link.unlink()


@needs_bwrap
def test_a_sandboxed_child_of_a_killed_runner_dies_with_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bubblewrap's --die-with-parent alone (no setpriv in front of it) ends the sandbox when
    the runner dies: with its guard killed too, nothing is left for a sweep."""
    monkeypatch.setenv(STATE_DIR_VAR, str(tmp_path / "state"))
    tag = secrets.token_hex(8)
    started = tmp_path / "started"
    runner_code = (
        "from pathlib import Path\n"
        "from evals_pipeline.process import child_env, run_process\n"
        "from evals_pipeline.sandbox.policy import SandboxPolicy\n"
        f"run_process('setsid sleep 600 & sleep 600 & touch {started}; wait', cwd=Path.cwd(),\n"
        f"    env=child_env({{'SANDBOX_TEST_TAG': {tag!r}}}), timeout_seconds=600,\n"
        "    sandbox=SandboxPolicy(writable=(Path.cwd(),)))\n"
    )
    runner = subprocess.Popen([sys.executable, "-c", runner_code], cwd=tmp_path)
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    entry = f"SANDBOX_TEST_TAG={tag}".encode()
    tagged = [pid for pid in all_pids() if environ_has(pid, entry) and _running(pid)]
    assert len(tagged) >= 4  # bwrap, the sandbox's init, its sh and the two sleeps
    guard = next(pid for pid in all_pids() if _is_guard_of(pid, runner.pid))
    os.kill(guard, signal.SIGKILL)
    runner.kill()
    runner.wait()
    deadline = time.monotonic() + 10
    while any(map(_running, tagged)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in tagged if _running(pid)] == []


@needs_bwrap
def test_a_sandboxed_child_starts_as_bubblewrap_itself(tmp_path: Path) -> None:
    """No setpriv exec in front of bubblewrap, which gives the sandbox the parent-death
    signal itself; a child run outside the sandbox still gets one through setpriv."""
    bwrap = bubblewrap()
    assert bwrap is not None
    command = ["sleep", "1"]
    wrapped = ["bwrap", "--die-with-parent", "--", *command]
    sandboxed = process._dying_with_parent(command, wrapped, tmp_path, child_env())
    assert sandboxed.argv == wrapped and sandboxed.preexec_fn is None
    bare = process._dying_with_parent(command, command, tmp_path, child_env())
    assert bare.argv[-2:] == command and (bare.argv[0].endswith("setpriv") or bare.preexec_fn)


@needs_bwrap
def test_a_sandboxed_child_is_not_scanned_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc is not scanned while a sandboxed child runs (nothing leaves its PID namespace),
    only once it ends."""
    done = tmp_path / "done"
    scans: list[bool] = []
    scan = NewerStats.now

    def counted(self: NewerStats) -> list:
        scans.append(done.exists())
        return scan(self)

    monkeypatch.setattr(NewerStats, "now", counted)
    result = run_process(
        f"sleep 1.5; touch {done}",
        cwd=tmp_path,
        env=child_env(),
        timeout_seconds=30,
        sandbox=SandboxPolicy(writable=(tmp_path,)),
    )
    assert result.exit_code == 0
    assert scans and all(scans)  # none before the child's last command


@needs_bwrap
def test_a_graders_home_is_gone_when_it_returns_read_only_files_and_all(tmp_path: Path) -> None:
    script = 'mkdir -p "$HOME/cache/pkg" && touch "$HOME/cache/pkg/f" && chmod -R a-w "$HOME/cache"; echo "$HOME"'
    done = run_grader(["sh", "-c", script], cwd=tmp_path, timeout_seconds=30, stdin=b"")
    assert done.exit_code == 0, done.stderr
    home = Path(done.stdout.decode().strip())
    assert home.name.startswith("evals-grader-home-")
    assert not home.exists()
    empty = run_grader(["sh", "-c", 'echo "$HOME"'], cwd=tmp_path, timeout_seconds=30, stdin=b"")
    assert not Path(empty.stdout.decode().strip()).exists()


def _is_guard_of(pid: int, runner: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"evals_pipeline.reaping.guard" in argv and f":{runner}:".encode() in argv[-2]

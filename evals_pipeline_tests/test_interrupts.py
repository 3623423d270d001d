"""Ctrl-C and SIGTERM on the real `evals-pipeline run`: the first signal stops a 40-case suite
within seconds (no agent starts after it, none is left running), says what was done in one line
and exits 130 or 143; the same command then finishes the suite, each case run once besides those
stopped. A second Ctrl-C ends the command at once."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evals_pipeline.defs.executor import EXECUTOR_ENV
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.test_cli import cli, printed_report_folder, write

TESTS = [f"case-{n:02d}" for n in range(40)]
WORKERS = 2

# Logs its prompt to log/starts.log beside it, then sleeps with a child of its own (in its group);
# with log/stubborn present, both ignore SIGTERM.
AGENT = """\
import os, signal, subprocess, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "log", "stubborn")):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--child" in args:
    time.sleep(float(args["--sleep"]))
    sys.exit(0)
here = os.path.dirname(os.path.abspath(__file__))
prompt = open(args["--prompt-file"]).read().strip()
with open(os.path.join(here, "log", "starts.log"), "a") as log:
    log.write(prompt + "\\n")
child = subprocess.Popen([sys.executable, __file__, "--child", "1", "--sleep", args["--sleep"]])
time.sleep(float(args["--sleep"]))
child.wait()
open(args["--output"], "w").write("done " + prompt)
"""

LINE = re.compile(
    r"^interrupted: (\d+) done, (\d+) stopped, (\d+) not started; run the same command to resume$",
    re.MULTILINE,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite of 40 tests over one slow cli agent; its log folder writable in the sandbox."""
    folder = tmp_path / "project"
    (folder / "log").mkdir(parents=True)
    monkeypatch.setenv(WRITABLE_VAR, str(folder / "log"))
    (folder / "agent.py").write_text(AGENT)
    cases = "".join(
        f"  - id: {t}\n    input: {t}\n    assertions: [{{type: contains, value: done}}]\n"
        for t in TESTS
    )
    write(
        folder,
        "interrupts.eval.yaml",
        f"name: interrupts\nexecution:\n  workers: {WORKERS}\n  targets: [slow]\n"
        "targets:\n  - name: slow\n    provider: cli\n    command: python3 {EVAL_DIR}/agent.py "
        "--sleep 2 --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}\n"
        f"tests:\n{cases}",
    )
    return folder


def starts(project: Path) -> list[str]:
    log = project / "log" / "starts.log"
    return log.read_text().splitlines() if log.exists() else []


def stored_runs(home: Path) -> int:
    return len(list((home / "storage" / "interrupts" / "results").glob("*/*/run-*.json")))


def agent_processes(project: Path) -> list[int]:
    """The live processes running the project's agent.py (its children included)."""
    script = str(project / "agent.py").encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and script in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile
            continue
    return found


def start_run(
    project: Path, home: Path, extra_env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """`evals-pipeline run` of the suite, its stdout and stderr going to files."""
    env = {**os.environ, "DAGSTER_HOME": str(home / "dagster"), **(extra_env or {})}
    env["EVALS_PIPELINE_STORAGE"] = str(home / "storage")
    out, err = home / "first.out", home / "first.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evals_pipeline.cli",
                "run",
                str(project / "interrupts.eval.yaml"),
            ],
            env=env,
            cwd=home,
            stdout=stdout,
            stderr=stderr,
        )
    return process, out, err


def wait_for_stored(process: subprocess.Popen[bytes], home: Path, count: int) -> None:
    """Until `count` runs are stored and the next agents run."""
    deadline = time.monotonic() + 180
    while stored_runs(home) < count or not agent_processes(home / "project"):
        assert process.poll() is None, "the run ended before it could be interrupted"
        assert time.monotonic() < deadline, "the run never got that far"
        time.sleep(0.05)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_at_case_6_stops_the_run_and_the_same_command_resumes_it(
    project: Path, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    process, out, err = start_run(project, tmp_path)
    wait_for_stored(process, tmp_path, 6)
    process.send_signal(sig)
    sent = time.monotonic()
    try:
        assert process.wait(timeout=5) == code
    finally:
        process.kill()
    assert time.monotonic() - sent < 5
    started_by_then = starts(project)
    time.sleep(0.5)  # a process that outlived the command would show here
    assert not agent_processes(project), "an agent or its child outlived the command"
    assert starts(project) == started_by_then

    stderr, stdout = err.read_text(), out.read_text()
    assert "Traceback" not in stderr + stdout
    assert "error" not in stderr.lower(), stderr  # the stopped runs' errors never show
    [(done, stopped, not_started)] = LINE.findall(stderr)
    done, stopped, not_started = int(done), int(stopped), int(not_started)
    assert done + stopped + not_started == len(TESTS)
    assert done >= 6 and stopped <= WORKERS
    # Every agent started before the signal: each done, or in flight and stopped.
    assert done <= len(started_by_then) <= done + stopped
    assert stored_runs(tmp_path) == done  # no stopped run is kept as a result

    again = cli("run", str(project / "interrupts.eval.yaml"), home=tmp_path)
    assert again.code == 0, again.explain()
    assert "Traceback" not in again.stderr
    assert "the process that ran it died" not in again.stderr  # its runs were marked canceled
    every = starts(project)
    assert set(every) == set(TESTS)
    assert len(every) <= len(TESTS) + stopped  # each case once, the stopped ones twice at most
    rerun = every[len(started_by_then) :]
    assert len(rerun) == len(TESTS) - done  # the finished ones were reused
    rows = [
        json.loads(line)
        for line in (printed_report_folder(again.stdout) / "results.jsonl").read_text().splitlines()
    ]
    assert sorted(r["test_id"] for r in rows) == TESTS
    assert {r["score"] for r in rows} == {1.0}


def test_a_second_ctrl_c_ends_the_command_at_once(project: Path, tmp_path: Path) -> None:
    # Agents that ignore SIGTERM hold the first Ctrl-C's stop for its grace (a second or more)
    # before SIGKILL ends them; a second Ctrl-C does not wait.
    (project / "log" / "stubborn").write_text("")
    process, _, err = start_run(project, tmp_path)
    wait_for_stored(process, tmp_path, 2)
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    try:
        assert process.wait(timeout=5) == 130
    finally:
        process.kill()
    assert time.monotonic() - sent < 0.9
    time.sleep(0.5)
    assert not agent_processes(project), "an agent outlived the second Ctrl-C"
    assert "Traceback" not in err.read_text()


def processes_with(entry: bytes) -> list[int]:
    """The live processes whose environment holds `entry` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (
                proc.name.isdigit()
                and entry in (proc / "environ").read_bytes().split(b"\0")
                and (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie
            ):
                found.append(int(proc.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_sigterm_on_multiprocess_stops_the_agents_of_the_step_processes(
    project: Path, tmp_path: Path
) -> None:
    """The signal goes to the command alone, not to its step processes: the executor passes
    the stop on to them, and each ends its agents as an in-process step does."""
    mark = f"EVALS_PIPELINE_TEST_RUN={tmp_path}"  # inherited by the step processes
    name, _, value = mark.partition("=")
    process, _, err = start_run(project, tmp_path, {EXECUTOR_ENV: "multiprocess", name: value})
    wait_for_stored(process, tmp_path, 4)
    assert len(processes_with(mark.encode())) > 1  # the command and its step processes
    process.send_signal(signal.SIGTERM)
    try:
        assert process.wait(timeout=5) == 143
    finally:
        process.kill()
    # The command waited for its step processes to end theirs; what remains is their exit.
    deadline = time.monotonic() + 2
    while (processes_with(mark.encode()) or agent_processes(project)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert not processes_with(mark.encode()), "a step process outlived the stop"
    assert not agent_processes(project), "an agent or its child outlived the stop"
    started = starts(project)
    assert len(started) < len(TESTS)
    time.sleep(0.5)
    assert starts(project) == started  # no agent started after
    [(done, stopped, not_started)] = LINE.findall(err.read_text())
    # Counted from the store, not from the command's own process, where no agent ran.
    assert int(done) == stored_runs(tmp_path) >= 4, err.read_text()
    assert int(done) + int(stopped) + int(not_started) == len(TESTS)

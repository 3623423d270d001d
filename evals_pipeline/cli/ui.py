"""`ui`: the Dagster UI on the instance and storage root `evals-pipeline run` uses in this
project, with `evals-pipeline view` beside it so the report links open (docs/dagster-ui.md).

A bare `dagster dev` in a user's project opens a temporary, empty instance and loads no suite;
this command gives it what `run` used: DAGSTER_HOME (with the shipped dagster.yaml when fresh),
the suites, the storage root and the targets file, as the child processes' environment."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType

from evals_pipeline.cli.exits import EXIT_OK, EXIT_USAGE
from evals_pipeline.cli.locations import cli_home, cli_instance, storage_url
from evals_pipeline.cli.selection import load_suites
from evals_pipeline.reaping.prctl import dying_with_parent
from evals_pipeline.served import http_url

UI_PORT = 3000  # dagster dev's own default
STOP_SECONDS = 20.0
"""How long the UI's processes get to end on Ctrl-C before they are killed: dagster dev stops
its webserver, daemon and code server in turn."""


def cmd_ui(args: argparse.Namespace) -> int:
    settings = args.settings
    paths = args.suites or (settings.suites.split(os.pathsep) if settings.suites else ["."])
    suites = load_suites(paths, targets_file=Path(args.targets) if args.targets else None)
    if isinstance(suites, int):
        return suites
    home = cli_home(settings)
    cli_instance(settings).dispose()  # a fresh home gets the shipped settings (dagster.yaml)
    storage = storage_url(args)
    view_url = http_url(args.host, args.view_port)
    env = _child_env(
        os.environ,
        home=home,
        suites=[str(s.path) for s in suites],
        storage=storage,
        targets=str(Path(args.targets).resolve()) if args.targets else None,
        # A shared deployment's base URL stays; a local UI links to the view it starts.
        view_url=None if args.no_view else view_url,
    )
    ui_url = http_url(args.host, args.port)
    print(
        f"evals-pipeline ui: {len(suites)} suite(s), instance {home}, storage {storage}\n"
        f"  Dagster UI  {ui_url}\n"
        + ("" if args.no_view else f"  reports     {view_url}\n")
        + f"Ctrl-C stops {'it' if args.no_view else 'both'}.",
        flush=True,
    )
    dagster = [
        str(Path(sys.executable).parent / "dagster"),
        "dev",
        "-m",
        "evals_pipeline.definitions",
    ]
    commands = [[*dagster, "-h", args.host, "-p", str(args.port)]]
    if not args.no_view:
        view = [sys.executable, "-m", "evals_pipeline.cli", "view", "--storage", storage]
        commands.append([*view, "--host", args.host, "--port", str(args.view_port)])
    return _serve(commands, env)


def _child_env(
    base: Mapping[str, str],
    *,
    home: Path,
    suites: list[str],
    storage: str,
    targets: str | None,
    view_url: str | None,
) -> dict[str, str]:
    """The UI's processes' environment: this one's, with the instance, suites, storage and
    targets `run` would use here."""
    env = {**base, "DAGSTER_HOME": str(home), "EVALS_PIPELINE_STORAGE": storage}
    env["EVALS_PIPELINE_SUITES"] = os.pathsep.join(suites)
    if targets:
        env["EVALS_PIPELINE_TARGETS"] = targets
    if view_url and "EVALS_PIPELINE_VIEW_URL" not in base:
        env["EVALS_PIPELINE_VIEW_URL"] = view_url
    return env


def _serve(commands: list[list[str]], env: Mapping[str, str]) -> int:
    """Run `commands` until a signal or one of them ending; then stop them all."""
    stopped: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopped.append(signum)

    # Handled before the children start, so they start with the default handlers: a command
    # started in the background (SIGINT ignored) would pass that on, and dagster dev ignores
    # SIGTERM whenever it finds SIGINT ignored.
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    # Sessions of their own: a terminal's Ctrl-C reaches this command alone, which stops each
    # child in turn, and then whatever it left behind (_stop). Should this command be killed
    # outright, each child gets SIGTERM and stops its own children.
    launches = [
        dying_with_parent(c, cwd=os.getcwd(), env=env, signum=signal.SIGTERM) for c in commands
    ]
    children = [
        subprocess.Popen(
            launch.argv, env=dict(env), preexec_fn=launch.preexec_fn, start_new_session=True
        )
        for launch in launches
    ]
    try:
        while not stopped and all(c.poll() is None for c in children):
            time.sleep(0.2)
    finally:
        _stop(children)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if stopped:
        return EXIT_OK
    command, ended = next(
        (c, p) for c, p in zip(commands, children, strict=True) if p.returncode is not None
    )
    print(
        f"error: {' '.join(command[:3])} ended with exit code {ended.returncode}", file=sys.stderr
    )
    return ended.returncode or EXIT_USAGE


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    """SIGINT to each child, SIGKILL to its process group to those still there after STOP_SECONDS."""
    for child in children:
        # The leader only: dagster dev stops its webserver, daemon and code server in order;
        # an interrupt to each at once makes it restart the code server it saw end.
        child.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        _signal_group(child, signal.SIGKILL)  # what the child left behind in its group too
        child.wait()


def _signal_group(child: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group has ended
        os.killpg(child.pid, signum)

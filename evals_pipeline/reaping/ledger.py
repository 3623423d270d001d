"""A runner's record of its live children, one small file each, and the sweep that kills what
runners that died left running.

The ledger alone never gets a process killed (a forged or stale record must not SIGKILL an
unrelated process): a recorded child is killed only when its start time matches the record AND
its own environment (/proc/<pid>/environ) carries the dead runner's marker and the record's
token; any other process only when its own environment carries a dead runner's marker. The
runner's marker is opaque (owner.py); its folder's `marker` file maps it to the runner."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

from evals_pipeline.models.child import ChildRecord
from evals_pipeline.reaping.killing import send_signal
from evals_pipeline.reaping.owner import OWNER_VAR, TOKEN_VAR, Owner, runner_marker, this_runner
from evals_pipeline.reaping.proc_table import (
    ProcessStat,
    all_pids,
    environ_has,
    environ_value,
    read_stat,
)
from evals_pipeline.settings import Settings

STATE_DIR_VAR = "EVALS_PIPELINE_STATE_DIR"
SWEEP_WAIT_SECONDS = 2.0
MARKER_FILE = "marker"


def state_dir(settings: Settings | None = None) -> Path:
    """Where evals-pipeline keeps per-user machine state: $EVALS_PIPELINE_STATE_DIR, else
    $XDG_STATE_HOME/evals-pipeline, else ~/.local/state/evals-pipeline."""
    chosen = (settings or Settings.current()).state_dir
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "evals-pipeline"


def _host_folder(host: str) -> Path:
    return state_dir() / "children" / host


def _owner_folder(owner: Owner) -> Path:
    return _host_folder(owner.host) / f"{owner.pid}-{owner.start_ticks}"


def record_child(pid: int, token: str, command: str, start_ticks: int | None = None) -> Path | None:
    """Write the record of a child just started (its start time read here unless given); its
    path, or None when the state folder cannot be written (the environment scan of the sweep
    still finds the child then)."""
    global _ready_folder
    if start_ticks is None:
        stat = read_stat(pid)
        start_ticks = stat.start_ticks if stat else 0
    owner = this_runner()
    marker = runner_marker()
    record = ChildRecord(
        pid=pid,
        start_ticks=start_ticks,
        token=token,
        owner=marker,
        command=command[:500],
        start_ms=time.time_ns() // 1_000_000,
    )
    folder = _owner_folder(owner)
    path = folder / f"{token}.json"
    try:
        if folder != _ready_folder:
            _make_owner_folder(folder, marker)
            _ready_folder = folder
        try:
            path.write_text(record.model_dump_json())
        except FileNotFoundError:  # the folder was removed meanwhile: made again
            _make_owner_folder(folder, marker)
            path.write_text(record.model_dump_json())
    except OSError:
        _ready_folder = None
        return None
    return path


# The owner folder this process made last, with its marker: not made again for every child.
_ready_folder: Path | None = None


def _make_owner_folder(folder: Path, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    marker_path = folder / MARKER_FILE
    if not marker_path.is_file():
        marker_path.write_text(marker)


def forget_child(path: Path | None) -> None:
    """Drop a child's record once it and its tree are gone."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def sweep_leftovers() -> list[int]:
    """Kill (SIGKILL) every process left by a runner of this host that is no longer alive, and
    drop those runners' records; the pids killed."""
    me = this_runner()
    victims: dict[int, ProcessStat] = {}
    dead_markers: set[bytes] = set()
    for folder in _dead_owner_folders(me.host):
        marker = _folder_marker(folder)
        if marker is None:
            continue  # nothing to check a process against: its records prove nothing
        dead_markers.add(marker)
        for path in folder.glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                record = ChildRecord.model_validate_json(path.read_text())
                stat = read_stat(record.pid)
                if (
                    stat is not None
                    and stat.running
                    and stat.start_ticks == record.start_ticks
                    and record.owner.encode() == marker
                    and _carries(record.pid, marker, record.token)
                ):
                    victims[stat.pid] = stat
    if dead_markers:
        for pid in all_pids():
            marker = environ_value(pid, OWNER_VAR.encode())
            if marker is None or marker not in dead_markers or pid == me.pid:
                continue
            stat = read_stat(pid)
            if stat is not None and stat.running:
                victims[pid] = stat
    for stat in victims.values():
        send_signal(stat, signal.SIGKILL)
    _await_gone(list(victims.values()))
    for folder in _dead_owner_folders(me.host):
        shutil.rmtree(folder, ignore_errors=True)
    return sorted(victims)


def _folder_marker(folder: Path) -> bytes | None:
    """The marker a runner's folder records, or None when missing or unreadable."""
    try:
        marker = (folder / MARKER_FILE).read_bytes().strip()
    except OSError:
        return None
    return marker or None


def _carries(pid: int, marker: bytes, token: str) -> bool:
    """Whether `pid`'s own environment holds the runner's marker and the child's token."""
    return environ_has(pid, OWNER_VAR.encode() + b"=" + marker) and environ_has(
        pid, f"{TOKEN_VAR}={token}".encode()
    )


def _dead_owner_folders(host: str) -> list[Path]:
    folders = []
    with contextlib.suppress(OSError):
        for folder in _host_folder(host).iterdir():
            pid, _, ticks = folder.name.partition("-")
            with contextlib.suppress(ValueError):
                if not Owner(host, int(pid), int(ticks)).alive():
                    folders.append(folder)
    return folders


def _await_gone(stats: list[ProcessStat]) -> None:
    deadline = time.monotonic() + SWEEP_WAIT_SECONDS
    while time.monotonic() < deadline:
        now = [read_stat(s.pid) for s in stats]
        if not any(
            n and n.running and n.start_ticks == s.start_ticks
            for n, s in zip(now, stats, strict=True)
        ):
            return
        time.sleep(0.01)

"""Progress from a run's step processes (the multiprocess executor's, a celery worker's on this
host) relayed to the command that started the run: a step process sends each progress event, and
the agent runs a stop cut short, as a JSON line on a Unix socket the command listens on, and the
command hands them to its own listeners (progress.py) as if its own layers had emitted them."""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from evals_pipeline.progress import ProgressEvent, hand_to_listeners, listening
from evals_pipeline.stopping import stopping, tally_at_stop, wait_for_stop

DRAIN_SECONDS = 5.0
"""How long a finished run's relay waits for its step processes' last lines (each closes its
connection as its step ends: a multiprocess step's process exits, a celery task lets go)."""


class ProgressRelay:
    """The command's end: listens on a socket of its own (`address`) while in the block, hands
    each event a step process sends to this process's listeners and each count of agent runs a
    stopped step cut short to `on_stopped`; on leaving, waits for the connections to close."""

    def __init__(self, on_stopped: Callable[[int], None]) -> None:
        self.on_stopped = on_stopped
        self.folder = Path(tempfile.mkdtemp(prefix="evals-progress-"))  # 0700: ours alone
        self.address = str(self.folder / "relay")
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.readers: list[threading.Thread] = []
        self.accepting = threading.Thread(target=self._accept, name="progress-relay", daemon=True)

    def __enter__(self) -> ProgressRelay:
        self.server.bind(self.address)
        self.server.listen()
        _served.add(self.address)
        self.accepting.start()
        return self

    def __exit__(self, *_: object) -> None:
        _served.discard(self.address)
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self.accepting.join(DRAIN_SECONDS)
        for reader in list(self.readers):
            reader.join(DRAIN_SECONDS)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed: the run is over
                return
            reader = threading.Thread(target=self._read, args=(connection,), daemon=True)
            self.readers.append(reader)
            reader.start()

    def _read(self, connection: socket.socket) -> None:
        with connection, connection.makefile("r", encoding="utf-8") as lines:
            for line in lines:
                with contextlib.suppress(ValueError):  # a line cut short by a killed step
                    message = json.loads(line)
                    if "event" in message:
                        hand_to_listeners(ProgressEvent.model_validate(message["event"]))
                    elif "stopped" in message:
                        self.on_stopped(int(message["stopped"]))


_served: set[str] = set()  # the relays this process listens on: never relayed to itself
_lock = threading.Lock()
_sink: socket.socket | None = None
_registered_once: list[bool] = []
_told: list[bool] = []  # the stop's tally was sent
_registered = contextlib.ExitStack()  # the listener sending to `_sink`, entered once


def relay_to(address: str | None) -> bool:
    """Send this process's progress events to the relay at `address` from now on, in place of
    any earlier one (a celery worker serves run after run); whether it listens here (a worker
    on another host cannot reach it, and keeps the lines in its own log)."""
    global _sink
    stop_relaying()
    if not address or address in _served:
        return False
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(address)
    except OSError:
        connection.close()
        return False
    with _lock:
        _sink = connection
        first = not _registered_once
        if first:  # once a process: a job is rebuilt more than once in a step
            _registered.enter_context(listening(_send_event))
            _registered_once.append(True)
    if first and multiprocessing.parent_process() is not None:  # a multiprocess step's process
        threading.Thread(target=_tell_at_stop, name="relay-stop", daemon=True).start()
        atexit.register(_tell_stop_tally)  # a process that ends as it stops, before the thread
    return True


def stop_relaying() -> None:
    """Close the connection to the relay (its run's step ended here)."""
    global _sink
    with _lock:
        sink, _sink = _sink, None
    if sink is not None:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_RDWR)
        sink.close()


def _send(message: dict[str, object]) -> None:
    global _sink
    line = (json.dumps(message, separators=(",", ":")) + "\n").encode()
    with _lock:
        if _sink is None:
            return
        try:
            _sink.sendall(line)
        except OSError:  # the command is gone: nothing to tell
            _sink.close()
            _sink = None


def _send_event(event: ProgressEvent) -> None:
    _send({"event": event.model_dump()})


def _tell_at_stop() -> None:
    while not wait_for_stop(60.0):
        pass
    _tell_stop_tally()


def _tell_stop_tally() -> None:
    """Once this step process is stopped, tell how many agent runs the stop cut short, once:
    the command counts them in its closing line (cli/interrupts.py)."""
    with _lock:
        if not stopping() or _told:
            return
        _told.append(True)
    _send({"stopped": tally_at_stop().stopped})

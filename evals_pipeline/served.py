"""One lifecycle for the servers this package runs on a thread of its own process (the scripted
model server, the code graders' target proxy): serve on a daemon thread, say where, and stop
completely: no more requests, the port released, the thread ended."""

from __future__ import annotations

import socketserver
import threading
from types import TracebackType
from typing import Generic, Self, TypeVar

LOOPBACK = ("127.0.0.1", 0)
"""Where a server binds unless told otherwise: this machine only, a free port the kernel picks."""

POLL_SECONDS = 0.05  # how soon serve_forever notices a shutdown request
JOIN_SECONDS = 5.0

ServerT = TypeVar("ServerT", bound=socketserver.TCPServer)


class ServedOnThread(Generic[ServerT]):
    """A bound `socketserver` server, served on a daemon thread between start() and stop().

    Use as a context manager, or call start() and stop(); stop() is safe to call twice. A server
    that must drop open keep-alive connections first does it in its own `server_close`.
    """

    def __init__(self, server: ServerT, *, name: str, scheme: str = "http") -> None:
        self.server = server
        self.name = name
        self.scheme = scheme
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def host(self) -> str:
        return str(self.server.server_address[0])

    @property
    def port(self) -> int:
        """The bound port (a port 0 asked for is the one the kernel chose)."""
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """`scheme://host:port`, without a path."""
        return f"{self.scheme}://{self.host}:{self.port}"

    def start(self) -> Self:
        """Serve on a daemon thread; returns self."""
        if self._thread is not None or self._closed:
            raise RuntimeError(f"{self.name} is already started")
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": POLL_SECONDS},
            name=f"{self.name}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and wait for the serving thread to end (a server never
        started is closed all the same)."""
        if self._closed:
            return
        self._closed = True
        thread, self._thread = self._thread, None
        if thread is not None:
            self.server.shutdown()
        self.server.server_close()
        if thread is not None:
            thread.join(timeout=JOIN_SECONDS)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

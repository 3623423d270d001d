"""The lifecycle of the servers this package runs on a thread of its own process: serve on a
daemon thread, say where, and stop completely: no more requests, open connections closed, the
port released, the thread ended. `ServedOnThread` serves a stdlib `socketserver` server (the code
graders' target proxy); `AsgiOnThread` serves an ASGI app with uvicorn (the scripted model
server)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import socketserver
import threading
import time
from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING, Generic, Self, TypeVar, cast

if TYPE_CHECKING:
    import uvicorn
    from starlette.types import ASGIApp

LOOPBACK = ("127.0.0.1", 0)
"""Where a server binds unless told otherwise: this machine only, a free port the kernel picks."""

POLL_SECONDS = 0.05  # how soon serve_forever notices a shutdown request
JOIN_SECONDS = 5.0
STARTUP_POLL_SECONDS = 0.01
GRACE_SECONDS = 2  # how long stop() lets replies under way finish before cancelling them
BACKLOG = 128
"""Pending connections the listening socket holds: parallel runs connect at once, and a dropped
SYN costs the client a one-second retransmit."""
KEEP_ALIVE_SECONDS = 3600
"""How long an idle keep-alive connection stays open. The agent CLIs' HTTP clients reuse a
connection after minutes of tool work, and a server closing it as they send races them into a
reset; stop() closes idle connections at once in any case."""

ServerT = TypeVar("ServerT", bound=socketserver.TCPServer)


class StartStop(ABC):
    """Something started and stopped (a server, the clients that start servers), usable as a
    with-block: start() on entering, stop() on leaving, however the block ends."""

    @abstractmethod
    def start(self) -> Self: ...

    @abstractmethod
    def stop(self) -> None: ...

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class ServedOnThread(StartStop, Generic[ServerT]):
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


class AsgiOnThread(StartStop):
    """An ASGI app served by uvicorn on a daemon thread between start() and stop().

    start() binds host:port (port 0: the kernel picks one) in the caller's thread, so a port in
    use raises there, and returns once uvicorn accepts connections. stop() closes idle keep-alive
    connections at once, lets replies under way finish for GRACE_SECONDS, and joins the thread.
    Use as a context manager, or call start() and stop(); stop() is safe to call twice.
    """

    def __init__(
        self, app: ASGIApp, *, name: str, host: str = LOOPBACK[0], port: int = LOOPBACK[1]
    ) -> None:
        self.app = app
        self.name = name
        self.host = host
        self._requested_port = port
        self._port: int | None = None
        self._server: _PromptServer | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def port(self) -> int:
        """The bound port (a port 0 asked for is the one the kernel chose), once started."""
        if self._port is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._port

    @property
    def url(self) -> str:
        """`http://host:port`, without a path."""
        return http_url(self.host, self.port)

    def start(self) -> Self:
        """Bind, serve on a daemon thread and return self once connections are accepted."""
        import uvicorn  # the ASGI stack loads only for a process that serves one

        if self._thread is not None or self._closed:
            raise RuntimeError(f"{self.name} is already started")
        sock = listening_socket(self.host, self._requested_port)
        self._port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,  # the process's logging stays as its owner set it up
            access_log=False,
            backlog=BACKLOG,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,
            timeout_graceful_shutdown=GRACE_SECONDS,
        )
        server = _prompt_server_class()(config)
        self._server = server
        self._thread = threading.Thread(
            target=server.run,
            kwargs={"sockets": [sock]},
            name=f"{self.name}-{self._port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + JOIN_SECONDS
        while not server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(STARTUP_POLL_SECONDS)
        if not server.started:
            self.stop()
            sock.close()
            raise RuntimeError(f"{self.name} did not start on {self.host}:{self._port}")
        return self

    def stop(self) -> None:
        """Stop accepting, close open connections, release the port and end the thread."""
        if self._closed:
            return
        self._closed = True
        server, thread = self._server, self._thread
        self._thread = None
        if server is None or thread is None:
            return
        server.exit_now()
        thread.join(timeout=JOIN_SECONDS + GRACE_SECONDS)


def http_url(host: str, port: int) -> str:
    """`http://host:port`, an IPv6 address in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on host:port (port 0: one the kernel picks); OSError when it cannot
    be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


if TYPE_CHECKING:

    class _PromptServer(uvicorn.Server):
        def exit_now(self) -> None: ...


@functools.cache
def _prompt_server_class() -> type[_PromptServer]:
    """uvicorn's Server, made to begin its shutdown as soon as asked: uvicorn's own main loop
    looks only every 0.1 s, and a model server stops after every scripted run."""
    import uvicorn

    class PromptServer(uvicorn.Server):
        _loop: asyncio.AbstractEventLoop | None = None
        _wake: asyncio.Event | None = None

        async def main_loop(self) -> None:
            self._wake = asyncio.Event()
            self._loop = asyncio.get_running_loop()
            while not self.should_exit:
                await self.on_tick(0)  # as uvicorn's loop does each second: the Date header
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=1)

        def exit_now(self) -> None:
            """Ask the server to shut down (from any thread), waking its main loop at once."""
            self.should_exit = True
            loop, wake = self._loop, self._wake
            if loop is not None and wake is not None:
                with contextlib.suppress(RuntimeError):  # the loop has already ended
                    loop.call_soon_threadsafe(wake.set)

    return cast("type[_PromptServer]", PromptServer)

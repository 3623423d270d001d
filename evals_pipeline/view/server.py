"""Serving the view with uvicorn until Ctrl-C or SIGTERM: the socket is bound first, so port 0
picks a free port and the one line printed at start names the real URL."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable
from types import FrameType

from starlette.applications import Starlette

from evals_pipeline.served import http_url

SHUTDOWN_SECONDS = 2
"""How long open connections get at a stop before the server ends anyway."""


def url_of(sock: socket.socket) -> str:
    """The http URL a bound socket serves."""
    host, port = sock.getsockname()[:2]
    return http_url(host, port)


def serve(app: Starlette, sock: socket.socket, announce: Callable[[str], None]) -> None:
    """Serve `app` on `sock` until SIGINT or SIGTERM, then return (no exception for either)."""
    import uvicorn

    config = uvicorn.Config(
        app, log_level="warning", lifespan="off", timeout_graceful_shutdown=SHUTDOWN_SECONDS
    )
    server = uvicorn.Server(config)

    def stopped(signum: int, frame: FrameType | None) -> None:
        """uvicorn raises the signal that stopped it again once it is down: this is the end."""

    # uvicorn handles both signals while it serves, then restores these and raises the signal.
    previous = {s: signal.signal(s, stopped) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        announce(url_of(sock))
        server.run(sockets=[sock])
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        sock.close()

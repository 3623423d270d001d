"""The one lifecycle of the servers run on a thread (evals_pipeline/served.py), on real sockets:
started on a free loopback port, reachable at its url, and after stop() the port is released
and the serving thread is gone."""

from __future__ import annotations

import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evals_pipeline.served import LOOPBACK, ServedOnThread


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


def _serving_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(name)]


def test_serves_on_a_free_loopback_port_until_stopped() -> None:
    served = ServedOnThread(ThreadingHTTPServer(LOOPBACK, _Hello), name="hello-server")
    with served:
        assert served.host == "127.0.0.1" and served.port > 0
        assert served.url == f"http://127.0.0.1:{served.port}"
        with urllib.request.urlopen(served.url, timeout=5) as reply:
            assert reply.read() == b"hello"
        assert _serving_threads("hello-server")
    assert _refused(served.port)
    assert not _serving_threads("hello-server")
    served.stop()  # twice is fine
    with pytest.raises(RuntimeError, match="already started"):
        served.start()  # a stopped server's socket is closed: it cannot serve again


def test_a_server_never_started_is_closed_by_stop() -> None:
    server = ThreadingHTTPServer(LOOPBACK, _Hello)
    served = ServedOnThread(server, name="never-started")
    port = served.port
    served.stop()
    assert server.socket.fileno() == -1
    assert _refused(port)

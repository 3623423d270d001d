"""The lifecycles of the servers run on a thread (evals_pipeline/served.py), on real sockets:
started on a free loopback port, reachable at its url, and after stop() the port is released,
open connections are closed and the serving thread is gone."""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from evals_pipeline.served import LOOPBACK, AsgiOnThread, ServedOnThread


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


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


HELLO_APP = Starlette(routes=[Route("/", _hello)])


def test_an_asgi_app_serves_on_a_free_loopback_port_until_stopped() -> None:
    served = AsgiOnThread(HELLO_APP, name="hello-asgi")
    with pytest.raises(RuntimeError, match="not started"):
        _ = served.port
    with served:
        assert served.port > 0
        assert served.url == f"http://127.0.0.1:{served.port}"
        with urllib.request.urlopen(served.url, timeout=5) as reply:
            assert reply.read() == b"hello"
        assert _serving_threads("hello-asgi")
        # An idle keep-alive connection, as the agent CLIs leave open between model calls.
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=5)
        connection.request("GET", "/")
        assert connection.getresponse().read() == b"hello"
        began = time.monotonic()
    assert time.monotonic() - began < 2
    assert connection.sock is not None and connection.sock.recv(1) == b""  # closed by the server
    connection.close()
    assert _refused(served.port)
    assert not _serving_threads("hello-asgi")
    served.stop()  # twice is fine
    with pytest.raises(RuntimeError, match="already started"):
        served.start()


def test_an_asgi_app_on_a_port_in_use_fails_in_start() -> None:
    with AsgiOnThread(HELLO_APP, name="first-asgi") as first:
        second = AsgiOnThread(HELLO_APP, name="second-asgi", port=first.port)
        with pytest.raises(OSError):
            second.start()
        with urllib.request.urlopen(first.url, timeout=5) as reply:
            assert reply.read() == b"hello"  # the first one still serves
    assert not _serving_threads("second-asgi")

"""HTTP for the model server: routing, request bodies (chunked, gzip, deflate) and SSE framing.

HTTP/1.1 with keep-alive, because the CLIs' SDKs reuse connections; streamed replies use chunked
transfer encoding, one chunk per event.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import socket
import sys
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.model_server import anthropic, chat, responses
from evals_pipeline.model_server.actions import Unresolvable
from evals_pipeline.model_server.exchange import (
    ApiCodec,
    BadRequest,
    JsonReply,
    ParsedRequest,
    SseEvent,
    SseReply,
)
from evals_pipeline.model_server.log import RequestLog, redact_headers
from evals_pipeline.model_server.replies import ApiError, Reply, Responder

CODECS: dict[str, ApiCodec] = {
    "/messages": anthropic.CODEC,
    "/responses": responses.CODEC,
    "/chat/completions": chat.CODEC,
}


class _BodyError(EvalsPipelineError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ServerState:
    """What every request handler shares: the script's responder, the log, the listed model."""

    responder: Responder
    log: RequestLog
    model: str
    sequence: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


class ScriptedHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that can drop its idle keep-alive connections on shutdown."""

    daemon_threads = True
    # socketserver's default backlog of 5 drops connections when parallel runs connect at once,
    # and a dropped SYN costs the client a one-second retransmit.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], state: ServerState) -> None:
        self.state = state
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client dropping its keep-alive connection is routine
        super().handle_error(request, client_address)

    def server_close(self) -> None:
        """Drop the open connections first, so handler threads waiting on keep-alive end now."""
        self.close_connections()
        super().server_close()

    def close_connections(self) -> None:
        """Shut every open connection, so handler threads waiting on keep-alive end now."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Many small SSE chunks would otherwise wait on the client's delayed ACKs.
    disable_nagle_algorithm = True
    server: ScriptedHTTPServer

    def do_POST(self) -> None:
        self._handle()

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_OPTIONS(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the JSONL request log replaces the stderr access log

    @property
    def _state(self) -> ServerState:
        return self.server.state

    def _handle(self) -> None:
        seq = next(self._state.sequence)
        path = urlsplit(self.path).path
        # Azure OpenAI's v1 API lives under /openai/v1 (with ?api-version=): the same routes.
        route = path.removeprefix("/openai") if path.startswith("/openai/v1") else path
        route = route[3:] if route == "/v1" or route.startswith("/v1/") else route
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            body = _decode(self._read_body(), headers.get("content-encoding", ""))
        except _BodyError as exc:
            self.close_connection = True
            self._log_request(seq, None)
            self._finish(seq, None, JsonReply(exc.status, _generic_error(str(exc))))
            return
        self._log_request(seq, body)
        try:
            self._route(seq, self.command, route, headers, body)
        except ConnectionError:
            self._state.log.write("disconnected", seq=seq)
        except Exception as exc:
            # A server bug must reach the log and the client, not just a dropped connection.
            self.close_connection = True
            self._state.log.write(
                "server_error",
                f"{self.command} {self.path} → 500 {exc!r}",
                seq=seq,
                error=repr(exc),
            )
            with contextlib.suppress(OSError):
                self._send_json(
                    JsonReply(500, _generic_error(f"model server bug: {exc!r}", "api_error"))
                )

    def _route(self, seq: int, method: str, route: str, headers: dict[str, str], body: Any) -> None:
        codec = CODECS.get(route)
        if method == "POST" and codec is not None:
            self._api(seq, codec, headers, body)
        elif method == "POST" and route == "/messages/count_tokens":
            try:
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                reply = JsonReply(200, anthropic.count_tokens(body))
            except BadRequest as exc:
                reply = anthropic.render_error(
                    ApiError(400, "invalid_request_error", str(exc), None)
                )
            self._finish(seq, "anthropic", reply)
        elif method == "GET" and route == "/models":
            anthropic_shape = "anthropic-version" in headers
            listing = (anthropic.models if anthropic_shape else responses.models)(self._state.model)
            self._finish(seq, "anthropic" if anthropic_shape else "openai", JsonReply(200, listing))
        elif method == "HEAD" and route == "/":
            self._finish(seq, None, JsonReply(200, {}))
        else:
            message = f"no route for {method} {self.path}"
            self._state.log.write(
                "unhandled",
                f"{method} {self.path} → 404 unhandled",
                seq=seq,
                method=method,
                path=self.path,
            )
            self._send_json(JsonReply(404, _generic_error(message, "not_found_error")))

    def _api(self, seq: int, codec: ApiCodec, headers: dict[str, str], body: Any) -> None:
        request: ParsedRequest | None = None
        outcome: Reply | ApiError
        try:
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            request = codec.parse(body, headers)
            outcome = self._state.responder.answer(request, codec.call_prefix)
        except BadRequest as exc:
            outcome = ApiError(400, "invalid_request_error", str(exc), None)
        except Unresolvable as exc:
            turn = request.assistant_turns if request else None
            declared = ", ".join(request.tools) if request else ""
            message = f"model server: script turn {turn}: {exc}; the request declares: {declared}"
            outcome = ApiError(400, "invalid_request_error", message, turn)
        reply: JsonReply | SseReply
        if isinstance(outcome, ApiError):
            reply = codec.render_error(outcome)
        else:
            assert request is not None  # a Reply is only made from a parsed request
            reply = codec.render(request, outcome)
        self._log_reply(seq, codec.name, request, outcome, reply)
        self._send(reply)

    def _finish(self, seq: int, api: str | None, reply: JsonReply) -> None:
        status = reply.status
        self._state.log.write(
            "reply", f"{self.command} {self.path} → {status}", seq=seq, api=api, status=status
        )
        self._send_json(reply)

    def _log_request(self, seq: int, body: Any) -> None:
        self._state.log.write(
            "request",
            seq=seq,
            method=self.command,
            path=self.path,
            headers=redact_headers(self.headers.items()),
            body=body,
        )

    def _log_reply(
        self,
        seq: int,
        api: str,
        request: ParsedRequest | None,
        outcome: Reply | ApiError,
        reply: JsonReply | SseReply,
    ) -> None:
        entry: dict[str, Any] = {
            "seq": seq,
            "api": api,
            "status": reply.status if isinstance(reply, JsonReply) else 200,
            "stream": isinstance(reply, SseReply),
            "turn": outcome.turn,
        }
        if request is not None:
            entry["session"] = request.session
            entry["tools"] = list(request.tools)
            entry["cwd"] = request.cwd
        if isinstance(outcome, ApiError):
            entry["error"] = {
                "status": outcome.status,
                "type": outcome.type,
                "message": outcome.message,
                "attempt": outcome.attempt,
            }
            summary = f"{outcome.status} {outcome.type}: {outcome.message}"
        else:
            entry["side_request"] = outcome.turn is None
            entry["script_turn"] = outcome.script_turn
            entry["rule"] = outcome.rule
            entry["exhausted"] = outcome.turn is not None and outcome.script_turn != outcome.turn
            entry["text"] = outcome.text
            entry["calls"] = [call.to_log() for call in outcome.calls]
            entry["usage"] = {
                "input_tokens": outcome.input_tokens,
                "output_tokens": outcome.output_tokens,
            }
            if outcome.turn is None:
                summary = "side request (no tools): OK"
            else:
                names = ", ".join(call.name for call in outcome.calls) or "text"
                summary = f"turn {outcome.turn}: {names}"
        self._state.log.write("reply", f"{self.command} {self.path} → {api} {summary}", **entry)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        try:
            size = int(length)
        except ValueError:
            raise _BodyError(400, f"bad Content-Length {length!r}") from None
        return self.rfile.read(size)

    def _read_chunked(self) -> bytes:
        data = bytearray()
        while True:
            line = self.rfile.readline(65537)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise _BodyError(400, f"bad chunk size line {line[:40]!r}") from None
            if size == 0:
                # Trailer fields, if any, end with an empty line.
                while self.rfile.readline(65537).strip():
                    pass
                return bytes(data)
            data += self.rfile.read(size)
            self.rfile.readline(3)

    def _send(self, reply: JsonReply | SseReply) -> None:
        if isinstance(reply, JsonReply):
            self._send_json(reply)
        else:
            self._send_sse(reply)

    def _send_json(self, reply: JsonReply) -> None:
        payload = b"" if self.command == "HEAD" else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_sse(self, reply: SseReply) -> None:
        chunked = self.request_version != "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.close_connection = True  # HTTP/1.0 has no chunking: the close ends the body
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for event in reply.events:
            frame = _frame(event)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame) if chunked else frame)
            self.wfile.flush()
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _frame(event: SseEvent) -> bytes:
    data = event.data if isinstance(event.data, str) else json.dumps(event.data)
    head = f"event: {event.name}\n" if event.name else ""
    return f"{head}data: {data}\n\n".encode()


def _decode(raw: bytes, encoding: str) -> Any:
    """The request body as JSON (None when empty), after undoing its Content-Encoding."""
    encoding = encoding.strip().lower()
    try:
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            try:
                raw = zlib.decompress(raw)
            except zlib.error:
                raw = zlib.decompress(raw, -zlib.MAX_WBITS)  # raw deflate, as some clients send
        elif encoding not in ("", "identity"):
            raise _BodyError(415, f"unsupported Content-Encoding {encoding!r}")
    except (OSError, EOFError, zlib.error) as exc:
        raise _BodyError(400, f"cannot decode the {encoding} body: {exc}") from None
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # logged as is; the API route then rejects it as not a JSON object


def _generic_error(message: str, error_type: str = "invalid_request_error") -> dict[str, Any]:
    # Readable by both SDK families: Anthropic looks at error.type, OpenAI at error.message/code.
    return {
        "type": "error",
        "error": {"type": error_type, "message": message, "code": error_type, "param": None},
    }

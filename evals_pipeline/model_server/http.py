"""HTTP for the model server: a Starlette app routing the three APIs, decoding request bodies
(gzip, deflate; uvicorn undoes chunking) and framing SSE replies, one body chunk per event.

Every request gets a sequence number and a `request` log entry before it is routed, so unhandled
paths and bodies that cannot be decoded show in the log as well.
"""

from __future__ import annotations

import gzip
import itertools
import json
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

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
PREFIXES = ("", "/v1", "/openai/v1")
"""Where the routes live: bare, under `/v1`, and under Azure OpenAI's v1 API (`/openai/v1`, with
`?api-version=`)."""

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
"""The methods answered at all: on a path without a route, each is logged as unhandled (404)."""


class _BodyError(EvalsPipelineError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ServerState:
    """What every request shares: the script's responder, the log, the listed model."""

    responder: Responder
    log: RequestLog
    model: str
    sequence: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


@dataclass(frozen=True)
class _Exchange:
    """One request as the handlers see it: its number, target (path and query), headers, body."""

    state: ServerState
    seq: int
    method: str
    target: str
    headers: dict[str, str]
    body: Any


_Handler = Callable[[_Exchange], Response]


def make_app(state: ServerState) -> Starlette:
    """The model server's ASGI app over `state`."""
    routes: list[BaseRoute] = []
    for prefix in PREFIXES:
        for path, codec in CODECS.items():
            routes.append(Route(prefix + path, _endpoint(state, _api(codec)), methods=["POST"]))
        routes.append(
            Route(
                prefix + "/messages/count_tokens", _endpoint(state, _count_tokens), methods=["POST"]
            )
        )
        routes.append(Route(prefix + "/models", _endpoint(state, _models), methods=["GET"]))
        routes.append(Route(prefix + "/", _endpoint(state, _head_root), methods=["HEAD"]))
    # Last, for any method: a known path asked with another method is unhandled too, not a 405.
    routes.append(Route("/{path:path}", _endpoint(state, _unhandled), methods=METHODS))
    return Starlette(routes=routes)


def _endpoint(state: ServerState, handle: _Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        seq = next(state.sequence)
        scope = request.scope
        query = scope.get("query_string", b"").decode("latin-1")
        target = scope.get("raw_path", b"").decode("latin-1") or scope["path"]
        target += f"?{query}" if query else ""
        headers = dict(request.headers.items())  # Starlette's names are lower-case already
        method = request.method
        try:
            body = _decode(await request.body(), headers.get("content-encoding", ""))
        except ClientDisconnect:
            state.log.write("disconnected", seq=seq)
            return Response(status_code=400, headers={"connection": "close"})
        except _BodyError as exc:
            exchange = _Exchange(state, seq, method, target, headers, None)
            _log_request(exchange)
            response = _finish(exchange, None, JsonReply(exc.status, _generic_error(str(exc))))
            response.headers["connection"] = "close"
            return response
        exchange = _Exchange(state, seq, method, target, headers, body)
        _log_request(exchange)
        try:
            return handle(exchange)
        except Exception as exc:
            # A server bug must reach the log and the client, not just a dropped connection.
            state.log.write(
                "server_error",
                f"{method} {target} → 500 {exc!r}",
                seq=seq,
                error=repr(exc),
            )
            error = _generic_error(f"model server bug: {exc!r}", "api_error")
            response = _json_response(exchange, JsonReply(500, error))
            response.headers["connection"] = "close"
            return response

    return endpoint


def _api(codec: ApiCodec) -> _Handler:
    def handle(exchange: _Exchange) -> Response:
        request: ParsedRequest | None = None
        outcome: Reply | ApiError
        body = exchange.body
        try:
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            request = codec.parse(body, exchange.headers)
            outcome = exchange.state.responder.answer(request, codec.call_prefix)
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
        _log_reply(exchange, codec.name, request, outcome, reply)
        if isinstance(reply, JsonReply):
            return _json_response(exchange, reply)
        return _SseResponse(exchange, reply)

    return handle


def _count_tokens(exchange: _Exchange) -> Response:
    try:
        if not isinstance(exchange.body, dict):
            raise BadRequest("the body must be a JSON object")
        reply = JsonReply(200, anthropic.count_tokens(exchange.body))
    except BadRequest as exc:
        reply = anthropic.render_error(ApiError(400, "invalid_request_error", str(exc), None))
    return _finish(exchange, "anthropic", reply)


def _models(exchange: _Exchange) -> Response:
    anthropic_shape = "anthropic-version" in exchange.headers
    listing = (anthropic.models if anthropic_shape else responses.models)(exchange.state.model)
    return _finish(exchange, "anthropic" if anthropic_shape else "openai", JsonReply(200, listing))


def _head_root(exchange: _Exchange) -> Response:
    return _finish(exchange, None, JsonReply(200, {}))


def _unhandled(exchange: _Exchange) -> Response:
    method, target = exchange.method, exchange.target
    exchange.state.log.write(
        "unhandled",
        f"{method} {target} → 404 unhandled",
        seq=exchange.seq,
        method=method,
        path=target,
    )
    message = f"no route for {method} {target}"
    return _json_response(exchange, JsonReply(404, _generic_error(message, "not_found_error")))


def _finish(exchange: _Exchange, api: str | None, reply: JsonReply) -> Response:
    status = reply.status
    exchange.state.log.write(
        "reply",
        f"{exchange.method} {exchange.target} → {status}",
        seq=exchange.seq,
        api=api,
        status=status,
    )
    return _json_response(exchange, reply)


def _json_response(exchange: _Exchange, reply: JsonReply) -> Response:
    payload = b"" if exchange.method == "HEAD" else json.dumps(reply.body).encode()
    return Response(
        payload,
        status_code=reply.status,
        headers={"content-type": "application/json", **reply.headers},
    )


class _SseResponse(StreamingResponse):
    """`text/event-stream` (no charset parameter, as the APIs send it), one chunk per event; a
    client that leaves mid-stream is logged, not an error."""

    def __init__(self, exchange: _Exchange, reply: SseReply) -> None:
        self._exchange = exchange
        super().__init__(
            _frames(reply.events),
            headers={
                "content-type": "text/event-stream",
                "cache-control": "no-cache",
                **reply.headers,
            },
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except (ClientDisconnect, OSError):
            self._exchange.state.log.write("disconnected", seq=self._exchange.seq)


async def _frames(events: list[SseEvent]) -> AsyncIterator[bytes]:
    for event in events:
        yield _frame(event)


def _log_request(exchange: _Exchange) -> None:
    exchange.state.log.write(
        "request",
        seq=exchange.seq,
        method=exchange.method,
        path=exchange.target,
        headers=redact_headers(exchange.headers.items()),
        body=exchange.body,
    )


def _log_reply(
    exchange: _Exchange,
    api: str,
    request: ParsedRequest | None,
    outcome: Reply | ApiError,
    reply: JsonReply | SseReply,
) -> None:
    entry: dict[str, Any] = {
        "seq": exchange.seq,
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
    exchange.state.log.write(
        "reply", f"{exchange.method} {exchange.target} → {api} {summary}", **entry
    )


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

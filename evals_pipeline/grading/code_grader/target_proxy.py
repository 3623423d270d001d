"""The target proxy (AgentV reference §6.4): code graders ask an LLM without ever holding a key.

One proxy per grader invocation: a threading HTTP server on 127.0.0.1 (port 0) and a fresh
random bearer token. The grader gets only `AGENTV_TARGET_PROXY_URL` and
`AGENTV_TARGET_PROXY_TOKEN`; the pipeline's clients make the calls. Every call needs the token
(401 otherwise), and at most `max_calls` model calls are made (429 after that).

| endpoint | request | response |
|---|---|---|
| `GET /info` | | `{targetName, maxCalls, callCount, availableTargets}` |
| `POST /invoke` | `{question, systemPrompt?, target?, evalCaseId?, attempt?}` | `{output, rawText, tokenUsage}` |
| `POST /invokeBatch` | `{requests: [...]}` | `{responses: [{output, rawText, tokenUsage?}]}` |
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.grading.context import LlmClientSource
from evals_pipeline.llm.client import LlmCallError, LlmConfigError, LlmRequest
from evals_pipeline.llm.usage import LlmUsage, usage_of
from evals_pipeline.models.assertions import DEFAULT_PROXY_MAX_CALLS
from evals_pipeline.served import LOOPBACK, ServedOnThread, StartStop

URL_ENV = "AGENTV_TARGET_PROXY_URL"
TOKEN_ENV = "AGENTV_TARGET_PROXY_TOKEN"
MAX_BODY_BYTES = 10 * 1024 * 1024
BATCH_WORKERS = 4


class _Refused(EvalsPipelineError):
    """A request answered with an error status and `{"error": message}`."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TargetProxy(StartStop):
    """A loopback HTTP proxy from one code-grader run to the pipeline's LLM clients.

    Use as a context manager: the server runs on a daemon thread while the grader runs, and
    `call_count` and `usage` say what it spent afterwards.
    """

    def __init__(
        self,
        clients: LlmClientSource,
        *,
        default_target: str | None,
        available: Sequence[str],
        max_calls: int = DEFAULT_PROXY_MAX_CALLS,
    ) -> None:
        self._clients = clients
        self.default_target = default_target
        self.available = list(
            dict.fromkeys([*([default_target] if default_target else []), *available])
        )
        self.max_calls = max_calls
        self.token = secrets.token_urlsafe(32)
        self._lock = threading.Lock()
        self._calls = 0
        self._usage = LlmUsage()
        self._served: ServedOnThread[ThreadingHTTPServer] | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> TargetProxy:
        if self._served is not None:
            raise RuntimeError("the target proxy is already started")
        server = ThreadingHTTPServer(LOOPBACK, _Handler)
        server.daemon_threads = True
        server.proxy = self  # type: ignore[attr-defined]
        self._served = ServedOnThread(server, name="target-proxy").start()
        return self

    def stop(self) -> None:
        served, self._served = self._served, None
        if served is not None:
            served.stop()

    @property
    def host(self) -> str:
        return LOOPBACK[0]

    @property
    def port(self) -> int:
        if self._served is None:
            raise RuntimeError("the target proxy is not started")
        return self._served.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def env(self) -> dict[str, str]:
        """The two variables a grader gets: the URL and this invocation's token."""
        return {URL_ENV: self.url, TOKEN_ENV: self.token}

    @property
    def call_count(self) -> int:
        with self._lock:
            return self._calls

    @property
    def usage(self) -> LlmUsage:
        with self._lock:
            return self._usage

    # --- the endpoints ----------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        expected = f"Bearer {self.token}"
        return header is not None and hmac.compare_digest(header.encode(), expected.encode())

    def info(self) -> dict[str, Any]:
        return {
            "targetName": self.default_target,
            "maxCalls": self.max_calls,
            "callCount": self.call_count,
            "availableTargets": self.available,
        }

    def invoke(self, body: Any) -> dict[str, Any]:
        question, system, target = self._parse_request(body)
        self._reserve(1)
        return self._call(target, question, system)

    def invoke_batch(self, body: Any) -> dict[str, Any]:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list):
            raise _Refused(HTTPStatus.BAD_REQUEST, "the body must be {requests: [...]}")
        parsed: list[tuple[str, str, str] | str] = []
        for item in requests:
            try:
                parsed.append(self._parse_request(item))
            except _Refused as exc:
                parsed.append(exc.message)
        valid = [p for p in parsed if not isinstance(p, str)]
        with self._lock:
            if self._calls + len(requests) > self.max_calls:
                raise _Refused(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    f"the batch of {len(requests)} would exceed max_calls ({self.max_calls}; "
                    f"{self._calls} used)",
                )
            self._calls += len(valid)

        def one(item: tuple[str, str, str] | str) -> dict[str, Any]:
            if isinstance(item, str):
                return {"output": [], "rawText": f"Error: {item}"}
            question, system, target = item
            try:
                return self._call(target, question, system)
            except _Refused as exc:
                return {"output": [], "rawText": f"Error: {exc.message}"}

        with ThreadPoolExecutor(max_workers=max(1, min(BATCH_WORKERS, len(parsed)))) as pool:
            return {"responses": list(pool.map(one, parsed))}

    def _parse_request(self, body: Any) -> tuple[str, str, str]:
        if not isinstance(body, dict):
            raise _Refused(HTTPStatus.BAD_REQUEST, "the request must be a JSON object")
        question = body.get("question")
        if not isinstance(question, str) or not question.strip():
            raise _Refused(HTTPStatus.BAD_REQUEST, "'question' must be a non-empty string")
        system = body.get("systemPrompt") or ""
        if not isinstance(system, str):
            raise _Refused(HTTPStatus.BAD_REQUEST, "'systemPrompt' must be a string")
        target = body.get("target") or self.default_target
        if target is None:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                f"no default target; pass 'target' (one of: {', '.join(self.available)})",
            )
        if target not in self.available:
            raise _Refused(
                HTTPStatus.BAD_REQUEST,
                f"unknown target {target!r}; available: {', '.join(self.available) or 'none'}",
            )
        return question, system, str(target)

    def _reserve(self, count: int) -> None:
        with self._lock:
            if self._calls + count > self.max_calls:
                raise _Refused(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    f"max_calls ({self.max_calls}) reached",
                )
            self._calls += count

    def _call(self, target: str, question: str, system: str) -> dict[str, Any]:
        try:
            reply = self._clients.get(target).complete(LlmRequest.ask(question, system=system))
        except (LlmCallError, LlmConfigError, KeyError) as exc:
            self._add(LlmUsage(errors=1))
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise _Refused(HTTPStatus.BAD_GATEWAY, str(message)) from None
        self._add(usage_of(reply))
        return {
            "output": [{"role": "assistant", "content": reply.text}],
            "rawText": reply.text,
            "tokenUsage": {"input": reply.input_tokens, "output": reply.output_tokens},
        }

    def _add(self, usage: LlmUsage) -> None:
        with self._lock:
            self._usage = self._usage + usage


class _Handler(BaseHTTPRequestHandler):
    server_version = "evals-pipeline-target-proxy"
    protocol_version = "HTTP/1.1"

    @property
    def _proxy(self) -> TargetProxy:
        proxy: TargetProxy = self.server.proxy  # type: ignore[attr-defined]
        return proxy

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the grader's own output is what matters; keep the pipeline's log clean

    def _handle(self, method: str) -> None:
        try:
            body = self._read_body()
            if not self._proxy.authorized(self.headers.get("Authorization")):
                raise _Refused(HTTPStatus.UNAUTHORIZED, "Unauthorized")
            route = self.path.split("?", 1)[0].rstrip("/")
            if method == "GET" and route == "/info":
                self._send(HTTPStatus.OK, self._proxy.info())
            elif method == "POST" and route == "/invoke":
                self._send(HTTPStatus.OK, self._proxy.invoke(self._json(body)))
            elif method == "POST" and route == "/invokeBatch":
                self._send(HTTPStatus.OK, self._proxy.invoke_batch(self._json(body)))
            else:
                raise _Refused(HTTPStatus.NOT_FOUND, f"no endpoint {method} {self.path}")
        except _Refused as exc:
            self._send(exc.status, {"error": exc.message})
        except Exception as exc:  # a bug here must answer, not hang the grader
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise _Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "the request body is too large")
        return self.rfile.read(length) if length > 0 else b""

    @staticmethod
    def _json(body: bytes) -> Any:
        try:
            return json.loads(body or b"null")
        except ValueError as exc:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"the body is not valid JSON: {exc}") from None

    def _send(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

"""What the Anthropic and OpenAI clients share: the API key, the call limit, cost and errors.

Each provider module only turns an LlmRequest into its SDK call and the SDK's answer into a
SdkAnswer; retries with backoff on 408/409/429/5xx are the SDKs' own (`max_retries`, honouring
`retry-after`), so a call error here is final.
"""

from __future__ import annotations

import importlib
import os
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

from evals_pipeline.llm.client import LlmCallError, LlmConfigError, LlmReply, LlmRequest
from evals_pipeline.llm.limits import CallLimit, call_limit
from evals_pipeline.llm.usage import LlmUsage, UsageMeter, cost_usd
from evals_pipeline.models.targets import LlmTarget
from evals_pipeline.provider_limits import provider_slot

MODEL_SERVER_KEY = "model-server-no-key"
"""The key sent to a scripted model server, which needs none; a real key never goes there."""

RETRIED_STATUSES = frozenset({408, 409, 429})
"""Statuses the SDKs retry, besides every 5xx and connection errors."""


@dataclass(frozen=True)
class SdkAnswer:
    """One API answer in the provider-neutral terms a reply is built from."""

    text: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    """Part of input_tokens that was read from the prompt cache (priced as cached input)."""


@dataclass(frozen=True)
class Settings:
    """A request's effective temperature and token limit (the request's, else the target's)."""

    temperature: float
    max_output_tokens: int


class SdkClient(ABC):
    """An LlmClient over one official SDK client, limited per (provider, base_url)."""

    provider: ClassVar[str]
    key_variable: ClassVar[str]
    """The environment variable read when the target has no `api_key`."""
    sdk_name: ClassVar[str]
    """The SDK's module, imported on first use: `anthropic` alone takes seconds to import, which
    a run without LLM targets should not pay."""

    @property
    def sdk(self) -> ModuleType:
        """The SDK module, for its client and exception classes."""
        return importlib.import_module(self.sdk_name)

    def __init__(
        self, target: LlmTarget, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        """`base_url` and `api_key` override the target's (the scripted model server's URL)."""
        self._target = target
        self._base_url = base_url if base_url is not None else target.base_url
        self._limit = call_limit(self.provider, self._base_url, target.max_concurrency)
        self._meter = UsageMeter()
        self._client = self._make_client(self._api_key(api_key))

    @property
    def name(self) -> str:
        return self._target.name

    @property
    def model(self) -> str:
        return self._target.model

    @property
    def target(self) -> LlmTarget:
        return self._target

    @property
    def base_url(self) -> str | None:
        """The URL calls go to; None means the SDK's default (or its environment variable)."""
        return self._base_url

    @property
    def limit(self) -> CallLimit:
        """The call limit this client shares with every client of the same endpoint."""
        return self._limit

    @property
    def usage(self) -> LlmUsage:
        """Every call this client made so far: tokens, cost and failed calls."""
        return self._meter.total

    def complete(self, request: LlmRequest) -> LlmReply:
        """Send one request (waiting for a free slot first); raises LlmCallError on failure."""
        target = self._target
        settings = Settings(
            temperature=target.temperature if request.temperature is None else request.temperature,
            max_output_tokens=request.max_output_tokens or target.max_output_tokens,
        )
        # The deployment's limit for the provider, then the endpoint's (targets' max_concurrency).
        with provider_slot(self.provider), self._limit.slot():
            started = time.monotonic()
            try:
                answer = self._send(request, settings)
            except self.sdk.APIError as exc:
                self._meter.record_error()
                # `from None`: the SDK exception holds the request, headers (the key) included.
                raise self._call_error(exc) from None
            except LlmCallError:
                self._meter.record_error()
                raise
            duration_ms = round((time.monotonic() - started) * 1000)
        reply = LlmReply(
            text=answer.text,
            model=answer.model or target.model,
            input_tokens=answer.input_tokens,
            output_tokens=answer.output_tokens,
            cost_usd=cost_usd(
                target.pricing,
                answer.input_tokens,
                answer.output_tokens,
                answer.cached_input_tokens,
            ),
            duration_ms=duration_ms,
        )
        self._meter.record(reply)
        return reply

    @abstractmethod
    def _make_client(self, api_key: str) -> Any:
        """The SDK client for this target's base URL, timeout and retries."""

    @abstractmethod
    def _send(self, request: LlmRequest, settings: Settings) -> SdkAnswer:
        """One SDK call; SDK exceptions propagate and are mapped by `complete`."""

    def _sdk_options(self, api_key: str) -> dict[str, Any]:
        """The constructor arguments both SDKs take alike."""
        options: dict[str, Any] = {
            "api_key": api_key,
            "base_url": self._base_url,
            "max_retries": self._target.max_retries,
        }
        if self._target.timeout_seconds is not None:
            options["timeout"] = self._target.timeout_seconds
        return options

    def _api_key(self, explicit: str | None) -> str:
        target = self._target
        if explicit:
            return explicit
        if target.model_server is not None:
            # The scripted server needs no key; never send it a real one from the environment.
            return target.api_key or MODEL_SERVER_KEY
        key = target.api_key or os.environ.get(self.key_variable)
        if not key:
            raise LlmConfigError(
                f"LLM target {target.name!r} ({self.provider}) has no API key: set "
                f"{self.key_variable} in the environment or give the target "
                f"`api_key: ${{{{ {self.key_variable} }}}}`"
            )
        return key

    def _call_error(self, exc: Exception) -> LlmCallError:
        sdk = self.sdk
        retries = self._target.max_retries
        status: int | None = None
        if isinstance(exc, sdk.APIStatusError):
            status = exc.status_code
            message = _api_message(exc.body) or exc.message
        elif isinstance(exc, sdk.APITimeoutError):
            timeout = self._target.timeout_seconds
            message = f"timed out after {timeout:g} s" if timeout else "timed out"
        elif isinstance(exc, sdk.APIConnectionError):
            cause = f": {exc.__cause__}" if exc.__cause__ else ""
            message = f"cannot connect to {self._base_url or 'the API'}{cause}"
        else:
            message = str(exc)
        retried = status is None or status in RETRIED_STATUSES or status >= 500
        if retries and retried and not isinstance(exc, sdk.APIResponseValidationError):
            message += f" (after {retries} {'retry' if retries == 1 else 'retries'})"
        return LlmCallError(self._target.name, message, status)


def _api_message(body: object) -> str | None:
    """`type: message` from an API error body in Anthropic's or OpenAI's shape."""
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return None
    kind = error.get("type")
    return f"{kind}: {error['message']}" if isinstance(kind, str) and kind else error["message"]

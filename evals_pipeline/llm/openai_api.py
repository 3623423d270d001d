"""OpenAI's Chat Completions and Responses APIs through the official `openai` SDK, and the
providers that speak them: Azure OpenAI, Gemini's and OpenRouter's OpenAI-compatible endpoints.

Base URLs follow AgentV: an openai target's `base_url` gets `/v1` unless it ends with it (so a
compatible server is named by its root, as in AgentV's targets files).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, ClassVar

from evals_pipeline.llm.client import LlmCallError, LlmConfigError, LlmRequest
from evals_pipeline.llm.sdk import SdkAnswer, SdkClient, Settings
from evals_pipeline.models.targets import AzureTarget, LlmTarget, OpenAITarget

if TYPE_CHECKING:
    import openai

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"


def openai_base_url(url: str | None) -> str | None:
    """AgentV's rule for an openai target's URL: `/v1` appended unless it ends with it (or is an
    Azure deployment URL); None stays the SDK's default."""
    if url is None or not url.strip():
        return None
    trimmed = url.strip().rstrip("/")
    if trimmed.endswith("/v1") or re.search(
        r"\.openai\.azure\.com/openai/deployments/[^/]+$", trimmed
    ):
        return trimmed
    return f"{trimmed}/v1"


def azure_base_url(endpoint: str | None) -> str | None:
    """AgentV's Azure base: a resource name or URL, ending in `/openai/v1`."""
    if endpoint is None or not endpoint.strip():
        return None
    trimmed = endpoint.strip().rstrip("/")
    if not re.match(r"^https?://", trimmed, re.I):
        trimmed = f"https://{trimmed}.openai.azure.com"
    if trimmed.endswith("/openai/v1"):
        return trimmed
    if trimmed.endswith("/openai"):
        return f"{trimmed}/v1"
    return f"{trimmed}/openai/v1"


class OpenAIClient(SdkClient):
    """An `openai` target: `chat.completions.create` or `responses.create` by `api_format`."""

    provider: ClassVar[str] = "openai"
    key_variable: ClassVar[str] = "OPENAI_API_KEY"
    sdk_name: ClassVar[str] = "openai"

    def __init__(
        self, target: LlmTarget, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        """`base_url` and `api_key` override the target's (the scripted model server's URL)."""
        self.api_format = target.api_format if isinstance(target, OpenAITarget) else "chat"
        base = base_url if base_url is not None else self.default_base_url(target)
        super().__init__(target, base_url=base, api_key=api_key)

    def default_base_url(self, target: LlmTarget) -> str | None:
        """Where calls go when no model server overrides it."""
        return openai_base_url(target.base_url)

    def _make_client(self, api_key: str) -> openai.OpenAI:
        client: openai.OpenAI = self.sdk.OpenAI(**self._sdk_options(api_key))
        return client

    def _send(self, request: LlmRequest, settings: Settings) -> SdkAnswer:
        if self.api_format == "responses":
            return self._responses(request, settings)
        return self._chat(request, settings)

    def _chat(self, request: LlmRequest, settings: Settings) -> SdkAnswer:
        system = [{"role": "system", "content": request.system}] if request.system else []
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        completion = self._client.chat.completions.create(
            model=self.model,
            messages=[*system, *messages],
            temperature=settings.temperature,
            # `max_tokens` is deprecated and refused by reasoning models.
            max_completion_tokens=settings.max_output_tokens,
        )
        if not completion.choices:
            raise LlmCallError(self.name, "the API answered with no choices")
        usage = completion.usage
        details = usage.prompt_tokens_details if usage else None
        return SdkAnswer(
            text=completion.choices[0].message.content or "",
            model=completion.model,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            cached_input_tokens=(details.cached_tokens or 0) if details else 0,
        )

    def _responses(self, request: LlmRequest, settings: Settings) -> SdkAnswer:
        params: dict[str, Any] = {
            "model": self.model,
            "input": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": settings.temperature,
            "max_output_tokens": settings.max_output_tokens,
            "store": False,  # a judge's exchange has no use on OpenAI's side
        }
        if request.system:
            params["instructions"] = request.system
        response = self._client.responses.create(**params)
        if response.error is not None:
            raise LlmCallError(self.name, f"{response.error.code}: {response.error.message}")
        usage = response.usage
        # Compatible servers may leave the details out.
        details = getattr(usage, "input_tokens_details", None)
        return SdkAnswer(
            text=response.output_text,
            model=response.model,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            cached_input_tokens=getattr(details, "cached_tokens", 0) or 0,
        )


class AzureClient(OpenAIClient):
    """An `azure` target: the Responses API at `<resource>/openai/v1` with `?api-version=`, the
    deployment as the model and the key in the `api-key` header, as AgentV calls Azure."""

    provider: ClassVar[str] = "azure"
    key_variable: ClassVar[str] = "AZURE_OPENAI_API_KEY"

    def __init__(
        self, target: LlmTarget, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(target, base_url=base_url, api_key=api_key)
        self.api_format = "responses"

    def default_base_url(self, target: LlmTarget) -> str | None:
        base = azure_base_url(target.base_url)
        if base is None:
            raise LlmConfigError(
                f"LLM target {target.name!r} (azure) has no endpoint: give it endpoint: "
                "https://NAME.openai.azure.com (or resource: NAME)"
            )
        return base

    def _make_client(self, api_key: str) -> openai.OpenAI:
        assert isinstance(self.target, AzureTarget)
        options = self._sdk_options(api_key)
        options["default_query"] = {"api-version": self.target.api_version}
        options["default_headers"] = {"api-key": api_key}
        client: openai.OpenAI = self.sdk.OpenAI(**options)
        return client


class GeminiClient(OpenAIClient):
    """A `gemini` target: Google's OpenAI-compatible Chat Completions endpoint."""

    provider: ClassVar[str] = "gemini"
    key_variable: ClassVar[str] = "GEMINI_API_KEY"

    def default_base_url(self, target: LlmTarget) -> str | None:
        return target.base_url or GEMINI_BASE_URL


class OpenRouterClient(OpenAIClient):
    """An `openrouter` target: OpenRouter's OpenAI-compatible Chat Completions API."""

    provider: ClassVar[str] = "openrouter"
    key_variable: ClassVar[str] = "OPENROUTER_API_KEY"

    def default_base_url(self, target: LlmTarget) -> str | None:
        return target.base_url or OPENROUTER_BASE_URL

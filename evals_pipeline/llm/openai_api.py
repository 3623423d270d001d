"""OpenAI's Chat Completions and Responses APIs through the official `openai` SDK.

Any compatible server works too: `base_url` is used as given, like the SDK (with its `/v1`).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

import openai

from evals_pipeline.llm.client import LlmCallError, LlmRequest
from evals_pipeline.llm.sdk import SdkAnswer, SdkClient, Settings
from evals_pipeline.models.targets import OpenAITarget


class OpenAIClient(SdkClient):
    """An `openai` target: `chat.completions.create` or `responses.create` by `api_format`."""

    provider: ClassVar[str] = "openai"
    key_variable: ClassVar[str] = "OPENAI_API_KEY"
    sdk: ClassVar[ModuleType] = openai

    def __init__(
        self, target: OpenAITarget, *, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        """`base_url` and `api_key` override the target's (the scripted model server's URL)."""
        self.api_format = target.api_format
        super().__init__(target, base_url=base_url, api_key=api_key)

    def _make_client(self, api_key: str) -> openai.OpenAI:
        return openai.OpenAI(**self._sdk_options(api_key))

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

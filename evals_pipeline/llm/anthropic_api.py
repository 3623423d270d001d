"""Anthropic's Messages API through the official `anthropic` SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evals_pipeline.llm.client import LlmRequest
from evals_pipeline.llm.sdk import SdkAnswer, SdkClient, Settings

if TYPE_CHECKING:
    import anthropic


class AnthropicClient(SdkClient):
    """An `anthropic` target: `messages.create` with the system prompt kept apart.

    The target's `temperature` is not sent: `messages.create` of the installed SDK (2.12) has
    no `temperature` parameter any more, and the API version it speaks refuses sampling
    parameters. `thinking_budget` turns on extended thinking with that budget (AgentV's key).
    """

    provider: ClassVar[str] = "anthropic"
    key_variable: ClassVar[str] = "ANTHROPIC_API_KEY"
    sdk_name: ClassVar[str] = "anthropic"

    def _make_client(self, api_key: str) -> anthropic.Anthropic:
        client: anthropic.Anthropic = self.sdk.Anthropic(**self._sdk_options(api_key))
        return client

    def _send(self, request: LlmRequest, settings: Settings) -> SdkAnswer:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": settings.max_output_tokens,
        }
        if request.system:
            params["system"] = request.system
        budget = getattr(self.target, "thinking_budget", None)
        if budget:
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        message = self._client.messages.create(**params)
        usage = message.usage
        cache_read = usage.cache_read_input_tokens or 0
        cache_write = usage.cache_creation_input_tokens or 0
        return SdkAnswer(
            text="".join(block.text for block in message.content if block.type == "text"),
            model=message.model,
            # Anthropic counts cached prompt tokens apart; the reply's input is the whole prompt.
            input_tokens=usage.input_tokens + cache_read + cache_write,
            output_tokens=usage.output_tokens,
            cached_input_tokens=cache_read,
        )

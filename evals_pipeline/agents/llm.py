"""LLM providers as targets: a model answering the prompt through its API, no agent CLI."""

from __future__ import annotations

from evals_pipeline.adapters.llm import LlmAdapter
from evals_pipeline.agents.kind import AgentKind
from evals_pipeline.models.targets import (
    AnthropicTarget,
    AzureTarget,
    GeminiTarget,
    OpenAITarget,
    OpenRouterTarget,
)

_ADAPTER = LlmAdapter()

AGENTS: tuple[AgentKind, ...] = tuple(
    AgentKind(target=model, adapter=_ADAPTER)
    for model in (AnthropicTarget, OpenAITarget, AzureTarget, GeminiTarget, OpenRouterTarget)
)
"""One per LLM provider (anthropic, openai, azure, gemini, openrouter), sharing one adapter."""

"""LLM calls for judges: one interface over the Anthropic and OpenAI SDKs, and structured replies.

`LlmClients` makes clients from LLM targets (starting scripted model servers for targets with
`model_server:`); `complete_structured` turns a reply into a validated pydantic model.
"""

from evals_pipeline.llm.anthropic_api import AnthropicClient
from evals_pipeline.llm.client import (
    LlmCallError,
    LlmClient,
    LlmConfigError,
    LlmMessage,
    LlmReply,
    LlmRequest,
)
from evals_pipeline.llm.clients import LlmClients, make_client, model_server_url
from evals_pipeline.llm.limits import CallLimit, call_limit
from evals_pipeline.llm.openai_api import OpenAIClient
from evals_pipeline.llm.sdk import SdkClient
from evals_pipeline.llm.structured import (
    ReplyProblem,
    StructuredReply,
    complete_structured,
    extract_json,
    parse_reply,
)
from evals_pipeline.llm.usage import LlmUsage, UsageMeter, cost_usd

__all__ = [
    "AnthropicClient",
    "CallLimit",
    "LlmCallError",
    "LlmClient",
    "LlmClients",
    "LlmConfigError",
    "LlmMessage",
    "LlmReply",
    "LlmRequest",
    "LlmUsage",
    "OpenAIClient",
    "ReplyProblem",
    "SdkClient",
    "StructuredReply",
    "UsageMeter",
    "call_limit",
    "complete_structured",
    "cost_usd",
    "extract_json",
    "make_client",
    "model_server_url",
    "parse_reply",
]

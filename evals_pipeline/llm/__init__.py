"""LLM calls for judges: one interface over the Anthropic and OpenAI SDKs, and structured replies.

`LlmClients` makes clients from LLM targets (starting scripted model servers for targets with
`model_server:`); `complete_structured` turns a reply into a validated pydantic model.
"""

from typing import TYPE_CHECKING

from evals_pipeline.lazy_exports import lazy_exports

if TYPE_CHECKING:
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

# Each name loads its module when first used: the clients bring the Anthropic and OpenAI SDKs and
# the scripted model server, which the models that only name `LlmUsage` (a grade, a report) and
# the steps without LLM graders never need.
_MODULES = {
    "AnthropicClient": "anthropic_api",
    "CallLimit": "limits",
    "LlmCallError": "client",
    "LlmClient": "client",
    "LlmClients": "clients",
    "LlmConfigError": "client",
    "LlmMessage": "client",
    "LlmReply": "client",
    "LlmRequest": "client",
    "LlmUsage": "usage",
    "OpenAIClient": "openai_api",
    "ReplyProblem": "structured",
    "SdkClient": "sdk",
    "StructuredReply": "structured",
    "UsageMeter": "usage",
    "call_limit": "limits",
    "complete_structured": "structured",
    "cost_usd": "usage",
    "extract_json": "structured",
    "make_client": "clients",
    "model_server_url": "clients",
    "parse_reply": "structured",
}


__getattr__ = lazy_exports(__name__, _MODULES)


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

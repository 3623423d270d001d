"""LLM providers as the target under test (AgentV allows it): the input sent as AgentV sends it
to an LLM provider, the answer and its usage recorded in the cli output-file contract."""

from __future__ import annotations

import json
from typing import Any, cast

from evals_pipeline.adapters.base import RunContext
from evals_pipeline.llm import LlmCallError, LlmClients, LlmConfigError, LlmMessage, LlmRequest
from evals_pipeline.llm.client import LlmReply
from evals_pipeline.llm.sdk import RETRIED_STATUSES
from evals_pipeline.model_server import ScriptError
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import ErrorKind, RecordError, agent_error
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.targets import LlmTarget, LlmTargetSpec
from evals_pipeline.process import now_ms
from evals_pipeline.suites.prompt import ChatPrompt, chat_prompt


def llm_request(prompt: ChatPrompt) -> LlmRequest:
    """The provider-neutral request for a chat prompt."""
    return LlmRequest(
        system=prompt.system,
        messages=tuple(LlmMessage(role=role, content=text) for role, text in prompt.turns),
    )


def output_record(replies: list[LlmReply], duration_ms: int) -> dict[str, Any]:
    """The cli output-file JSON for an LLM run: each reply an assistant message, usage summed."""
    costs = [r.cost_usd for r in replies if r.cost_usd is not None]
    record: dict[str, Any] = {
        "output": [{"role": "assistant", "content": r.text} for r in replies],
        "token_usage": {
            "input": sum(r.input_tokens for r in replies),
            "output": sum(r.output_tokens for r in replies),
        },
        "duration_ms": duration_ms,
    }
    if costs:
        record["cost_usd"] = sum(costs)
    return record


def call_error_kind(status: int | None) -> ErrorKind:
    """refused for a 4xx the SDKs do not retry (auth, permission, a bad request, a policy): the
    API turned the request down as asked; provider for the rest (5xx, rate limits and timeouts
    after retries, no connection): the API's own trouble."""
    if status is not None and 400 <= status < 500 and status not in RETRIED_STATUSES:
        return "refused"
    return "provider"


class LlmAdapter:
    """One call to the target's model (one per turn for a conversation, later); a failed call is
    the run's error with the API's message."""

    def run(self, case: ResolvedCase, ctx: RunContext) -> AgentRun:
        target = case.target
        assert isinstance(target, LlmTarget)
        start = now_ms()
        prompt = chat_prompt(case.input)
        ctx.prompt_path.write_text(_shown(prompt))
        replies: list[LlmReply] = []
        error: RecordError | None = None
        spec = cast(LlmTargetSpec, target)  # every LlmTarget is one of the union
        try:
            with LlmClients({target.name: spec}, log_dir=ctx.artifacts) as clients:
                replies.append(clients.get(target.name).complete(llm_request(prompt)))
        except LlmCallError as exc:
            error = agent_error(call_error_kind(exc.status), str(exc))
        except (LlmConfigError, ScriptError) as exc:
            error = agent_error("setup", str(exc))  # no key, an unusable model script: not called
        end = now_ms()
        if not error:
            ctx.output_path.write_text(json.dumps(output_record(replies, end - start), indent=2))
        return AgentRun(
            case_key=case.case_key,
            agent=case.agent,
            trial=ctx.trial,
            output_file_path=str(ctx.output_path) if not error else None,
            exit_code=0 if not error else None,
            start_ms=start,
            end_ms=end,
            error=error,
            workspace_path=str(ctx.workspace),
            model=target.model,
            pricing=target.pricing,
        )


def _shown(prompt: ChatPrompt) -> str:
    """The request as text, kept beside the run like a command's prompt file."""
    turns = "\n\n".join(f"@[{role.capitalize()}]:\n{text}" for role, text in prompt.turns)
    return f"@[System]:\n{prompt.system}\n\n{turns}"

"""AgentV's conversation mode, run side (`orchestrator.ts` runConversationMode): each turn's
input appended to the conversation so far and sent to the target, in one workspace; every
answer (or provider error) kept per turn for the judge, the whole transcript as the output.

LLM targets get the (windowed) history as chat messages; other targets get the turn's text
alone as their prompt, with `{EVAL_ID}` = `<test id>/turn-<n>`, as AgentV invokes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from evals_pipeline.adapters.base import Adapter, RunContext
from evals_pipeline.adapters.llm import llm_request
from evals_pipeline.enrichers import enrich_run
from evals_pipeline.llm import LlmCallError, LlmClients, LlmConfigError
from evals_pipeline.model_server import ScriptError
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.conversation import History, TurnRun, content_text, windowed
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message, TokenUsage
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.models.targets import LlmTarget, LlmTargetSpec
from evals_pipeline.process import now_ms
from evals_pipeline.suites.prompt import DEFAULT_SYSTEM_PROMPT, ChatPrompt


@dataclass(frozen=True)
class Reply:
    answer: str = ""
    error: str | None = None
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None


Ask = Callable[[int, str, History], Reply]
"""(turn number, the turn's text, the history to send) → the target's reply."""


def history_prompt(history: History) -> ChatPrompt:
    """The history as an LLM provider receives it: system messages as the system prompt (else
    AgentV's default), tool messages as assistant turns marked `@[Tool]: `."""
    system = "\n\n".join(content for role, content in history if role == "system")
    turns: list[tuple[Literal["user", "assistant"], str]] = []
    for role, content in history:
        if role == "user":
            turns.append(("user", content))
        elif role == "assistant":
            turns.append(("assistant", content))
        elif role == "tool":
            turns.append(("assistant", f"@[Tool]: {content}"))
    return ChatPrompt(system or DEFAULT_SYSTEM_PROMPT, tuple(turns))


def run_conversation(case: ResolvedCase, ctx: RunContext, adapter: Adapter) -> AgentRun:
    """Send every turn of `case.conversation` in order; a turn's provider error is recorded on
    that turn (its score is 0), and the conversation goes on without its answer."""
    conversation = case.conversation
    assert conversation is not None
    history: History = [(m.role, content_text(m.content)) for m in case.input]
    records: list[TurnRun] = []
    start = now_ms()
    with ExitStack() as stack:
        ask = _asker(case, ctx, adapter, stack)
        for index, turn in enumerate(conversation.turns, 1):
            history.append(("user", turn.input))
            turn_start = now_ms()
            reply = ask(index, turn.input, windowed(history, conversation.window_size))
            records.append(
                TurnRun(
                    input=turn.input,
                    answer=reply.answer,
                    error=reply.error,
                    token_usage=reply.token_usage,
                    cost_usd=reply.cost_usd,
                    start_ms=turn_start,
                    end_ms=now_ms(),
                )
            )
            if reply.error is None:
                history.append(("assistant", reply.answer))
    end = now_ms()
    ctx.output_path.write_text(json.dumps(_output(history, records, end - start), indent=2))
    return AgentRun(
        case_key=case.case_key,
        agent=case.agent,
        trial=ctx.trial,
        output_file_path=str(ctx.output_path),
        exit_code=0,
        start_ms=start,
        end_ms=end,
        workspace_path=str(ctx.workspace),
        model=getattr(case.target, "model", None),
        pricing=getattr(case.target, "pricing", None),
        turns=records,
    )


def _output(history: History, records: list[TurnRun], duration_ms: int) -> dict[str, Any]:
    """The transcript as a cli output file, with the turns' usage and cost summed."""
    output: dict[str, Any] = {
        "output": [{"role": role, "content": content} for role, content in history],
        "duration_ms": duration_ms,
    }
    usages = [r.token_usage for r in records if r.token_usage is not None]
    if usages:
        output["token_usage"] = sum(usages[1:], usages[0]).model_dump()
    costs = [r.cost_usd for r in records if r.cost_usd is not None]
    if costs:
        output["cost_usd"] = sum(costs)
    return output


def _asker(case: ResolvedCase, ctx: RunContext, adapter: Adapter, stack: ExitStack) -> Ask:
    target = case.target
    if isinstance(target, LlmTarget):
        return _llm_asker(target, ctx, stack)

    def ask(index: int, text: str, _history: History) -> Reply:
        turn_case = case.model_copy(
            update={
                "test_id": f"{case.test_id}/turn-{index}",
                "input": [Message(role="user", content=text)],
                "prompt": text,
                "conversation": None,
            }
        )
        folder = ctx.artifacts / f"turn-{index}"
        folder.mkdir(parents=True, exist_ok=True)
        turn_ctx = RunContext(folder, ctx.workspace, ctx.trial, ctx.run_id, ctx.git_cache)
        run = adapter.run(turn_case, turn_ctx)
        session = enrich_run(run, folder / "session")
        return Reply(
            answer=_answer(session),
            error=message_of(run.error or session.error),
            token_usage=session.token_usage,
            cost_usd=session.cost_usd,
        )

    return ask


def _llm_asker(target: LlmTarget, ctx: RunContext, stack: ExitStack) -> Ask:
    clients: LlmClients | None = None
    failure: str | None = None
    try:
        spec = cast(LlmTargetSpec, target)
        clients = stack.enter_context(LlmClients({target.name: spec}, log_dir=ctx.artifacts))
    except ScriptError as exc:
        failure = str(exc)

    def ask(_index: int, _text: str, history: History) -> Reply:
        if clients is None:
            return Reply(error=failure)
        try:
            reply = clients.get(target.name).complete(llm_request(history_prompt(history)))
        except (LlmCallError, LlmConfigError) as exc:
            return Reply(error=str(exc))
        usage = TokenUsage(input=reply.input_tokens, output=reply.output_tokens)
        return Reply(answer=reply.text, token_usage=usage, cost_usd=reply.cost_usd)

    return ask


def _answer(session: Session) -> str:
    if session.output is not None:
        return session.output
    if session.output_path:
        text: str = json.loads(Path(session.output_path).read_text(encoding="utf-8"))
        return text
    return ""

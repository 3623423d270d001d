"""OpenAI Chat Completions: `POST /v1/chat/completions` (pi's default `openai-completions`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from evals_pipeline.model_server.exchange import (
    ApiCodec,
    JsonReply,
    ParsedRequest,
    SseEvent,
    SseReply,
    ToolKind,
    char_count,
    find_cwd,
    new_id,
    pieces,
    require_list,
    session_key,
)
from evals_pipeline.model_server.replies import ApiError, Reply
from evals_pipeline.model_server.responses import openai_error


def parse(body: dict[str, Any], headers: Mapping[str, str]) -> ParsedRequest:
    """Read a Chat Completions request: each `assistant` message is one model turn."""
    messages = require_list(body, "messages")
    tools: dict[str, ToolKind] = {}
    for tool in require_list(body, "tools"):
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            tools[function["name"]] = "function"
    first_user = next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    )
    options = body.get("stream_options")
    cwd = find_cwd(messages)
    return ParsedRequest(
        api="chat",
        body=body,
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        stream=body.get("stream") is True,
        tools=tools,
        assistant_turns=sum(
            1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
        ),
        cwd=cwd,
        session=session_key(headers, first_user, cwd),
        prompt_chars=char_count(messages),
        include_usage=isinstance(options, dict) and options.get("include_usage") is True,
    )


def render(request: ParsedRequest, reply: Reply) -> JsonReply | SseReply:
    """A `chat.completion` object, or `chat.completion.chunk` events ending in `[DONE]`."""
    finish_reason = "tool_calls" if reply.has_calls else "stop"
    head = {
        "id": new_id("chatcmpl-"),
        "created": int(time.time()),
        "model": reply.model,
    }
    usage = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    tool_calls = [
        {
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.payload},
        }
        for call in reply.calls
    ]
    if not request.stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if tool_calls:
            message["tool_calls"] = tool_calls
        choice = {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        return JsonReply(
            200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        )

    def chunk(delta: dict[str, Any], finish: str | None = None) -> SseEvent:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return SseEvent({**head, "object": "chat.completion.chunk", "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    events.extend(chunk({"content": piece}) for piece in pieces(reply.text or ""))
    for index, call in enumerate(reply.calls):
        opening = {
            "index": index,
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [opening]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in pieces(call.payload)
        )
    events.append(chunk({}, finish_reason))
    if request.include_usage:
        events.append(
            SseEvent({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    events.append(SseEvent("[DONE]"))
    return SseReply(events)


def render_error(error: ApiError) -> JsonReply:
    """An error body as the OpenAI APIs send it."""
    return JsonReply(error.status, openai_error(error.type, error.message))


CODEC = ApiCodec(
    name="chat", call_prefix="call_", parse=parse, render=render, render_error=render_error
)

"""Anthropic Messages: `POST /v1/messages` (claude; pi with `anthropic-messages`) and count_tokens."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evals_pipeline.model_server.exchange import (
    ApiCodec,
    BadRequest,
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


def parse(body: dict[str, Any], headers: Mapping[str, str]) -> ParsedRequest:
    """Read a Messages request: each `assistant` message is one model turn."""
    messages = require_list(body, "messages")
    tools: dict[str, ToolKind] = {
        tool["name"]: "function"
        for tool in require_list(body, "tools")
        if isinstance(tool, dict) and isinstance(tool.get("name"), str)
    }
    system = body.get("system")
    first_user = next(
        (m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    )
    cwd = find_cwd(system, messages)
    return ParsedRequest(
        api="anthropic",
        body=body,
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        stream=body.get("stream") is True,
        tools=tools,
        assistant_turns=sum(
            1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
        ),
        cwd=cwd,
        session=session_key(headers, first_user, cwd),
        prompt_chars=char_count(system, messages),
    )


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    """`/v1/messages/count_tokens`: the same characters/4 estimate a reply would report."""
    if not isinstance(body.get("messages"), list):
        raise BadRequest("`messages` must be a list")
    return {"input_tokens": max(1, char_count(body.get("system"), body["messages"]) // 4)}


def render(request: ParsedRequest, reply: Reply) -> JsonReply | SseReply:
    """The reply as a `message` object, or as the Messages SSE event sequence when streaming."""
    message_id = new_id("msg_")
    headers = {"request-id": new_id("req_")}
    blocks = _blocks(reply)
    stop_reason = "tool_use" if reply.has_calls else "end_turn"
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(reply.input_tokens, reply.output_tokens),
    }
    if not request.stream:
        return JsonReply(200, message, headers)
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": _usage(reply.input_tokens, 1),
    }
    events = [
        _event("message_start", message=start),
        _event("ping"),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(
                _event(
                    "content_block_start", index=index, content_block={"type": "text", "text": ""}
                )
            )
            events.extend(
                _event(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
                for piece in pieces(block["text"])
            )
        else:
            events.append(
                _event("content_block_start", index=index, content_block={**block, "input": {}})
            )
            events.extend(
                _event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
                for piece in pieces(json.dumps(block["input"], ensure_ascii=False))
            )
        events.append(_event("content_block_stop", index=index))
    events.append(
        _event(
            "message_delta",
            delta={"stop_reason": stop_reason, "stop_sequence": None},
            usage={"output_tokens": reply.output_tokens},
        )
    )
    events.append(_event("message_stop"))
    return SseReply(events, headers)


def render_error(error: ApiError) -> JsonReply:
    """An error body as the Anthropic API sends it."""
    body = {"type": "error", "error": {"type": error.type, "message": error.message}}
    return JsonReply(error.status, body, {"request-id": new_id("req_")})


def models(model: str) -> dict[str, Any]:
    """`GET /v1/models` in the Anthropic shape."""
    entry = {
        "type": "model",
        "id": model,
        "display_name": model,
        "created_at": "2025-01-01T00:00:00Z",
    }
    return {"data": [entry], "has_more": False, "first_id": model, "last_id": model}


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.calls:
        arguments = call.arguments if call.kind == "function" else {"input": call.payload}
        blocks.append(
            {"type": "tool_use", "id": call.call_id, "name": call.name, "input": arguments}
        )
    return blocks


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _event(name: str, **data: Any) -> SseEvent:
    return SseEvent({"type": name, **data}, name)


CODEC = ApiCodec(
    name="anthropic", call_prefix="toolu_", parse=parse, render=render, render_error=render_error
)

"""OpenAI Responses: `POST /v1/responses` (codex; pi with `openai-responses`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from evals_pipeline.model_server.actions import NativeCall
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

# Items the model itself produced; a run of them in `input[]` is one earlier model turn.
MODEL_ITEM_TYPES = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
    }
)


def parse(body: dict[str, Any], headers: Mapping[str, str]) -> ParsedRequest:
    """Read a Responses request: each maximal run of model-produced input items is one turn."""
    raw_input = body.get("input")
    if raw_input is None:
        items: list[Any] = []
    elif isinstance(raw_input, str):
        items = [{"type": "message", "role": "user", "content": raw_input}]
    elif isinstance(raw_input, list):
        items = raw_input
    else:
        raise BadRequest("`input` must be a string or a list of items")
    tools: dict[str, ToolKind] = {}
    for tool in require_list(body, "tools"):
        if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
            continue
        if tool["type"] in ("function", "custom") and isinstance(tool.get("name"), str):
            tools[tool["name"]] = tool["type"]
        else:
            tools[tool["type"]] = "builtin"
    instructions = body.get("instructions")
    first_user = next(
        (i.get("content") for i in items if isinstance(i, dict) and i.get("role") == "user"), None
    )
    cwd = find_cwd(instructions, items)
    return ParsedRequest(
        api="responses",
        body=body,
        model=body.get("model") if isinstance(body.get("model"), str) else None,
        stream=body.get("stream") is True,
        tools=tools,
        assistant_turns=count_model_turns(items),
        cwd=cwd,
        session=session_key(headers, first_user, cwd),
        prompt_chars=char_count(instructions, raw_input),
    )


def count_model_turns(items: list[Any]) -> int:
    """Maximal runs of model-produced items: codex echoes a turn's text and calls as separate items."""
    runs, in_run = 0, False
    for item in items:
        produced = isinstance(item, dict) and (
            item.get("type") in MODEL_ITEM_TYPES
            or (item.get("type", "message") == "message" and item.get("role") == "assistant")
        )
        if produced and not in_run:
            runs += 1
        in_run = produced
    return runs


def render(request: ParsedRequest, reply: Reply) -> JsonReply | SseReply:
    """The completed response object, or the Responses SSE event sequence when streaming."""
    items = _items(reply)
    base: dict[str, Any] = {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": int(time.time()),
        "model": reply.model,
        "status": "in_progress",
        "output": [],
        "usage": None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": request.body.get("parallel_tool_calls", True),
        "tool_choice": request.body.get("tool_choice", "auto"),
        "tools": [],
    }
    completed = {**base, "status": "completed", "output": items, "usage": _usage(reply)}
    if not request.stream:
        return JsonReply(200, completed)
    events = _Events()
    events.add("response.created", response=base)
    events.add("response.in_progress", response=base)
    for index, item in enumerate(items):
        _stream_item(events, index, item)
    events.add("response.completed", response=completed)
    return SseReply(events.events)


def render_error(error: ApiError) -> JsonReply:
    """An error body as the OpenAI APIs send it."""
    return JsonReply(error.status, openai_error(error.type, error.message))


def openai_error(error_type: str, message: str) -> dict[str, Any]:
    """The OpenAI error body shape, shared by Responses and Chat Completions."""
    return {"error": {"type": error_type, "message": message, "code": error_type, "param": None}}


def models(model: str) -> dict[str, Any]:
    """`GET /v1/models` in the OpenAI shape."""
    entry = {"id": model, "object": "model", "created": 1735689600, "owned_by": "evals-pipeline"}
    return {"object": "list", "data": [entry]}


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": new_id("msg_"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    items.extend(_call_item(call) for call in reply.calls)
    return items


def _call_item(call: NativeCall) -> dict[str, Any]:
    if call.kind == "custom":
        return {
            "type": "custom_tool_call",
            "id": new_id("ctc_"),
            "call_id": call.call_id,
            "name": call.name,
            "input": call.input or "",
            "status": "completed",
        }
    if call.kind == "local_shell":
        action = {
            "type": "exec",
            "command": call.arguments["command"],
            "env": {},
            "timeout_ms": None,
            "user": None,
            "working_directory": None,
        }
        return {
            "type": "local_shell_call",
            "id": new_id("lsc_"),
            "call_id": call.call_id,
            "status": "completed",
            "action": action,
        }
    return {
        "type": "function_call",
        "id": new_id("fc_"),
        "call_id": call.call_id,
        "name": call.name,
        "arguments": call.payload,
        "status": "completed",
    }


class _Events:
    """Collects events, numbering them from 0 as `sequence_number`."""

    def __init__(self) -> None:
        self.events: list[SseEvent] = []

    def add(self, name: str, **data: Any) -> None:
        self.events.append(
            SseEvent({"type": name, "sequence_number": len(self.events), **data}, name)
        )


def _stream_item(events: _Events, index: int, item: dict[str, Any]) -> None:
    kind = item["type"]
    at = {"output_index": index}
    if kind == "message":
        text = item["content"][0]["text"]
        events.add(
            "response.output_item.added",
            **at,
            item={**item, "status": "in_progress", "content": []},
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        ids = {"item_id": item["id"], **at, "content_index": 0}
        events.add("response.content_part.added", **ids, part=part)
        for piece in pieces(text):
            events.add("response.output_text.delta", **ids, delta=piece, logprobs=[])
        events.add("response.output_text.done", **ids, text=text, logprobs=[])
        events.add("response.content_part.done", **ids, part={**part, "text": text})
    elif kind in ("function_call", "custom_tool_call"):
        field, prefix = (
            ("arguments", "response.function_call_arguments")
            if kind == "function_call"
            else ("input", "response.custom_tool_call_input")
        )
        events.add(
            "response.output_item.added",
            **at,
            item={**item, "status": "in_progress", field: ""},
        )
        ids = {"item_id": item["id"], **at}
        for piece in pieces(item[field]):
            events.add(f"{prefix}.delta", **ids, delta=piece)
        events.add(f"{prefix}.done", **ids, **{field: item[field]})
    else:
        events.add("response.output_item.added", **at, item={**item, "status": "in_progress"})
    events.add("response.output_item.done", **at, item=item)


def _usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


CODEC = ApiCodec(
    name="responses", call_prefix="call_", parse=parse, render=render, render_error=render_error
)

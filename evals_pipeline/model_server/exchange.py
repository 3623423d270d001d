"""The API-neutral shapes of one exchange: what a request asks for and what the server answers.

Each wire API (Anthropic Messages, Responses, Chat Completions) parses its body into a
ParsedRequest and renders a reply as a JsonReply or an SseReply; the HTTP layer only frames them.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evals_pipeline.errors import EvalsPipelineError

if TYPE_CHECKING:
    from evals_pipeline.model_server.replies import ApiError, Reply

ToolKind = Literal["function", "custom", "builtin"]
"""function and custom tools are called by name; builtin ones (`local_shell`) by item type."""

SESSION_HEADER = re.compile(r"(?:^|[-_])session[-_]id$")
"""A header naming the CLI's session, whatever the agent: claude's `x-claude-code-session-id`,
codex's `session-id`, pi's `session_id` over Responses, an installed agent's `x-my-session-id`.
A rule on the name, not a table of agents: the server runs without the agent registry (which
imports the adapters that start it) and serves agents added after it was written."""

CWD_STATEMENTS = (
    re.compile(r"<cwd>\s*([^<]+?)\s*</cwd>"),
    re.compile(r"\bworking directory:[ \t]*(\S[^\n]*?)[ \t]*$", re.MULTILINE | re.IGNORECASE),
)
"""How an agent states its working directory in its prompt, whatever the agent, tag first: codex's
`<cwd>` tag, then a `... working directory:` line (claude's `Primary working directory:`, pi's
`Current working directory:`, an installed agent's `Working directory:`). A rule on the wording,
not a table of agents, for the reason SESSION_HEADER gives."""


class BadRequest(EvalsPipelineError):
    """A request body the server cannot act on; answered with HTTP 400 in the API's shape."""


@dataclass(frozen=True)
class ParsedRequest:
    """What the server needs from a request, whatever API it came in."""

    api: str
    body: dict[str, Any]
    model: str | None
    stream: bool
    tools: dict[str, ToolKind]
    """Declared tool names in declaration order; Responses built-ins are named by their type."""
    assistant_turns: int
    cwd: str | None
    session: str
    prompt_chars: int
    include_usage: bool = False
    """Chat Completions only: `stream_options.include_usage` asks for a final usage chunk."""


@dataclass(frozen=True)
class JsonReply:
    """A complete JSON answer."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event; `name` becomes the `event:` line (Chat Completions has none)."""

    data: dict[str, Any] | str
    name: str | None = None


@dataclass(frozen=True)
class SseReply:
    """A streamed answer: status 200, `text/event-stream`, one chunk per event."""

    events: list[SseEvent]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ApiCodec:
    """How one wire API reads requests and writes replies and errors."""

    name: str
    call_prefix: str
    """How this API's tool call ids start: `toolu_` or `call_`."""
    parse: Callable[[dict[str, Any], Mapping[str, str]], ParsedRequest]
    render: Callable[[ParsedRequest, Reply], JsonReply | SseReply]
    render_error: Callable[[ApiError], JsonReply]


def require_list(body: Mapping[str, Any], key: str) -> list[Any]:
    """The body's list under `key` (missing means empty), else BadRequest naming the key."""
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"`{key}` must be a list")
    return value


def find_cwd(*parts: Any) -> str | None:
    """The agent's working directory as stated in its prompt, searching parts in order."""
    texts = [text for part in parts for text in _strings(part)]
    for pattern in CWD_STATEMENTS:
        for text in texts:
            match = pattern.search(text)
            if match:
                return match.group(1)
    return None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def session_key(headers: Mapping[str, str], first_user_message: Any, cwd: str | None) -> str:
    """The run a request belongs to: the CLI's session header, else its cwd and first prompt.

    pi sends no session header over Chat Completions or Messages; its fresh per-run work dir,
    stated in the prompt, still tells parallel runs of one task apart.
    """
    for name, value in headers.items():
        if value and SESSION_HEADER.search(name.lower()):
            return value
    # Only the text counts: pi marks the latest user message with cache_control, so the raw
    # first message changes shape once the conversation moves on.
    text = "\n".join(_texts(first_user_message))
    digest = hashlib.sha256(f"{cwd}\n{text}".encode()).hexdigest()[:16]
    return f"prompt-{digest}"


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            yield from _texts(block)
    elif isinstance(content, dict) and isinstance(content.get("text"), str):
        yield content["text"]


def request_text(request: ParsedRequest) -> str:
    """The system prompt and every message's text, in order: what script rules match against."""
    body = request.body
    if request.api == "anthropic":
        parts = [body.get("system"), body.get("messages")]
    elif request.api == "responses":
        parts = [body.get("instructions"), body.get("input")]
    else:
        parts = [body.get("messages")]  # Chat Completions: the system prompt is a message
    return "\n".join(text for part in parts for text in _message_texts(part))


def _message_texts(value: Any) -> Iterator[str]:
    # Strings, text blocks (`text`) and nested `content` (messages, tool results) in the shapes
    # of all three APIs; tool call arguments and outputs are not message text.
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _message_texts(item)
    elif isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        if "content" in value:
            yield from _message_texts(value["content"])


def char_count(*parts: Any) -> int:
    """Characters of the parts as compact JSON (strings as themselves): the usage estimate's base."""
    return sum(
        len(part)
        if isinstance(part, str)
        else len(json.dumps(part, separators=(",", ":"), ensure_ascii=False))
        for part in parts
        if part is not None
    )


def pieces(text: str, size: int = 32, most: int = 64) -> list[str]:
    """Split text into stream deltas: short pieces, but never more than `most` of them."""
    if not text:
        return []
    size = max(size, -(-len(text) // most))
    return [text[start : start + size] for start in range(0, len(text), size)]


def new_id(prefix: str) -> str:
    """A fresh id such as `msg_fake_3f…`; `fake` marks ids this server made up."""
    return f"{prefix}fake_{uuid.uuid4().hex[:24]}"

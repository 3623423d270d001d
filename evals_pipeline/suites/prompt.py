"""The input messages rendered for a target as AgentV renders them (`formatting/prompt-builder.ts`).

Agents and `cli` commands get one prompt text with file references (`<file: path="/abs">`);
LLM providers get embedded files (`<file path="as written">…</file>`) and, for a conversation,
the messages themselves with the leading system messages as the system prompt.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from evals_pipeline.models.messages import Message

Mode = Literal["agent", "lm"]
"""agent: file references, for agents and commands; lm: file contents, for LLM providers."""

DEFAULT_SYSTEM_PROMPT = (
    "You are a careful assistant. Follow all provided instructions and do not fabricate results."
)
"""AgentV's system prompt for an LLM target whose input has no system message."""


@dataclass(frozen=True)
class ChatPrompt:
    """What an LLM target is sent: a system prompt and user/assistant turns."""

    system: str
    turns: tuple[tuple[Literal["user", "assistant"], str], ...]


def render_prompt(messages: list[Message], mode: Mode = "agent") -> str:
    """One prompt text: file references (or contents, `lm`), then the text.

    A conversation (several messages with content, or any assistant or tool message) is
    rendered with `@[Role]:` markers so the agent can tell the turns apart; a single message is
    its parts joined by blank lines.
    """
    segments = [_segments(message.content, mode) for message in messages]
    if _needs_role_markers(messages, segments):
        turns = [
            f"@[{message.role.capitalize()}]:\n" + "\n".join(parts)
            for message, parts in zip(messages, segments, strict=True)
            if parts
        ]
        return "\n\n".join(turns)
    return "\n\n".join(part.strip() for parts in segments for part in parts if part.strip())


def chat_prompt(messages: list[Message]) -> ChatPrompt:
    """The request AgentV sends an LLM provider for these input messages.

    One message: AgentV's system prompt (the input's system message, else its default) and
    the flat prompt as the user turn. A conversation: the leading system messages become the
    system prompt, later system and tool messages become assistant turns marked `@[System]:` /
    `@[Tool]:`, and every other message keeps its role.
    """
    segments = [_segments(message.content, "lm") for message in messages]
    leading = 0
    while leading < len(messages) and messages[leading].role == "system":
        leading += 1
    system = "\n\n".join("\n".join(parts) for parts in segments[:leading] if parts)
    if not _needs_role_markers(messages, segments):
        user = render_prompt(messages, "lm").strip()
        return ChatPrompt(system.strip() or DEFAULT_SYSTEM_PROMPT, (("user", user),))
    turns: list[tuple[Literal["user", "assistant"], str]] = []
    for message, parts in zip(messages[leading:], segments[leading:], strict=True):
        if not parts:
            continue
        if message.role in ("system", "tool"):
            turns.append(("assistant", "\n".join([f"@[{message.role.capitalize()}]:", *parts])))
        else:
            turns.append(("assistant" if message.role == "assistant" else "user", "\n".join(parts)))
    return ChatPrompt(system or DEFAULT_SYSTEM_PROMPT, tuple(turns))


def _needs_role_markers(messages: list[Message], segments: list[list[str]]) -> bool:
    conversation = any(m.role in ("assistant", "tool") for m in messages)
    return conversation or sum(1 for parts in segments if parts) > 1


def _segments(content: str | dict[str, Any] | list[Any] | None, mode: Mode) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content] if content.strip() else []
    if isinstance(content, dict):
        return [json.dumps(content, indent=2, ensure_ascii=False)]
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            if block.strip():
                parts.append(block)
        elif isinstance(block, dict):
            part = _block(block, mode)
            if part is not None:
                parts.append(part)
    return parts


def _block(block: dict[str, Any], mode: Mode) -> str | None:
    kind = block.get("type", "text")
    if kind == "text":
        value = block.get("value", block.get("text", ""))
        return value if isinstance(value, str) and value.strip() else None
    if kind not in ("file", "image"):
        return None
    if mode == "agent":
        path = block.get("path") or block.get("value")
        return f'<{kind}: path="{path}">'
    text = block.get("text")
    if kind != "file" or not isinstance(text, str) or not text.strip():
        return None  # LLM providers get images as attachments, not prompt text
    return f'<file path="{block.get("value") or block.get("path")}">\n{text.strip()}\n</file>'


def result_input(messages: list[Message]) -> list[Message]:
    """The input as AgentV records it in a transcript (its `buildResultInput`).

    A conversation becomes AgentV's chat prompt: leading system messages merged into one, later
    system and tool turns sent as assistant turns marked `@[System]:` / `@[Tool]:`, each message
    its parts joined by newlines; a single message becomes one user message holding the prompt.
    """
    segments = [_segments(message.content, "agent") for message in messages]
    conversation = any(m.role in ("assistant", "tool") for m in messages)
    if not (conversation or sum(1 for parts in segments if parts) > 1):
        return [Message(role="user", content=render_prompt(messages))]
    system: list[str] = []
    start = 0
    while start < len(messages) and messages[start].role == "system":
        if segments[start]:
            system.append("\n".join(segments[start]))
        start += 1
    prompt = [Message(role="system", content="\n\n".join(system))] if system else []
    for message, parts in zip(messages[start:], segments[start:], strict=True):
        role = message.role
        if role in ("system", "tool"):
            parts = [f"@[{role.capitalize()}]:", *parts]
            role = "assistant"
        if parts:
            prompt.append(Message(role=role, content="\n".join(parts)))
    return prompt or [Message(role="user", content=render_prompt(messages))]

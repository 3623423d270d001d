"""The input messages rendered as one prompt for a command-line agent, as AgentV renders it."""

from __future__ import annotations

import json
from typing import Any

from evals_pipeline.models.messages import Message


def render_prompt(messages: list[Message]) -> str:
    """One prompt text: file references as `<file: path="...">`, then the text.

    A conversation (several messages with content, or any assistant or tool message) is
    rendered with `@[Role]:` markers so the agent can tell the turns apart; a single message is
    its parts joined by blank lines.
    """
    segments = [_segments(message.content) for message in messages]
    conversation = any(m.role in ("assistant", "tool") for m in messages)
    if conversation or sum(1 for parts in segments if parts) > 1:
        turns = [
            f"@[{message.role.capitalize()}]:\n" + "\n".join(parts)
            for message, parts in zip(messages, segments, strict=True)
            if parts
        ]
        return "\n\n".join(turns)
    return "\n\n".join(part.strip() for parts in segments for part in parts if part.strip())


def _segments(content: str | dict[str, Any] | list[Any] | None) -> list[str]:
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
            kind = block.get("type", "text")
            if kind in ("file", "image"):
                path = block.get("path") or block.get("value")
                parts.append(f'<{kind}: path="{path}">')
            elif kind == "text":
                value = block.get("value", block.get("text", ""))
                if isinstance(value, str) and value.strip():
                    parts.append(value)
    return parts


def result_input(messages: list[Message]) -> list[Message]:
    """The input as AgentV records it in a transcript (its `buildResultInput`).

    A conversation becomes AgentV's chat prompt: leading system messages merged into one, later
    system and tool turns sent as assistant turns marked `@[System]:` / `@[Tool]:`, each message
    its parts joined by newlines; a single message becomes one user message holding the prompt.
    """
    segments = [_segments(message.content) for message in messages]
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

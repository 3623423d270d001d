"""AgentV's input forms expanded into canonical messages, file blocks read and made absolute.

A file or image block whose file does not exist is left out, as AgentV's loader leaves it out
(loaders/message-processor.ts): the test runs without it, and without its path in {FILES}. The
load warned about it, or refused the suite where `agentv validate` does (references.py)."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from evals_pipeline.models.messages import Message, Role, ToolCall
from evals_pipeline.models.suite import ContentBlock, InputSpec, MessageSpec
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.file_boundary import FIX, outside, outside_message
from evals_pipeline.suites.paths import find_input_file
from evals_pipeline.suites.probes import read_text

_ROLES = set(get_args(Role))


class MessageBuilder:
    """Expands input specs of one suite; relative file paths resolve from `base_dir` upwards.
    With a `boundary`, a file found outside it is refused before it is read: the load reports
    the ones the suite writes at their line (references.py); this catches those a test's vars
    fill in."""

    def __init__(self, base_dir: Path, boundary: Path | None = None, suite_file: str = "") -> None:
        self.base_dir = base_dir
        self.boundary = boundary
        self.suite_file = suite_file

    def _found(self, value: str, what: str) -> Path | None:
        path = find_input_file(value, self.base_dir)
        real = outside(path, self.boundary) if path and self.boundary else None
        if real is not None and self.boundary is not None:
            message = outside_message(what, value, real, self.boundary)
            raise SuiteError([SuiteIssue(self.suite_file, 1, 1, message, FIX)])
        return path

    def expand(self, spec: InputSpec | None, default_role: Role) -> list[Message]:
        """A string, an object, or a message list as messages (`default_role` for bare forms)."""
        if spec is None or spec == "":
            return []
        if isinstance(spec, str):
            return [Message(role=default_role, content=spec)]
        if isinstance(spec, dict):
            return [self._object(spec, default_role)]
        return [
            Message(role=default_role, content=item)
            if isinstance(item, str)
            else self.message(item)
            for item in spec
        ]

    def with_files(self, spec: InputSpec | None, files: list[str]) -> list[Message]:
        """The test's input with its input files as `type: file` blocks ahead of the text.

        A string input becomes one user message: file blocks, then the text (AgentV's rule).
        For a message list the blocks lead the first user message; an object input, which
        cannot hold blocks, gets a user message of its own before it.
        """
        blocks = [block for block in map(self.file_block, files) if block is not None]
        if not files:
            return self.expand(spec, "user")
        if spec is None or isinstance(spec, str):
            text = [{"type": "text", "value": spec}] if spec else []
            return [Message(role="user", content=blocks + text)]
        messages = self.expand(spec, "user")
        if isinstance(spec, list):
            for index, message in enumerate(messages):
                if message.role != "user":
                    continue
                if isinstance(message.content, str):
                    text = [{"type": "text", "value": message.content}] if message.content else []
                    messages[index] = message.model_copy(update={"content": blocks + text})
                    return messages
                if isinstance(message.content, list):
                    content = blocks + message.content
                    messages[index] = message.model_copy(update={"content": content})
                    return messages
                messages.insert(index, Message(role="user", content=blocks))
                return messages
        return [Message(role="user", content=blocks), *messages]

    def message(self, spec: MessageSpec) -> Message:
        content: str | dict[str, Any] | list[Any] | None
        if isinstance(spec.content, list):
            blocks = (self._block(block) for block in spec.content)
            content = [block for block in blocks if block is not None]
        else:
            content = spec.content
        tool_calls = [ToolCall.model_validate(call) for call in spec.tool_calls or []]
        return Message(role=spec.role, name=spec.name, content=content, tool_calls=tool_calls)

    def _object(self, spec: dict[str, Any], default_role: Role) -> Message:
        # An object with a role and only message keys is one message; any other object is
        # structured content, kept as it is for code graders.
        if spec.get("role") in _ROLES and set(spec) <= set(MessageSpec.model_fields):
            try:
                return self.message(MessageSpec.model_validate(spec))
            except ValidationError:
                pass
        return Message(role=default_role, content=spec)

    def _block(self, block: ContentBlock | str) -> dict[str, Any] | None:
        if isinstance(block, str):
            return {"type": "text", "value": block}
        if block.type == "file":
            return self.file_block(block.value)
        if block.type == "image":
            path = self._found(block.value, "image block")
            if path is None:
                return None
            media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            return {
                "type": "image",
                "value": block.value,
                "path": str(path),
                "media_type": media_type,
            }
        return {"type": "text", "value": block.value}

    def file_block(self, value: str) -> dict[str, Any] | None:
        """`{type: file}` as the runtime sees it: the written value, absolute path and text;
        None when the file does not exist (the block is left out)."""
        path = self._found(value, "input file")
        if path is None:
            return None
        text = read_text(path)
        return {"type": "file", "value": value, "path": str(path), "text": text}

"""One session as the graders of one trial see it: the messages and a file-backed output are read
at most once, and only when an assertion actually needs them."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message, ToolCall, final_answer
from evals_pipeline.models.session import Session
from evals_pipeline.storage.messages import read_messages


class GradingContext:
    """The case and session under judgement, with lazily loaded, cached heavy fields."""

    def __init__(self, case: ResolvedCase, session: Session) -> None:
        self.case = case
        self.session = session

    @cached_property
    def messages(self) -> list[Message]:
        """Every message of the session, read from its Parquet file on first use."""
        return read_messages(self.session.messages_path)

    @cached_property
    def output(self) -> str:
        """The final answer: inline, else the file-backed copy, else derived from the messages."""
        if self.session.output is not None:
            return self.session.output
        if self.session.output_path:
            text: str = json.loads(Path(self.session.output_path).read_text(encoding="utf-8"))
            return text
        return final_answer(self.messages)

    @cached_property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the session, in transcript order."""
        return [call for message in self.messages for call in message.tool_calls]

"""One session as the graders of one trial see it: the messages and a file-backed output are read
at most once, and only when an assertion actually needs them; LLM graders get their clients here."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Protocol

from evals_pipeline.grading.agentv_trace import AgentVTrace, TranscriptFields
from evals_pipeline.llm.client import LlmClient
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message, ToolCall, as_list, final_answer
from evals_pipeline.models.session import Session


class LlmClientSource(Protocol):
    """Where graders get a configured model by target name: `evals_pipeline.llm.LlmClients`."""

    def get(self, name: str) -> LlmClient: ...


class GradingContext:
    """The case and session under judgement, with lazily loaded, cached heavy fields.

    `llm` gives llm-graders and the target proxy their clients (one per LLM target the case
    needs); None when the step has no LLM grader, and then such graders report an error.
    """

    def __init__(
        self,
        case: ResolvedCase,
        session: Session,
        llm: LlmClientSource | None = None,
        messages: Sequence[Message] | None = None,
    ) -> None:
        """`messages`: the session's messages already in hand (as its file holds them), so the
        first grader that needs them does not read them back."""
        self.case = case
        self.session = session
        self.llm = llm
        self._in_hand = messages
        self.transcript_fields: TranscriptFields | None = None
        """The payload's fields made from the transcript, once made (code_grader/payload.py):
        every code grader of the trial gets the same."""

    @cached_property
    def messages(self) -> list[Message]:
        """Every message of the session, read from its Parquet file on first use."""
        if self._in_hand is not None:
            return as_list(self._in_hand)
        # pyarrow loads with the first transcript read, not with every module that grades.
        from evals_pipeline.storage.messages import read_messages

        return read_messages(self.session.messages_path)

    @cached_property
    def output(self) -> str:
        """The final answer: inline, else the file-backed copy, else derived from the messages."""
        if self.session.output is not None:
            return self.session.output
        if self.session.output_path:
            text: str = json.loads(Path(self.session.output_path).read_text(encoding="utf-8"))
            return text
        return final_answer(self._transcript())

    @cached_property
    def agentv_trace(self) -> AgentVTrace:
        """The transcript and trace AgentV would hand a code grader, built once per trial."""
        return AgentVTrace(self.case, self.session, self._transcript(), self.output)

    def _transcript(self) -> Sequence[Message]:
        """The messages as in hand (plain ones need no models to be encoded), else read."""
        return self._in_hand if self._in_hand is not None else self.messages

    def release_transcript(self) -> None:
        """Forget the messages and everything made from them (read again if a later grader
        asks): once the code graders' payload fields are made, a long session's models and
        encodings would otherwise stay in memory for as long as the trial's graders run."""
        self._in_hand = None
        for name in ("messages", "agentv_trace", "tool_calls"):
            self.__dict__.pop(name, None)

    @cached_property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call of the session, in transcript order."""
        return [call for message in self.messages for call in message.tool_calls]

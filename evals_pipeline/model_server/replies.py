"""Which script turn answers a request, resolved into a Reply or a scripted ApiError.

Selection is stateless (the turn list is the first script rule matching the request's text, else
the top-level turns; the turn index is the number of assistant turns already in the history), so
retries replay the same turn and parallel runs of one script can share a server. The one piece of
state is the attempt count of error turns with `times`, kept per session, turn list and turn.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

from evals_pipeline.model_server.actions import NativeCall, resolve
from evals_pipeline.model_server.exchange import ParsedRequest, char_count, request_text
from evals_pipeline.model_server.script import ModelScript, Turn

DEFAULT_MODEL = "scripted-model"
"""The model id replies carry when neither the request nor the script names one."""
SIDE_REQUEST_TEXT = "OK"
EXHAUSTED_TEXT = "Done."


@dataclass(frozen=True)
class Reply:
    """A model answer: text, native tool calls and the usage to report."""

    text: str | None
    calls: list[NativeCall]
    input_tokens: int
    output_tokens: int
    turn: int | None
    """The request's turn index (assistant turns in its history); None for a side request."""
    script_turn: int | None
    """The script turn that answered: differs from `turn` once the script is exhausted."""
    model: str
    rule: int | None = None
    """The script rule whose turns answered; None for the top-level turns."""

    @property
    def has_calls(self) -> bool:
        """Whether the reply ends the turn with tool use (decides every API's stop reason)."""
        return bool(self.calls)


@dataclass(frozen=True)
class ApiError:
    """An HTTP error answer: scripted (`http_error`), or the server's own for a request it cannot serve."""

    status: int
    type: str
    message: str
    turn: int | None
    attempt: int | None = None
    """1-based failing attempt for an error with `times`; None when every attempt fails."""


@dataclass
class Responder:
    """Answers parsed requests from one script; safe to call from many threads."""

    script: ModelScript
    default_model: str = DEFAULT_MODEL
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _attempts: dict[tuple[str, int | None, int], int] = field(default_factory=dict, repr=False)

    def answer(self, request: ParsedRequest, call_prefix: str) -> Reply | ApiError:
        """The reply (or scripted error) for this request; raises Unresolvable for missing tools.

        `call_prefix` is the API's call id prefix (`toolu_` or `call_`).
        """
        if not request.tools and self.script.side_requests:
            # Title generation and similar helper calls declare no tools; they must not
            # consume a turn, or the agent's own turns would shift.
            model = request.model or self.script.model or self.default_model
            return self._reply(request, None, None, SIDE_REQUEST_TEXT, [], None, model)
        rule, turns, script_model = self._turns(request)
        model = request.model or script_model or self.default_model
        index = request.assistant_turns
        if not turns:
            message = (
                "model server: no script rule matches this request and the script has no"
                " top-level `turns`; add `turns:` as the fallback or a rule that matches"
            )
            return ApiError(400, "invalid_request_error", message, index)
        if index >= len(turns):
            script_turn = next(
                (i for i in range(len(turns) - 1, -1, -1) if turns[i].is_text_only), None
            )
            text = turns[script_turn].text if script_turn is not None else EXHAUSTED_TEXT
            turn = turns[script_turn] if script_turn is not None else None
            return self._reply(request, index, script_turn, text, [], turn, model, rule)
        turn = turns[index]
        error = self._error(request, rule, index, turn)
        if error is not None:
            return error
        calls = [
            resolve(action, request.tools, request.cwd, f"{call_prefix}fake_{index}_{n}_{_nonce()}")
            for n, action in enumerate(turn.tool_calls)
        ]
        return self._reply(request, index, index, turn.text, calls, turn, model, rule)

    def _turns(self, request: ParsedRequest) -> tuple[int | None, list[Turn], str | None]:
        if not self.script.rules:
            return None, self.script.turns, self.script.model
        return self.script.choose(request_text(request))

    def _error(
        self, request: ParsedRequest, rule: int | None, index: int, turn: Turn
    ) -> ApiError | None:
        spec = turn.http_error
        if spec is None:
            return None
        message = spec.message or f"scripted HTTP {spec.status} error (turn {index})"
        if spec.times is None:
            return ApiError(spec.status, spec.error_type, message, index)
        key = (request.session, rule, index)
        with self._lock:
            done = self._attempts.get(key, 0)
            if done >= spec.times:
                return None
            self._attempts[key] = done + 1
        return ApiError(spec.status, spec.error_type, message, index, attempt=done + 1)

    @staticmethod
    def _reply(
        request: ParsedRequest,
        index: int | None,
        script_turn: int | None,
        text: str | None,
        calls: list[NativeCall],
        turn: Turn | None,
        model: str,
        rule: int | None = None,
    ) -> Reply:
        forced = turn.usage if turn is not None else None
        input_tokens = max(1, request.prompt_chars // 4)
        output_tokens = max(1, char_count(text, *(call.payload for call in calls)) // 4)
        if forced is not None and forced.input_tokens is not None:
            input_tokens = forced.input_tokens
        if forced is not None and forced.output_tokens is not None:
            output_tokens = forced.output_tokens
        return Reply(text, calls, input_tokens, output_tokens, index, script_turn, model, rule)


def _nonce() -> str:
    return uuid.uuid4().hex[:8]

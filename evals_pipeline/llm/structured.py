"""A JSON answer validated into a pydantic model, with one re-ask when the model gets it wrong.

Judges ask for a JSON object; models wrap it in prose or fences, or miss a field. The reply is
parsed leniently, validated strictly, and a failure is sent back once with what was wrong.
Nothing here raises for a bad or failed call: the caller gets `value=None` and the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.llm.client import LlmCallError, LlmClient, LlmReply, LlmRequest
from evals_pipeline.llm.usage import LlmUsage, usage_of

T = TypeVar("T", bound=BaseModel)

REASK_SUFFIX = "Reply with only the JSON object, no prose."
MAX_LISTED_ERRORS = 5

# A fenced block marked json or unmarked; a block in another language is not the answer.
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n(.*?)```", re.S | re.I)


@dataclass(frozen=True)
class StructuredReply(Generic[T]):
    """The validated value (None when there is none), every raw reply, usage and the reason."""

    value: T | None
    replies: tuple[LlmReply, ...] = ()
    usage: LlmUsage = field(default_factory=LlmUsage)
    error: str | None = None
    repaired: bool = False
    """The value came from a re-ask, not from the first reply."""

    @property
    def texts(self) -> tuple[str, ...]:
        """The raw reply texts, in order."""
        return tuple(reply.text for reply in self.replies)

    @property
    def ok(self) -> bool:
        return self.value is not None


class ReplyProblem(ValueError, EvalsPipelineError):
    """Why a reply's text is not a valid object, phrased to be sent back to the model."""


def extract_json(text: str) -> Any:
    """The JSON object in a reply: a ```json fenced block, else the outermost {...}.

    Raises ReplyProblem when there is none or it does not parse.
    """
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    elif start >= 0:
        candidates.append(text[start:])  # cut off: report where it breaks, not "no object"
    if not candidates:
        raise ReplyProblem("the reply contains no JSON object")
    first: json.JSONDecodeError | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            first = first or exc
    assert first is not None
    raise ReplyProblem(
        f"the reply's JSON is invalid: {first.msg} (line {first.lineno}, column {first.colno})"
    )


def parse_reply(text: str, model_type: type[T]) -> T:
    """The reply's JSON object validated as `model_type`; ReplyProblem says what is wrong."""
    data = extract_json(text)
    try:
        return model_type.model_validate(data)
    except ValidationError as exc:
        raise ReplyProblem(
            f"the JSON object does not match the expected fields: {_brief(exc)}"
        ) from None


def complete_structured(
    client: LlmClient, request: LlmRequest, model_type: type[T], *, repairs: int = 1
) -> StructuredReply[T]:
    """Ask for a `model_type` object, re-asking up to `repairs` times with what was wrong.

    Never raises for the model's failures: a call error or a still-invalid reply gives
    `value=None` and `error`; failed calls count in `usage.errors`.
    """
    replies: list[LlmReply] = []
    usage = LlmUsage()
    current = request
    problem: ReplyProblem | None = None
    for attempt in range(repairs + 1):
        try:
            reply = client.complete(current)
        except LlmCallError as exc:
            usage = usage + LlmUsage(errors=1)
            return StructuredReply(None, tuple(replies), usage, str(exc))
        replies.append(reply)
        usage = usage + usage_of(reply)
        try:
            value = parse_reply(reply.text, model_type)
        except ReplyProblem as exc:
            problem = exc
            # An empty assistant turn is refused by the Messages API; say it was empty.
            answer = reply.text if reply.text.strip() else "(empty reply)"
            current = current.followed_by(
                answer, f"Your reply could not be used: {exc}. {REASK_SUFFIX}"
            )
            continue
        return StructuredReply(value, tuple(replies), usage, repaired=attempt > 0)
    count = len(replies)
    error = f"no valid {model_type.__name__} in {count} {'reply' if count == 1 else 'replies'}"
    return StructuredReply(None, tuple(replies), usage, f"{error}: {problem}")


def _brief(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    parts = [
        f"`{'.'.join(str(part) for part in error['loc']) or '(object)'}`: {error['msg']}"
        for error in errors[:MAX_LISTED_ERRORS]
    ]
    more = len(errors) - MAX_LISTED_ERRORS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")

"""The model script: the turns a scripted model server answers with, and loading it from a file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from evals_pipeline.errors import EvalsPipelineError

# The error `type` each API reports for a status when the script does not name one.
DEFAULT_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

ACTION_NAMES = ("write_file", "bash", "call")


class _Strict(BaseModel):
    # A misspelt key in a hand-written script must fail loudly, not be ignored.
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Action(_Strict):
    overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Explicit arguments per native tool name; the first declared tool named here wins."""


class WriteFile(_Action):
    """Create (or overwrite) a file; `path` may be relative to the agent's working directory."""

    action: Literal["write_file"]
    path: str = Field(min_length=1)
    content: str


class RunBash(_Action):
    """Run a shell command through whichever shell tool the agent declares."""

    action: Literal["bash"]
    command: str = Field(min_length=1)
    description: str | None = None


class RawCall(_Action):
    """Call a named tool with literal arguments (or raw `input` for a custom tool)."""

    action: Literal["call"]
    tool: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    input: str | None = None


Action = Annotated[WriteFile | RunBash | RawCall, Field(discriminator="action")]


class HttpError(_Strict):
    """An HTTP error answered instead of a reply; `times` limits it to the first N attempts."""

    status: int = Field(ge=400, le=599)
    type: str | None = None
    message: str | None = None
    times: int | None = Field(default=None, ge=1)

    @property
    def error_type(self) -> str:
        """The error type to report: the scripted one, else the API's usual one for the status."""
        if self.type:
            return self.type
        default = "invalid_request_error" if self.status < 500 else "api_error"
        return DEFAULT_ERROR_TYPES.get(self.status, default)


class Usage(_Strict):
    """Token counts to report instead of the characters/4 estimate."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)


class Turn(_Strict):
    """One model turn: text and tool calls, or an injected HTTP error."""

    text: str | None = None
    tool_calls: list[Action] = Field(default_factory=list)
    http_error: HttpError | None = None
    usage: Usage | None = None

    @model_validator(mode="after")
    def _says_something(self) -> Turn:
        has_reply = self.text is not None or bool(self.tool_calls)
        if not has_reply and self.http_error is None:
            raise ValueError(
                "the turn is empty; give it `text`, `tool_calls` or `http_error` (e.g. text: Done.)"
            )
        if has_reply and self.http_error is not None and self.http_error.times is None:
            raise ValueError(
                "`text`/`tool_calls` are never sent because `http_error` fails every attempt;"
                " add `times: N` to http_error to answer with them after N failures, or remove them"
            )
        if not has_reply and self.http_error is not None and self.http_error.times is not None:
            raise ValueError(
                "`http_error.times` needs the reply sent once the errors are used up;"
                " add `text` or `tool_calls` to this turn, or drop `times`"
            )
        return self

    @property
    def is_text_only(self) -> bool:
        """A plain answer with no tool calls or error: what the server repeats after the script."""
        return self.text is not None and not self.tool_calls and self.http_error is None


Needles = list[Annotated[str, Field(min_length=1)]]
"""Strings that must (or must not) all occur; one string is read as a list of one."""


class When(_Strict):
    """A rule's condition on the request's text (system prompt and every message, in order).

    All given conditions must hold; matching is case-sensitive (a regex can say `(?i)`).
    """

    contains: Needles | None = None
    regex: str | None = None
    not_contains: Needles | None = None

    @field_validator("contains", "not_contains", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _has_condition(self) -> When:
        if self.contains is None and self.regex is None and self.not_contains is None:
            raise ValueError(
                "`when` has no condition; give it `contains`, `regex` or `not_contains`"
                " (top-level `turns` already answer every request no rule matches)"
            )
        if self.regex is not None:
            try:
                re.compile(self.regex, re.S)
            except re.error as exc:
                raise ValueError(
                    f"`regex` {self.regex!r} is not a valid regular expression ({exc});"
                    " fix the pattern (Python `re` syntax; escape literal characters like `(`"
                    " with a backslash)"
                ) from None
        return self

    def matches(self, text: str) -> bool:
        """Whether the request text satisfies every condition."""
        return (
            all(needle in text for needle in _as_list(self.contains))
            and not any(needle in text for needle in _as_list(self.not_contains))
            and (self.regex is None or re.search(self.regex, text, re.S) is not None)
        )


def _as_list(needles: list[str] | None) -> list[str]:
    return needles or []


class Rule(_Strict):
    """Turns for requests whose text matches `when`: replies that depend on what is asked."""

    when: When
    turns: list[Turn] = Field(min_length=1)
    model: str | None = None


class ModelScript(_Strict):
    """The ordered turns a scripted model answers with; turn N answers after N assistant turns.

    `rules` pick another turn list by the request's content (the first match wins); `turns`
    answer the rest and may be left out when rules cover every request.
    """

    turns: list[Turn] = Field(default_factory=list)
    rules: list[Rule] = Field(default_factory=list)
    model: str | None = None
    side_requests: bool = True
    """Answer requests that declare no tools (an agent's title generation) with "OK", not a
    turn; LLM targets (judges, which never declare tools) turn this off."""

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, data: Any) -> Any:
        return {"turns": data} if isinstance(data, list) else data

    @model_validator(mode="after")
    def _answers_something(self) -> ModelScript:
        if not self.turns and not self.rules:
            raise ValueError(
                "the script has no turns; add at least one turn, e.g. `- text: Done.`"
                " (or `rules:` with turns of their own)"
            )
        return self

    def choose(self, text: str) -> tuple[int | None, list[Turn], str | None]:
        """The first rule matching the request text: (its index, its turns, its model).

        (None, the top-level turns, the script's model) when no rule matches.
        """
        for index, rule in enumerate(self.rules):
            if rule.when.matches(text):
                return index, rule.turns, rule.model or self.model
        return None, self.turns, self.model


class ScriptError(EvalsPipelineError):
    """A script file that cannot be used: names the file, each problem and its fix."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__("\n".join(f"{self.path}: {problem}" for problem in problems))


def load_script(path: Path | str) -> ModelScript:
    """Read and validate a YAML or JSON script file, raising ScriptError on any problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptError(path, ["no such file\n    fix: check the path"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(path, [f"cannot read the file: {exc}"]) from None
    data = _parse(path, text)
    try:
        return ModelScript.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(path, [describe_error(e) for e in exc.errors()]) from None


def _parse(path: Path, text: str) -> Any:
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            problem = (
                f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}\n"
                "    fix: check the syntax here (no trailing commas, keys in double quotes)"
            )
            raise ScriptError(path, [problem]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        fix = "check the indentation and quoting around this position"
        raise ScriptError(path, [f"{where}invalid YAML: {problem}\n    fix: {fix}"]) from None


# Which model a loc segment leads into, so an unknown key can list the allowed ones.
_NESTED: dict[str | int, type[BaseModel]] = {
    "rules": Rule,
    "when": When,
    "turns": Turn,
    "http_error": HttpError,
    "usage": Usage,
    "write_file": WriteFile,
    "bash": RunBash,
    "call": RawCall,
}


def describe_error(error: ErrorDetails) -> str:
    """One pydantic error as 'where: what is wrong' plus a fix line, naming the turn index."""
    loc = error["loc"]
    where = _where(loc)
    kind = error["type"]
    field = loc[-1] if loc else None
    if kind == "missing":
        problem, fix = f"`{field}` is required", f"add `{field}`"
        where = _where(loc[:-1])
    elif kind == "extra_forbidden":
        model: type[BaseModel] = ModelScript
        for part in loc[:-1]:
            model = _NESTED.get(part, model)
        allowed = ", ".join(model.model_fields)
        problem = f"unknown key `{field}`"
        fix = f"remove it or fix its spelling; allowed here: {allowed}"
        where = _where(loc[:-1])
    elif kind == "union_tag_invalid":
        tag = (error.get("ctx") or {}).get("tag")
        problem = f"unknown action {tag!r}"
        fix = f"use one of: {', '.join(ACTION_NAMES)}"
    elif kind == "union_tag_not_found":
        problem = "a tool call without `action`"
        fix = f"add `action:` with one of: {', '.join(ACTION_NAMES)}"
    elif kind == "value_error":
        message = error["msg"].removeprefix("Value error, ")
        problem, _, fix = message.partition("; ")
        fix = fix or "see the script format in the docs"
    elif loc == ("turns",) and kind == "too_short":
        problem, fix = "the script has no turns", "add at least one turn, e.g. `- text: Done.`"
    elif loc and loc[-1] == "turns" and kind == "too_short":
        problem, fix = "the rule has no turns", "add at least one turn, e.g. `- text: Done.`"
        where = _where(loc[:-1])
    elif not loc and kind in {"model_type", "model_attributes_type"}:
        problem = "the script must be a list of turns or a mapping with `turns`"
        fix = "write e.g. `- text: Done.` or `turns: [{text: Done.}]`"
    else:
        message = error["msg"]
        problem = f"{message[0].lower()}{message[1:]} (got {error['input']!r})"
        name = f"`{field}`" if isinstance(field, str) else "this value"
        wanted = message.removeprefix("Input should be ")
        fix = f"make {name} {wanted}" if wanted != message else f"change {name}"
    return f"{where}: {problem}\n    fix: {fix}" if where else f"{problem}\n    fix: {fix}"


def _where(loc: tuple[str | int, ...]) -> str:
    """`rules.0.turns.1.tool_calls.0.write_file.content` → `rule 0 (1st): turn 1 (2nd): tool_calls[0].content`."""
    parts: list[str] = []
    heads: list[str] = []
    index = 0
    while index < len(loc):
        part = loc[index]
        following = loc[index + 1] if index + 1 < len(loc) else None
        if part == "rules" and isinstance(following, int) and index == 0:
            heads.append(f"rule {following} ({_ordinal(following + 1)})")
            index += 2
            continue
        if part == "turns" and isinstance(following, int) and not parts:
            heads.append(f"turn {following} ({_ordinal(following + 1)})")
            index += 2
            continue
        if isinstance(part, int) and parts:
            parts[-1] += f"[{part}]"
        elif isinstance(part, int):
            parts.append(f"[{part}]")
        elif part in ACTION_NAMES and index > 0 and isinstance(loc[index - 1], int):
            pass  # pydantic's union-branch name, not a key the user wrote
        else:
            parts.append(str(part))
        index += 1
    located = ".".join(parts)
    return ": ".join([*heads, located] if located else heads)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

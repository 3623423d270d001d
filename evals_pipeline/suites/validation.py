"""Pydantic validation errors turned into SuiteIssues: user terms, a file position and a fix.

Pydantic reports one error per failed union branch and inserts branch names into error paths;
users wrote one value, so errors are mapped back onto the data they wrote, the branches that
clearly were not meant are dropped, and the rest are merged into one message per place.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from inspect import isclass
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evals_pipeline.agents.registry import PROVIDERS
from evals_pipeline.models.assertions import ASSERTION_TYPES
from evals_pipeline.models.targets import RegisteredTargets
from evals_pipeline.suites.agentv_compat import (
    AGENTV_PROVIDERS,
    LLM_ASSERTION_TYPES,
    RENAMED_ASSERTION_TYPES,
    RENAMED_KEYS,
)
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.slugs import slugify
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument

ModelT = TypeVar("ModelT", bound=BaseModel)

RUBRIC_FIX = "write it as '- type: rubrics' with 'criteria: [\"<the sentence>\"]'"
LLM_GRADER_FIX = (
    "use type: llm-grader (with a prompt, or rubrics: [...]) or type: rubrics (with "
    "criteria: [...]); both run on the agent target's grader_target"
)

# Error types that only say "this value is not of type X": one per failed union branch.
_TYPE_ERRORS: dict[str, str] = {
    "string_type": "a string",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean (true or false)",
    "bool_parsing": "a boolean (true or false)",
    "list_type": "a list",
    "dict_type": "a mapping (key: value lines)",
    "model_type": "a mapping (key: value lines)",
    "model_attributes_type": "a mapping (key: value lines)",
    "literal_error": "",  # described from the error's context
}

_BOUNDS: dict[str, str] = {
    "greater_than_equal": "greater than or equal to",
    "greater_than": "greater than",
    "less_than_equal": "less than or equal to",
    "less_than": "less than",
}

_EXAMPLES: dict[str, str] = {
    "id": "my-test",
    "command": "[python3, graders/check.py]",
    "value": "expected text",
    "name": "my-agent",
    "provider": "cli",
    "sessions_dir": "sessions",
    "threshold": "5000",
    "budget": "0.5",
    "tool": "Bash",
    "path": "answer.total",
    "role": "user",
    "fields": "[{path: answer.total}]",
    "type": "contains",
    "criteria": "[The answer is polite]",
    "outcome": "The answer is polite",
}


def validate_document(model: type[ModelT], doc: YamlDocument) -> ModelT:
    """Validate parsed YAML against a model, raising SuiteError with positioned issues."""
    try:
        return model.model_validate(doc.data)
    except ValidationError as exc:
        raise SuiteError(validation_issues(exc, doc, model)) from None


def validation_issues(
    error: ValidationError, doc: YamlDocument, root: type[BaseModel]
) -> list[SuiteIssue]:
    """One issue per place the user has to change, from a pydantic ValidationError."""
    return error_issues(error.errors(), doc, root)


def error_issues(
    errors: Sequence[ErrorDetails], doc: YamlDocument, root: type[BaseModel]
) -> list[SuiteIssue]:
    """`validation_issues` for some of a ValidationError's errors (e.g. one list entry's)."""
    located = _drop_unmeant_branches([_locate(e, doc.data) for e in errors])
    groups: dict[tuple[DataPath, str | None], list[_Located]] = {}
    for item in located:
        groups.setdefault((item.path, item.missing), []).append(item)
    describer = _Describer(doc, root)
    issues: list[SuiteIssue] = []
    misspelt = _misspelt_keys(located)
    for (path, missing), items in groups.items():
        if missing is not None:
            if (path, missing) not in misspelt:  # the unknown-key issue already says it
                issues.append(describer.missing(path, missing))
        elif all(i.error["type"] in _TYPE_ERRORS for i in items):
            issues.append(describer.wrong_type(path, [i.error for i in items]))
        else:
            issues.extend(
                describer.other(path, i) for i in items if i.error["type"] not in _TYPE_ERRORS
            )
    return issues


def data_path(error: ErrorDetails, data: Any) -> DataPath:
    """Where in the written data a pydantic error is (union branch names left out)."""
    return _locate(error, data).path


def key_suggestion(
    root: type[BaseModel], error: ErrorDetails, key: str
) -> tuple[str | None, list[str]]:
    """For an unknown key (an `extra_forbidden` error): the key meant, if one is close, and the
    keys valid at its place."""
    model = _model_at(root, error["loc"][:-1])
    valid = _valid_keys(model) if model else []
    return _suggest_key(key, valid), valid


def _misspelt_keys(located: list[_Located]) -> set[tuple[DataPath, str]]:
    """Missing keys that an unknown key next to them is a misspelling of (`valu` → `value`)."""
    extras: dict[DataPath, list[str]] = {}
    for item in located:
        if item.error["type"] == "extra_forbidden" and item.path:
            extras.setdefault(item.path[:-1], []).append(str(item.path[-1]))
    return {
        (item.path, item.missing)
        for item in located
        if item.missing is not None
        and difflib.get_close_matches(item.missing, extras.get(item.path, []), n=1, cutoff=0.6)
    }


@dataclass(frozen=True)
class _Located:
    error: ErrorDetails
    path: DataPath
    """Where in the written data the error is: the deepest part of its loc that exists."""
    missing: str | None = None
    """For a missing key: the key; `path` is then the mapping that lacks it."""


def _locate(error: ErrorDetails, data: Any) -> _Located:
    node = data
    path: list[str | int] = []
    loc = error["loc"]
    for index, segment in enumerate(loc):
        in_dict = isinstance(node, dict) and isinstance(segment, str) and segment in node
        in_list = isinstance(node, list) and isinstance(segment, int) and 0 <= segment < len(node)
        if in_dict or in_list:
            node = node[segment]
            path.append(segment)
        elif error["type"] == "missing" and index == len(loc) - 1 and isinstance(node, dict):
            return _Located(error, tuple(path), missing=str(segment))
        # Anything else is a union branch's name (`str`, `MessageSpec`, `contains`): no data.
    return _Located(error, tuple(path))


def _drop_unmeant_branches(located: list[_Located]) -> list[_Located]:
    """Drop "not of type X" errors where another error shows the user meant another branch.

    A plain field yields one error per value, so a type error next to any other error at the
    same place or deeper comes from a union branch the value never tried to be.
    """

    def explained(item: _Located) -> bool:
        return any(
            other is not item
            and other.path[: len(item.path)] == item.path
            and (len(other.path) > len(item.path) or other.error["type"] not in _TYPE_ERRORS)
            for other in located
        )

    return [i for i in located if i.error["type"] not in _TYPE_ERRORS or not explained(i)]


class _Describer:
    """Words for each kind of error, with the position of the node it is about."""

    def __init__(self, doc: YamlDocument, root: type[BaseModel]) -> None:
        self.doc = doc
        self.root = root

    def issue(self, at: DataPath, message: str, fix: str, *, key: bool = False) -> SuiteIssue:
        mark = self.doc.positions.key(at) if key else self.doc.positions.value(at)
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, message, fix)

    def where(self, path: DataPath) -> str:
        return display_path(path) or (
            "the suite" if self.root.__name__ == "EvalSuite" else "the file"
        )

    def value_at(self, path: DataPath) -> Any:
        node = self.doc.data
        for segment in path:
            node = node[segment]
        return node

    def missing(self, path: DataPath, key: str) -> SuiteIssue:
        where = self.where(path)
        if key == "tests" and not path:
            fix = "add a list of tests, e.g. tests: [{id: my-test, input: Say hello, criteria: Greets the user}]"
        else:
            fix = f"add '{key}: {_EXAMPLES.get(key, '...')}' to {where}"
        return self.issue(path, f"missing required key '{key}' in {where}", fix)

    def wrong_type(self, path: DataPath, errors: Sequence[ErrorDetails]) -> SuiteIssue:
        value = self.value_at(path)
        where = self.where(path)
        if _in_assertion_list(path) and isinstance(value, str):
            return self.issue(
                path,
                f"{where} is a plain sentence; an assertion must be a mapping with a 'type'",
                RUBRIC_FIX.replace("<the sentence>", value.replace('"', "'")),
            )
        in_list = _in_assertion_list(path) or _in_target_list(path)
        if in_list and not isinstance(value, dict):
            return self.issue(
                path,
                f"{where} must be a mapping, got {_describe_value(value)}",
                "write it as key: value lines, starting with "
                + ("'- type: contains'" if _in_assertion_list(path) else "'- name: my-agent'"),
            )
        inner = _unwritten_key(errors[0], value) if in_list else None
        if inner is not None:
            # The key is in the model but not in the data: written under an alias AgentV
            # accepts (model_reasoning_effort) and renamed before validation.
            where, value = f"{where}.{inner}", errors[0].get("input")
        expected: list[str] = []
        for error in errors:
            text = _TYPE_ERRORS[error["type"]] or _literal_text(error)
            if text not in expected:
                expected.append(text)
        key = inner or _example_key(path)
        message = f"{where} must be {_or(expected)}, got {_describe_value(value)}"
        if path[-1:] == ("value",) and _in_assertion_list(path[:-1]) and isinstance(value, list):
            fix = "for a list of values use type: contains-any or contains-all"
        else:
            fix = _type_fix(key, expected, value)
        return self.issue(path, message, fix)

    def other(self, path: DataPath, item: _Located) -> SuiteIssue:
        error = item.error
        kind = error["type"]
        ctx = error.get("ctx") or {}
        where = self.where(path)
        value = self.value_at(path)
        if kind == "extra_forbidden":
            return self.unknown_key(path, error)
        if kind == "union_tag_invalid":
            return self.bad_tag(path, str(ctx.get("discriminator", "")).strip("'"), value)
        if kind == "union_tag_not_found":
            return self.no_tag(path, str(ctx.get("discriminator", "")).strip("'"), value)
        if kind in _BOUNDS:
            bound = next(iter(ctx.values()), "?")
            if isinstance(bound, float) and bound.is_integer():
                bound = int(bound)
            relation = f"{_BOUNDS[kind]} {bound}"
            return self.issue(
                path,
                f"{where} must be a number {relation}, got {_describe_value(value)}",
                f"set {_example_key(path)} to a number {relation}",
            )
        if kind in ("too_short", "string_too_short"):
            minimum = ctx.get("min_length", 1)
            if kind == "string_too_short":
                return self.issue(path, f"{where} must not be empty", f"write a value for {where}")
            message = f"{where} must have at least {minimum} item{'s' if minimum != 1 else ''}"
            fix = (
                "add a test, e.g. '- id: my-test' with an input"
                if path == ("tests",)
                else f"add at least {minimum} entry to {where}, or remove the key"
            )
            return self.issue(path, message, fix)
        if kind in ("too_long", "string_too_long"):
            return self.issue(
                path,
                f"{where} is too long: at most {ctx.get('max_length')} allowed",
                f"shorten {where}",
            )
        if kind == "string_pattern_mismatch":
            if path == ("name",) and isinstance(value, str):
                try:
                    fix = f"write name: {slugify(value).replace('_', '-')}"
                except ValueError:
                    fix = "use lowercase letters, digits and '-' only"
                return self.issue(path, f"suite name {value!r} may only hold a-z, 0-9 and '-'", fix)
            return self.issue(
                path,
                f"{where} does not match the pattern {ctx.get('pattern')}",
                f"change {where} to match {ctx.get('pattern')}",
            )
        message = re.sub(r"^(Value|Assertion) error, ", "", error["msg"])
        return self.issue(path, f"{where}: {message}", f"correct {where}")

    def unknown_key(self, path: DataPath, error: ErrorDetails) -> SuiteIssue:
        key = str(path[-1])
        parent = path[:-1]
        where = display_path(parent) or "the top level"
        model = _model_at(self.root, error["loc"][:-1])
        valid = _valid_keys(model) if model else []
        message = f"unknown key '{key}' in {where}"
        suggestion = _suggest_key(key, valid)
        if suggestion:
            fix = f"did you mean '{suggestion}'?"
        elif valid:
            fix = f"remove it; valid keys here: {', '.join(valid)}"
        else:
            fix = "remove it"
        return self.issue(path, message, fix, key=True)

    def bad_tag(self, path: DataPath, discriminator: str, value: Any) -> SuiteIssue:
        tag = value.get(discriminator) if isinstance(value, dict) else None
        at = (*path, discriminator)
        if discriminator == "provider":
            message = f"unknown provider '{tag}'; valid providers: {', '.join(PROVIDERS)}"
            close = difflib.get_close_matches(str(tag), PROVIDERS, n=1, cutoff=0.6)
            if close:
                fix = f"did you mean '{close[0]}'?"
            elif tag in AGENTV_PROVIDERS:
                fix = (
                    f"run '{tag}' through provider: cli with a command, e.g. "
                    "command: my-agent --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"
                )
            else:
                fix = f"use one of: {', '.join(PROVIDERS)}"
            return self.issue(at, message, fix)
        return self.issue(at, *_assertion_type_problem(str(tag)))

    def no_tag(self, path: DataPath, discriminator: str, value: Any) -> SuiteIssue:
        where = self.where(path)
        if discriminator == "provider":
            return self.issue(
                path,
                f"{where} has no 'provider'",
                f"add 'provider:' with one of: {', '.join(PROVIDERS)}",
            )
        if isinstance(value, dict) and "include" in value:
            return self.issue(
                path,
                f"{where}: 'include' must be the only key of its entry (AgentV 4.42.4 skips "
                "an include with other keys)",
                "write '- include: <template name or path>' on its own",
            )
        if isinstance(value, dict) and ("rubrics" in value or "criteria" in value):
            key = "criteria" if "criteria" in value else "rubrics"
            kind = "rubrics" if key == "criteria" else "llm-grader"
            return self.issue(
                path,
                f"{where} looks like an LLM rubric but has no 'type'",
                f"add 'type: {kind}' (it checks each item of '{key}' with an LLM)",
            )
        return self.issue(
            path,
            f"{where} has no 'type'",
            f"add 'type:' with one of: {', '.join(ASSERTION_TYPES)}",
        )


def _assertion_type_problem(tag: str) -> tuple[str, str]:
    """Message and fix for an assertion type that is not one of ASSERTION_TYPES."""
    if tag in LLM_ASSERTION_TYPES:
        return (
            f"assertion type '{tag}' is not supported by evals-pipeline",
            LLM_GRADER_FIX,
        )
    if tag in RENAMED_ASSERTION_TYPES:
        new = RENAMED_ASSERTION_TYPES[tag]
        return f"assertion type '{tag}' was renamed to '{new}'", f"write type: {new}"
    valid = ", ".join(ASSERTION_TYPES)
    close = difflib.get_close_matches(tag, ASSERTION_TYPES, n=1, cutoff=0.6)
    fix = (
        f"did you mean '{close[0]}'?"
        if close
        else f"use one of the valid types, or add a grader file .agentv/assertions/{tag}.ts "
        "(or .js, .py) in or above the eval file's folder"
    )
    return f"unknown assertion type '{tag}'; valid types: {valid}", fix


def _in_assertion_list(path: DataPath) -> bool:
    return len(path) >= 2 and isinstance(path[-1], int) and path[-2] == "assertions"


def _in_target_list(path: DataPath) -> bool:
    return len(path) == 2 and path[0] == "targets" and isinstance(path[1], int)


def display_path(path: DataPath) -> str:
    """A data path as written in messages: `tests[0].assertions[1]`."""
    text = ""
    for segment in path:
        text += f"[{segment}]" if isinstance(segment, int) else (f".{segment}" if text else segment)
    return text


def _unwritten_key(error: ErrorDetails, value: Any) -> str | None:
    """The key a type error inside a list entry of a tagged union (`loc` ends in the tag and
    the key) is about, when the entry as written has no such key."""
    key = next((s for s in reversed(error["loc"]) if isinstance(s, str)), None)
    if isinstance(value, dict) and key is not None and key not in value:
        return key
    return None


def _example_key(path: DataPath) -> str:
    """The key to show in an example fix: `workers`, or `targets[0]` for a list item."""
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], str):
            return display_path(path[index:])
    return "value"


def _describe_value(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _literal_text(error: ErrorDetails) -> str:
    expected = str((error.get("ctx") or {}).get("expected", ""))
    return f"one of {expected}" if expected else "one of the allowed values"


def _or(options: list[str]) -> str:
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]


def _type_fix(key: str, expected: list[str], value: Any) -> str:
    if len(expected) > 1:
        return f"write {key} as {_or(expected)}"
    only = expected[0]
    if only == "a string":
        return f'put the value in quotes: {key}: "{value}"'
    if only == "a whole number":
        return f"write a whole number, e.g. {key}: 3"
    if only == "a number":
        return f"write a number, e.g. {key}: 0.5"
    if only.startswith("a boolean"):
        return f"write {key}: true or {key}: false"
    if only == "a list":
        return f"write {key} as a YAML list, one '- item' per line"
    if only.startswith("a mapping"):
        return f"write {key} as key: value lines indented under it"
    allowed = [v.strip().strip("'") for v in re.split(r",| or ", only.removeprefix("one of "))]
    close = difflib.get_close_matches(str(value), allowed, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else f"use {only}"


def _suggest_key(key: str, valid: list[str]) -> str | None:
    renamed = RENAMED_KEYS.get(key)
    if renamed in valid:
        return renamed
    # camelCase is rejected (as in AgentV); suggest the snake_case spelling.
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower().replace("-", "_")
    if snake in valid:
        return snake
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    return close[0] if close else None


def _valid_keys(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        registered = [m for m in annotation.__metadata__ if isinstance(m, RegisteredTargets)]
        if registered:  # the registry's target union: its members now
            return Union[registered[0].members()]  # noqa: UP007
        annotation = get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> list[Any]:
    annotation = _strip(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return [_strip(m) for m in get_args(annotation) if m is not type(None)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isclass(annotation) and issubclass(annotation, BaseModel)


def _is_branch_name(member: Any, segment: str | int) -> bool:
    """Whether `segment` is the name pydantic gave this union member in an error loc."""
    if not isinstance(segment, str):
        return False
    if _is_model(member):
        if segment == member.__name__:
            return True
        for field_name in ("type", "provider"):
            field = member.model_fields.get(field_name)
            literal = field is not None and get_origin(field.annotation) is Literal
            if literal and segment in get_args(field.annotation):
                return True
        return False
    origin = get_origin(member) or member
    name = getattr(origin, "__name__", None) or getattr(origin, "_name", None) or ""
    return segment.split("[")[0].lower() == str(name).lower()


def _step(annotation: Any, segment: str | int) -> Any:
    members = _members(annotation)
    if len(members) > 1:
        for member in members:
            if _is_branch_name(member, segment):
                return member
        for member in members:
            found = _step(member, segment)
            if found is not None:
                return found
        return None
    only = members[0]
    if _is_model(only):
        for name, field in only.model_fields.items():
            if segment in (name, field.alias):
                return field.annotation
        return None
    origin = get_origin(only)
    if origin is list and isinstance(segment, int):
        return get_args(only)[0]
    if origin is dict and isinstance(segment, str):
        return get_args(only)[1]
    return None


def _model_at(root: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model that validated the mapping at `loc`, following fields and union branches."""
    current: Any = root
    for segment in loc:
        current = _step(current, segment)
        if current is None:
            return None
    models = [m for m in _members(current) if _is_model(m)]
    return models[0] if len(models) == 1 else None

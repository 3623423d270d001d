"""Unknown fields AgentV ignores: dropped with a located warning instead of failing the load.

AgentV 4.42.4 warns "Unknown field 'X'. This field will be ignored." at the top level and in a
test (validation/eval-validator.ts), and its loaders read only the keys they know in targets
and assertions. So an unknown key at those four places is dropped with a warning that keeps our
"did you mean"; `--strict` makes it an error. Elsewhere (execution, workspace, hooks) an
unknown key stays an error. Free-form keys of dataset rows (tests from a JSONL or YAML file)
are dropped quietly, as AgentV drops them: a row warns only for a near miss of a known key.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.validation import (
    data_path,
    display_path,
    error_issues,
    key_suggestion,
)
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument

ModelT = TypeVar("ModelT", bound=BaseModel)

_ROUNDS = 4
"""Validations at most: dropping a key can let a union branch validate further and meet another."""


def validate_leniently(
    model: type[ModelT], doc: YamlDocument, warnings: list[SuiteIssue]
) -> ModelT:
    """Validate `doc.data` against `model`, dropping the unknown keys AgentV ignores (a warning
    each, added to `warnings`); raises SuiteError with the remaining problems."""
    validated, errors, dropped = _validate(model, doc)
    if validated is None:
        raise SuiteError(error_issues(errors, doc, model))
    warnings += dropped
    return validated


def drop_ignored_keys(model: type[BaseModel], doc: YamlDocument) -> list[SuiteIssue]:
    """Drop from `doc.data` the unknown keys AgentV ignores; the warnings. The data may still
    fail validation for other reasons (the caller validates it)."""
    return _validate(model, doc)[2]


def _validate(
    model: type[ModelT], doc: YamlDocument
) -> tuple[ModelT | None, list[ErrorDetails], list[SuiteIssue]]:
    """(the model or None, the errors left, the warnings of the keys dropped)."""
    errors: list[ErrorDetails] = []
    dataset_keys: set[tuple[str, str]] = set()
    dropped: list[SuiteIssue] = []
    for _ in range(_ROUNDS):
        try:
            return model.model_validate(doc.data), [], dropped
        except ValidationError as exc:
            errors = exc.errors()
        if not _drop_ignored(errors, doc, model, dropped, dataset_keys):
            break
    return None, errors, dropped


def _drop_ignored(
    errors: list[ErrorDetails],
    doc: YamlDocument,
    root: type[BaseModel],
    warnings: list[SuiteIssue],
    dataset_keys: set[tuple[str, str]],
) -> bool:
    """Drop each unknown key at a lenient place, with a warning; whether any was dropped.

    A near miss of a required key that is missing (`valu` for `value`) stays: the validation
    error names both ("unknown key 'valu' ... did you mean 'value'?").
    """
    missing = {(data_path(e, doc.data), e["loc"][-1]) for e in errors if e["type"] == "missing"}
    dropped = False
    for error in errors:
        if error["type"] != "extra_forbidden":
            continue
        path = data_path(error, doc.data)
        if not path or not _lenient(path[:-1]):
            continue
        owner = _node(doc.data, path[:-1])
        key = path[-1]
        if not isinstance(owner, dict) or key not in owner:
            continue  # the same node reached twice (a YAML alias): dropped already
        suggestion, valid = key_suggestion(root, error, str(key))
        if suggestion is not None and (path[:-1], suggestion) in missing:
            continue
        if path[0] == "targets" and suggestion == _snake(str(key)) != key:
            continue  # AgentV refuses a target's camelCase field when it resolves the target
        value = owner.pop(key)
        dropped = True
        if _into_config(owner, str(key), value):
            # AgentV hands an llm-grader's unknown keys to its prompt template in `config`.
            if suggestion is not None:
                warnings.append(_warning(doc, path, suggestion, valid, "passed in its config"))
            continue
        warning = _warning(doc, path, suggestion, valid)
        if _in_dataset(doc, path):
            # A dataset's free-form column: a warning only for a near miss, once per file.
            if suggestion is None or (warning.file, str(key)) in dataset_keys:
                continue
            dataset_keys.add((warning.file, str(key)))
        warnings.append(warning)
    return dropped


def _lenient(parent: DataPath) -> bool:
    """Whether the mapping at `parent` is one where AgentV ignores unknown keys: the top level,
    a test, a target or an assertion (composite members and turn assertions included)."""
    if not parent:
        return True
    if len(parent) == 2 and parent[0] in ("tests", "targets") and isinstance(parent[1], int):
        return True
    return len(parent) >= 2 and parent[-2] == "assertions" and isinstance(parent[-1], int)


def _in_dataset(doc: YamlDocument, path: DataPath) -> bool:
    """Whether the key is in a test read from another file (a JSONL or YAML dataset)."""
    if len(path) < 2 or path[0] != "tests":
        return False
    mark = doc.positions.key(path[:2])
    return Path(doc.file).suffix == ".jsonl" or (mark.file is not None and mark.file != doc.file)


def _node(data: object, path: DataPath) -> object:
    for segment in path:
        data = data[segment]  # type: ignore[index]
    return data


def _into_config(owner: dict[str, Any], key: str, value: Any) -> bool:
    """Put an llm-grader's unknown key into its `config` (a key written in `config` wins), as
    AgentV 4.42.4 does for a text prompt; whether it went there."""
    prompt = owner.get("prompt")
    config = owner.setdefault("config", {}) if owner.get("type") == "llm-grader" else None
    if not isinstance(config, dict) or isinstance(prompt, dict):
        return False  # a prompt command reads prompt.config instead: AgentV drops the key
    config.setdefault(key, value)
    return True


def _warning(
    doc: YamlDocument,
    path: DataPath,
    suggestion: str | None,
    valid: list[str],
    fate: str = "ignored",
) -> SuiteIssue:
    key, parent = path[-1], path[:-1]
    where = f"in {display_path(parent)}" if parent else "at the top level"
    message = f"unknown field '{key}' {where}, {fate}"
    if suggestion:
        message += f" (did you mean '{suggestion}'?)"
        fix = f"rename it to '{suggestion}'"
    elif valid:
        fix = f"remove it, as AgentV ignores it too; valid keys here: {', '.join(valid)}"
    else:
        fix = "remove it, as AgentV ignores it too"
    mark = doc.positions.key(path)
    return SuiteIssue(mark.file or doc.file, mark.line, mark.column, message, fix)


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()

"""AgentV's `${{ VAR }}` environment interpolation in suite and targets files, and its `.env`
files (interpolation.ts `interpolateEnv`, apps/cli eval/env.ts `loadEnvFromHierarchy`)."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from evals_pipeline.secrets import note_env_file, note_interpolated
from evals_pipeline.suites.errors import SuiteIssue
from evals_pipeline.suites.paths import search_dirs
from evals_pipeline.suites.probes import is_file, read_utf8
from evals_pipeline.suites.yaml_positions import DataPath, YamlDocument

_VARIABLE = re.compile(r"\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_WHOLE = re.compile(r"^\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
_NUMBER = re.compile(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?$")
_DOTENV_LINE = re.compile(
    r"^\s*(?:export\s+)?([\w.-]+)\s*[=:]\s*(\"(?:\\.|[^\"])*\"|'[^']*'|`[^`]*`|[^#\n]*?)\s*(?:#.*)?$"
)


def _coerce(value: str) -> Any:
    """A whole-string placeholder's value as AgentV types it: true/false and plain numbers."""
    if value in ("true", "false"):
        return value == "true"
    if _NUMBER.match(value):
        number = float(value)
        return int(number) if number.is_integer() and "." not in value else number
    return value


PUBLIC_ENV_KEY = "public_env"
"""The top-level key of a suite or targets file listing the variables whose interpolated values
are not secret (a model name, a region): every other interpolated value is scrubbed from what
the pipeline stores and prints (secrets.py). Our own key: AgentV warns that it ignores it."""


def public_variables(data: Any) -> frozenset[str]:
    """The names a file's `public_env:` lists (validation reports a malformed one)."""
    names = data.get(PUBLIC_ENV_KEY) if isinstance(data, dict) else None
    if not isinstance(names, list):
        return frozenset()
    return frozenset(name for name in names if isinstance(name, str))


def _value(values: Mapping[str, str], name: str, public: Collection[str]) -> str:
    """A variable's value for a placeholder, noted as a secret unless `public` lists it, so
    that whatever the pipeline stores is scrubbed of it (secrets.py)."""
    value = values.get(name, "")
    note_interpolated(name, value, public)
    return value


def interpolate(
    data: Any, env: Mapping[str, str] | None = None, public: Collection[str] | None = None
) -> Any:
    """Replace `${{ VAR }}` in every string value (not keys) with the environment's value.

    A missing variable becomes "" as in AgentV; a placeholder that is the whole string becomes
    a boolean or a number when the value reads as one (`"true"`, `"3"`). `public`: the
    variables whose values are not secret (default: the data's own `public_env:`).
    """
    values = os.environ if env is None else env
    return _interpolate(data, values, public_variables(data) if public is None else public)


def _interpolate(data: Any, values: Mapping[str, str], public: Collection[str]) -> Any:
    if isinstance(data, str):
        whole = _WHOLE.match(data)
        if whole:
            return _coerce(_value(values, whole.group(1), public))
        return _VARIABLE.sub(lambda m: _value(values, m.group(1), public), data)
    if isinstance(data, list):
        return [_interpolate(item, values, public) for item in data]
    if isinstance(data, dict):
        return {key: _interpolate(value, values, public) for key, value in data.items()}
    return data


def unset_variables(
    doc: YamlDocument, env: Mapping[str, str] | None = None, at: DataPath = ()
) -> list[SuiteIssue]:
    """A warning at each `${{ VAR }}` (in the data at path `at`) whose variable is not set:
    AgentV reads it as "", which is rarely what the author meant (an API key, a model name), so
    say where and how to set it."""
    values = os.environ if env is None else env
    warnings: list[SuiteIssue] = []

    def visit(data: Any, path: DataPath) -> None:
        if isinstance(data, str):
            for name in dict.fromkeys(m.group(1) for m in _VARIABLE.finditer(data)):
                if name not in values:
                    mark = doc.positions.value(path)
                    warnings.append(
                        SuiteIssue(
                            mark.file or doc.file,
                            mark.line,
                            mark.column,
                            f"${{{{ {name} }}}} is not set, so it reads as an empty string",
                            f"set {name} in the environment or in a .env file beside the eval "
                            "file (or in a parent folder)",
                        )
                    )
        elif isinstance(data, list):
            for index, item in enumerate(data):
                visit(item, (*path, index))
        elif isinstance(data, dict):
            for key, value in data.items():
                visit(value, (*path, key))

    data = doc.data
    for key in at:
        data = data[key]
    visit(data, at)
    return warnings


def parse_dotenv(text: str) -> dict[str, str]:
    """The variables of a `.env` file, read as the `dotenv` package reads them."""
    values: dict[str, str] = {}
    for line in text.replace("\r\n", "\n").split("\n"):
        match = _DOTENV_LINE.match(line)
        if not match:
            continue
        key, value = match.group(1), match.group(2).strip()
        quote = value[:1]
        if len(value) >= 2 and quote in "\"'`" and value.endswith(quote):
            value = value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace("\\r", "\r")
        values[key] = value
    return values


def load_env_files(eval_file: Path, cwd: Path | None = None) -> list[Path]:
    """Load `.env` files into the process environment as AgentV does: nearest first, a variable
    already set (by the shell or a nearer file) is kept. Returns the files read."""
    loaded: list[Path] = []
    for folder in search_dirs(eval_file.parent, cwd):
        file = folder / ".env"
        if not is_file(file):
            continue
        try:
            values = parse_dotenv(read_utf8(file))
        except (OSError, UnicodeDecodeError):
            continue
        for key, value in values.items():
            os.environ.setdefault(key, value)
        note_env_file(file)  # as found: resolving it would read the file system again
        loaded.append(file)
    return loaded

"""Assertion templates: `- include: name` splices the `assertions:` of a template file in place.

AgentV 4.42.4's rule: a bare name is `.agentv/templates/<name>.yaml` (or `.yml`), a value with a
`/` or a leading `.` is a path; either is looked for in the eval file's folder and each parent up
to the repository root. A template may include others (from its own folder first), at most
three deep, and never itself again. `${{ VAR }}` is replaced in templates as in the suite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.suites.errors import SuiteError
from evals_pipeline.suites.interpolation import interpolate
from evals_pipeline.suites.paths import absolute, search_dirs
from evals_pipeline.suites.probes import is_file
from evals_pipeline.suites.yaml_positions import read_yaml_file

MAX_INCLUDE_DEPTH = 3


class IncludeError(ValueError, EvalsPipelineError):
    """A template that cannot be found or read, with the fix to show next to it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def is_include(entry: Any) -> bool:
    """`{include: <string>}` and nothing else (AgentV ignores `include` next to other keys)."""
    return isinstance(entry, dict) and len(entry) == 1 and isinstance(entry.get("include"), str)


def template_candidates(include: str) -> list[str]:
    """The relative paths a reference may name: a template by name, else the path itself."""
    if include.startswith(".") or "/" in include or "\\" in include:
        return [include]
    return [f".agentv/templates/{include}.yaml", f".agentv/templates/{include}.yml"]


@dataclass
class Expansion:
    """The entries an assertion list holds once its includes are spliced in, and from where."""

    entries: list[Any] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    """For each entry, the index it came from in the list as written (an include's own index)."""
    templates: list[Path] = field(default_factory=list)


def expand_includes(entries: list[Any], roots: list[Path]) -> Expansion:
    """Splice every include of `entries` (recursively); raises IncludeError for a bad one."""
    expansion = Expansion()
    for index, entry in enumerate(entries):
        if not is_include(entry):
            expansion.entries.append(entry)
            expansion.origins.append(index)
            continue
        included, templates = _load(entry["include"], roots, depth=1, chain=())
        expansion.entries.extend(included)
        expansion.origins.extend([index] * len(included))
        expansion.templates.extend(templates)
    return expansion


def _resolve(include: str, roots: list[Path]) -> Path:
    tried: list[Path] = []
    for candidate in template_candidates(include):
        path = Path(candidate).expanduser()
        bases = [path] if path.is_absolute() else [absolute(candidate, root) for root in roots]
        for file in bases:
            if file not in tried:
                tried.append(file)
            if is_file(file):
                return file
    raise IncludeError(
        f"assertion template '{include}' not found",
        "looked for " + ", ".join(str(t) for t in tried) + "; create it (a YAML file with an "
        "'assertions:' list) or correct the name",
    )


def _load(
    include: str, roots: list[Path], depth: int, chain: tuple[Path, ...]
) -> tuple[list[Any], list[Path]]:
    if depth > MAX_INCLUDE_DEPTH:
        names = " -> ".join([*(str(c) for c in chain), include])
        raise IncludeError(
            f"assertion templates nest deeper than {MAX_INCLUDE_DEPTH}: {names}",
            "inline one level of templates",
        )
    file = _resolve(include, roots)
    if file in chain:
        cycle = " -> ".join(str(c) for c in (*chain, file))
        raise IncludeError(f"assertion template cycle: {cycle}", "remove the include that loops")
    try:
        data = interpolate(read_yaml_file(file).data)
    except SuiteError as exc:
        first = exc.issues[0]
        raise IncludeError(
            f"assertion template {file}:{first.line}:{first.column}: {first.message}", first.fix
        ) from None
    assertions = data.get("assertions") if isinstance(data, dict) else None
    if not isinstance(assertions, list):
        raise IncludeError(
            f"assertion template {file} has no top-level 'assertions:' list",
            "write the template as 'assertions:' followed by a list of assertions",
        )
    nested_roots = [file.parent, *(r for r in roots if r != file.parent)]
    entries: list[Any] = []
    templates = [file]
    for entry in assertions:
        if is_include(entry):
            more, more_templates = _load(entry["include"], nested_roots, depth + 1, (*chain, file))
            entries.extend(more)
            templates.extend(more_templates)
        else:
            entries.append(entry)
    return entries, templates


def include_roots(eval_file: Path) -> list[Path]:
    """Where includes are looked for: the eval file's folder, then its parents up to the repo."""
    return search_dirs(eval_file.parent)

"""The target catalog: the targets a suite may name, read from inline `targets:` or the targets
file AgentV would find (or `--targets`), each entry validated on its own so a broken one that
nothing runs is never reported (AgentV validates only the targets a run selects)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from evals_pipeline.models.targets import (
    TargetsFile,
    TargetSpec,
    canonical_target,
)
from evals_pipeline.settings import Settings
from evals_pipeline.suites.aliases import rewrite_target_aliases
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.interpolation import interpolate, unset_variables
from evals_pipeline.suites.paths import search_dirs
from evals_pipeline.suites.probes import is_file, probed
from evals_pipeline.suites.unknown_keys import drop_ignored_keys
from evals_pipeline.suites.validation import error_issues
from evals_pipeline.suites.yaml_positions import YamlDocument, read_yaml_file

TARGETS_FILE_CANDIDATES = (
    "targets.yaml",
    "targets.yml",
    ".agentv/targets.yaml",
    ".agentv/targets.yml",
)
"""What AgentV looks for in each folder, in this order (apps/cli utils/targets.ts)."""
TARGETS_ENV = "EVALS_PIPELINE_TARGETS"
"""The targets file `run --targets` chose, absolute: every process of the run loads the suite
with it (a Dagster step, a worker on another host)."""
TARGETS_EXAMPLE = """
      targets:
        - name: my-agent
          provider: cli
          command: my-agent --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"""
NO_TARGETS_FIX = (
    "add a target to the suite (or to .agentv/targets.yaml next to it):" + TARGETS_EXAMPLE
)


@dataclass(frozen=True)
class InvalidTarget:
    """A targets-file entry that failed validation, with its issues: reported only when
    something selects or delegates to it (a run target, a fallback, a grader target)."""

    name: str
    issues: list[SuiteIssue]
    use_target: None = None


CatalogEntry = TargetSpec | InvalidTarget

_TARGET: TypeAdapter[TargetSpec] = TypeAdapter(TargetSpec)


@dataclass
class TargetCatalog:
    """The targets a suite may name, and the file (and data path) that defines them."""

    doc: YamlDocument
    specs: Sequence[CatalogEntry]
    base_dir: Path
    """Relative paths inside these targets resolve against this folder."""
    inline: bool
    warnings: list[SuiteIssue] = field(default_factory=list)
    """Deprecated spellings and ignored keys in a targets file (inline targets warn with the
    suite)."""
    unset: dict[str, list[SuiteIssue]] = field(default_factory=dict)
    """Target name → a warning at each `${{ VAR }}` of its entry that is not set: said only for
    the targets a suite runs, as AgentV reads only those."""

    def unset_in(self, names: Iterable[str]) -> list[SuiteIssue]:
        """The unset-variable warnings of the targets `names`."""
        return [issue for name in dict.fromkeys(names) for issue in self.unset.get(name, [])]

    def position(self, index: int, *keys: str) -> SuiteIssue:
        """An issue skeleton at `targets[index].<keys>` in the defining file (message unset)."""
        mark = self.doc.positions.value(("targets", index, *keys))
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, "", "")

    def describe(self) -> str:
        names = ", ".join(spec.name for spec in self.specs) or "none"
        return f"defined targets: {names}" + ("" if self.inline else f" (in {self.doc.file})")


def targets_search_dirs(eval_file: Path) -> list[Path]:
    """The folders AgentV searches for a targets file, in order: the eval file's folder and each
    parent up to the repository root (the working folder's git root; up to `/` when the file is
    outside it), the root, then the working folder (utils/targets.ts `discoverTargetsFile`)."""
    return search_dirs(eval_file.parent)


@probed  # a targets file made nearer later is the one found
def find_targets_file(eval_file: Path, chosen: str | Path | None = None) -> Path | None:
    """The targets file AgentV would use for `eval_file`: `chosen` (`run --targets`), else
    `$EVALS_PIPELINE_TARGETS`, else the first of TARGETS_FILE_CANDIDATES in targets_search_dirs."""
    chosen = chosen or Settings.current().targets
    if chosen:
        return Path(chosen)
    for folder in targets_search_dirs(eval_file):
        for name in TARGETS_FILE_CANDIDATES:
            candidate = folder / name
            if is_file(candidate):
                return candidate
    return None


def explicit_targets_file(value: str) -> Path | None:
    """`--targets VALUE` as AgentV reads it: the file itself, else a folder holding one of
    TARGETS_FILE_CANDIDATES (relative to the working folder); None when neither exists."""
    given = Path(value).expanduser().resolve()
    if given.is_file():
        return given
    if given.is_dir():
        for name in TARGETS_FILE_CANDIDATES:
            if (given / name).is_file():
                return given / name
    return None


def no_targets_file_issue(suite_doc: YamlDocument) -> SuiteIssue:
    """Why the suite cannot run: no inline targets and no targets file in any folder AgentV
    searches; every folder looked in is named."""
    file = Path(suite_doc.file)
    mark = suite_doc.positions.value(("execution", "target"))
    places = ", ".join(str(folder) for folder in targets_search_dirs(file))
    return SuiteIssue(
        suite_doc.file,
        mark.line,
        mark.column,
        f"no targets file: looked for {', '.join(TARGETS_FILE_CANDIDATES)} in {places}",
        "create .agentv/targets.yaml in one of these folders (or pass run --targets FILE):"
        + TARGETS_EXAMPLE,
    )


def load_targets_file(path: Path) -> TargetCatalog:
    """Parse and validate a targets file; errors point into that file."""
    doc = read_yaml_file(path)
    if doc.data is None:
        raise SuiteError([SuiteIssue(doc.file, 1, 1, "the targets file is empty", NO_TARGETS_FIX)])
    warnings, issues = rewrite_target_aliases(doc)
    if issues:
        raise SuiteError(issues)
    entries = doc.data.get("targets") if isinstance(doc.data, dict) else None
    unset: dict[str, list[SuiteIssue]] = {}
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            unset.setdefault(entry["name"], []).extend(unset_variables(doc, at=("targets", index)))
    doc.data = interpolate(doc.data)
    warnings += drop_ignored_keys(TargetsFile, doc)
    specs, ignored = _validated_entries(doc)
    return TargetCatalog(
        doc=doc,
        specs=specs,
        # `.agentv/targets.yaml` belongs to the project folder holding `.agentv/`.
        base_dir=path.parent.parent if path.parent.name == ".agentv" else path.parent,
        inline=False,
        warnings=warnings + ignored,
        unset=unset,
    )


def _validated_entries(doc: YamlDocument) -> tuple[list[CatalogEntry], list[SuiteIssue]]:
    """The file's targets, an entry that fails validation kept as an InvalidTarget, and a
    warning for each key of an entry that no target reads (dropped).

    AgentV validates and resolves only the targets a run selects, so one broken target (e.g.
    `model: ${{ CODEX_MODEL }}` with the variable unset) must not stop suites that never run
    it; and it reads only the keys its provider knows, so an unknown key (`timeout_ms` on a
    cli target) is ignored, never an error. A file AgentV itself refuses to read (no `targets`
    list, an entry that is not a mapping, has no name, or neither provider nor use_target)
    stays a load error.
    """
    try:
        return list(TargetsFile.model_validate(doc.data).targets), []
    except ValidationError as exc:
        errors = exc.errors()
    entries = doc.data.get("targets") if isinstance(doc.data, dict) else None
    per_entry: dict[int, list[ErrorDetails]] = {}
    for error in errors:
        index = error["loc"][1] if len(error["loc"]) > 1 else None
        if (
            error["loc"][0] != "targets"
            or not isinstance(index, int)
            or not isinstance(entries, list)
            or not _readable_entry(entries[index])
        ):
            raise SuiteError(error_issues(errors, doc, TargetsFile)) from None
        per_entry.setdefault(index, []).append(error)
    assert isinstance(entries, list)
    specs: list[CatalogEntry] = []
    ignored: list[SuiteIssue] = []
    for index, entry in enumerate(entries):
        if index not in per_entry:
            specs.append(_TARGET.validate_python(canonical_target(entry)))
            continue
        unknown = [e for e in per_entry[index] if e["type"] == "extra_forbidden"]
        for issue in error_issues(unknown, doc, TargetsFile):
            message = f"{issue.message}, ignored (AgentV does not read it)"
            ignored.append(SuiteIssue(issue.file, issue.line, issue.column, message, issue.fix))
        kept = _without_keys(canonical_target(entry), [e["loc"][2:] for e in unknown])
        try:
            specs.append(_TARGET.validate_python(kept))
        except ValidationError:
            rest = [e for e in per_entry[index] if e["type"] != "extra_forbidden"]
            specs.append(
                InvalidTarget(name=entry["name"], issues=error_issues(rest, doc, TargetsFile))
            )
    return specs, ignored


def _without_keys(entry: dict[str, Any], locations: list[tuple[int | str, ...]]) -> dict[str, Any]:
    """`entry` (a copy) without the keys at `locations`, pydantic's error locations inside the
    entry (the first item may be the union's tag, the provider, which is not a key)."""
    entry = copy.deepcopy(entry)
    for loc in locations:
        path = list(loc[1:] if loc and loc[0] not in entry else loc)
        node: Any = entry
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and path:
            node.pop(path[-1], None)
    return entry


def _readable_entry(entry: Any) -> bool:
    """Whether AgentV's targets-file reader accepts the entry (targets-file.ts)."""
    if not isinstance(entry, dict):
        return False
    name, provider, delegate = entry.get("name"), entry.get("provider"), entry.get("use_target")
    return (
        isinstance(name, str)
        and bool(name.strip())
        and any(isinstance(v, str) and v.strip() for v in (provider, delegate))
    )

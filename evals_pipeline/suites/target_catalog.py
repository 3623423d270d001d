"""The target catalog: the targets a suite may name, read from inline `targets:` or the nearest
`.agentv/targets.yaml`, each entry validated on its own so a broken one that nothing runs is
never reported (AgentV validates only the targets a run selects)."""

from __future__ import annotations

from collections.abc import Sequence
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
from evals_pipeline.suites.aliases import rewrite_target_aliases
from evals_pipeline.suites.errors import SuiteError, SuiteIssue
from evals_pipeline.suites.interpolation import interpolate
from evals_pipeline.suites.probes import probed
from evals_pipeline.suites.unknown_keys import drop_ignored_keys
from evals_pipeline.suites.validation import error_issues
from evals_pipeline.suites.yaml_positions import YamlDocument, read_yaml_file

TARGETS_FILE_NAMES = ("targets.yaml", "targets.yml")
NO_TARGETS_FIX = """add a target to the suite (or to .agentv/targets.yaml next to it):
      targets:
        - name: my-agent
          provider: cli
          command: my-agent --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}"""


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
    """Deprecated spellings in a targets file, rewritten (inline targets warn with the suite)."""

    def position(self, index: int, *keys: str) -> SuiteIssue:
        """An issue skeleton at `targets[index].<keys>` in the defining file (message unset)."""
        mark = self.doc.positions.value(("targets", index, *keys))
        return SuiteIssue(mark.file or self.doc.file, mark.line, mark.column, "", "")

    def describe(self) -> str:
        names = ", ".join(spec.name for spec in self.specs) or "none"
        return f"defined targets: {names}" + ("" if self.inline else f" (in {self.doc.file})")


@probed  # a targets file made nearer later is the one found
def find_targets_file(start_dir: Path) -> Path | None:
    """The nearest `.agentv/targets.yaml` in `start_dir` or one of its parents."""
    for folder in (start_dir, *start_dir.parents):
        for name in TARGETS_FILE_NAMES:
            candidate = folder / ".agentv" / name
            if candidate.is_file():
                return candidate
    return None


def load_targets_file(path: Path) -> TargetCatalog:
    """Parse and validate a targets file; errors point into that file."""
    doc = read_yaml_file(path)
    if doc.data is None:
        raise SuiteError([SuiteIssue(doc.file, 1, 1, "the targets file is empty", NO_TARGETS_FIX)])
    warnings, issues = rewrite_target_aliases(doc)
    if issues:
        raise SuiteError(issues)
    doc.data = interpolate(doc.data)
    warnings += drop_ignored_keys(TargetsFile, doc)
    return TargetCatalog(
        doc=doc,
        specs=_validated_entries(doc),
        base_dir=path.parent.parent,
        inline=False,
        warnings=warnings,
    )


def _validated_entries(doc: YamlDocument) -> list[CatalogEntry]:
    """The file's targets, an entry that fails validation kept as an InvalidTarget.

    AgentV validates and resolves only the targets a run selects, so one broken target (e.g.
    `model: ${{ CODEX_MODEL }}` with the variable unset) must not stop suites that never run
    it. A file AgentV itself refuses to read (no `targets` list, an entry that is not a
    mapping, has no name, or neither provider nor use_target) stays a load error.
    """
    try:
        return list(TargetsFile.model_validate(doc.data).targets)
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
    for index, entry in enumerate(entries):
        if index in per_entry:
            issues = error_issues(per_entry[index], doc, TargetsFile)
            specs.append(InvalidTarget(name=entry["name"], issues=issues))
        else:
            specs.append(_TARGET.validate_python(canonical_target(entry)))
    return specs


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

"""file-changes: which files the agent added, modified or deleted, read from the workspace diff."""

from __future__ import annotations

import fnmatch
import re
from typing import Literal

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import FileChangesAssertion
from evals_pipeline.models.grade import AssertionOutcome

ChangeKind = Literal["added", "modified", "deleted"]

_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$")


def changed_files(diff: str | None) -> dict[str, ChangeKind]:
    """Each file a unified git diff touches, by path, with how it changed (renames: delete+add)."""
    changes: dict[str, ChangeKind] = {}
    current: tuple[str, str] | None = None
    for line in (diff or "").splitlines():
        header = _HEADER.match(line)
        if header:
            current = (header.group(1), header.group(2))
            changes[current[1]] = "modified"
        elif current and line.startswith("new file mode"):
            changes[current[1]] = "added"
        elif current and line.startswith("deleted file mode"):
            changes[current[0]] = "deleted"
        elif current and line.startswith("rename from "):
            changes[line.removeprefix("rename from ")] = "deleted"
        elif current and line.startswith("rename to "):
            changes[line.removeprefix("rename to ")] = "added"
    return changes


def _matching(pattern: str, changes: dict[str, ChangeKind]) -> list[str]:
    return [path for path in changes if path == pattern or fnmatch.fnmatchcase(path, pattern)]


@evaluator(FileChangesAssertion)
def evaluate_file_changes(spec: FileChangesAssertion, ctx: GradingContext) -> Evaluation:
    """Passed checks ÷ checks, one check per listed path (and one for `only`)."""
    changes = changed_files(ctx.session.file_changes)
    summary = ", ".join(f"{kind} {path}" for path, kind in sorted(changes.items())) or "none"
    evidence = f"changed files: {summary}"
    checks: list[AssertionOutcome] = []
    expected: list[tuple[str, ChangeKind]] = [
        *((p, "added") for p in spec.added),
        *((p, "modified") for p in spec.modified),
        *((p, "deleted") for p in spec.deleted),
    ]
    for pattern, kind in expected:
        hits = [p for p in _matching(pattern, changes) if changes[p] == kind]
        checks.append(
            AssertionOutcome(text=f"{pattern} {kind}", passed=bool(hits), evidence=evidence)
        )
    for pattern in spec.unchanged:
        hits = _matching(pattern, changes)
        checks.append(
            AssertionOutcome(text=f"{pattern} unchanged", passed=not hits, evidence=evidence)
        )
    if spec.only:
        allowed = {p for pattern, _ in expected for p in _matching(pattern, changes)}
        extra = sorted(set(changes) - allowed)
        checks.append(
            AssertionOutcome(
                text="no other file changed",
                passed=not extra,
                evidence=f"also changed: {', '.join(extra)}" if extra else evidence,
            )
        )
    if not checks:
        checks.append(
            AssertionOutcome(text="some file changed", passed=bool(changes), evidence=evidence)
        )
    return Evaluation.ratio(checks, {"changed_files": changes})

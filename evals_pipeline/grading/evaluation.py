"""What one evaluator found, before the scoring rules (clamp, negate, verdict) turn it into a grade.

Evaluators only measure; `scoring` applies AgentV's rules once for all of them, so negation and
clamping cannot drift between assertion types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evals_pipeline.models.errors import ErrorKind
from evals_pipeline.models.grade import AssertionOutcome, GraderResult

PREVIEW_CHARS = 200


@dataclass(frozen=True)
class Evaluation:
    """A raw score with its checked statements, or the reason the evaluator itself failed."""

    score: float | None
    assertions: list[AssertionOutcome] = field(default_factory=list)
    details: dict[str, Any] | None = None
    error: str | None = None
    error_kind: ErrorKind = "failed"
    """What kind of failure `error` is (a timeout, an exit code, unreadable output)."""
    stderr: str | None = None
    passed: bool | None = None
    """The verdict when the evaluator decides it (a threshold composite); None: score ≥ 0.8."""
    children: list[GraderResult] = field(default_factory=list)
    """A composite's members, graded: kept in the grade as AgentV's nested `scores`."""
    warnings: list[str] = field(default_factory=list)
    """Why the score stands but is doubtful (a code grader scored by its exit code alone)."""

    @classmethod
    def failed(
        cls, error: str, stderr: str | None = None, kind: ErrorKind = "failed"
    ) -> Evaluation:
        """The evaluator could not judge (crash, garbage, timeout): no score at all."""
        return cls(score=None, error=error, error_kind=kind, stderr=stderr or None)

    @classmethod
    def check(cls, passed: bool, text: str, evidence: str | None = None) -> Evaluation:
        """A binary check: score 1 or 0 with one statement."""
        outcome = AssertionOutcome(text=text, passed=passed, evidence=evidence)
        return cls(score=1.0 if passed else 0.0, assertions=[outcome])

    @classmethod
    def ratio(
        cls, checks: list[AssertionOutcome], details: dict[str, Any] | None = None
    ) -> Evaluation:
        """Score = passed checks ÷ checks; nothing to check scores 1."""
        passed = sum(1 for c in checks if c.passed)
        return cls(
            score=passed / len(checks) if checks else 1.0, assertions=checks, details=details
        )


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of `text` for evidence, marked when cut, so a reader sees what was judged."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} chars)"

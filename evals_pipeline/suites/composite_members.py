"""Composite members AgentV 4.42.4 skips, and the member keys its composite grader never reads:
the alias rewrite drops such members with a located warning whose fix makes both tools run them."""

from __future__ import annotations

from typing import Any

from evals_pipeline.models.assertions import ASSERTION_TYPES, normalize_assertion_type
from evals_pipeline.suites.agentv_compat import SKIPPED_JUDGE_TYPES
from evals_pipeline.suites.includes import is_include

MEMBER_IGNORED_KEYS: tuple[str, ...] = ("weight", "required", "min_score", "negate")
"""Keys AgentV's composite grader never reads on its members."""


def member_problem(member: Any) -> tuple[str, str] | None:
    """Why AgentV 4.42.4 skips this composite member (message, fix), if it does: the member is
    dropped with the warning, whose fix makes both tools run it."""
    if isinstance(member, str):
        return (
            "a plain sentence inside a composite is skipped, as AgentV 4.42.4 skips it",
            "write it as a named member: {name: ..., type: rubrics, criteria: [<the sentence>]}",
        )
    if not isinstance(member, dict) or is_include(member):
        return None
    kind = member.get("type")
    if not isinstance(kind, str):
        return None
    canonical = normalize_assertion_type(kind)
    if canonical in SKIPPED_JUDGE_TYPES:
        return None  # skipped with a warning, like anywhere else
    if canonical != kind and canonical in ASSERTION_TYPES:
        return (
            f"composite member type '{kind}' is skipped, as AgentV 4.42.4 skips it (it reads "
            "member types only in kebab-case)",
            f"write type: {canonical}",
        )
    if canonical not in ASSERTION_TYPES and canonical != "rubric":
        return (
            f"composite member type '{kind}' is not a built-in type: skipped, as AgentV 4.42.4 "
            "skips custom types inside a composite",
            "use a built-in type, or a code-grader with the grader file as its command",
        )
    return None

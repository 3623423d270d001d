"""What a §9 rule reads and what it returns: the failed trial, with the caller's limits, and the
firing that names a category, the rule's clause and its evidence."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property

from evals_pipeline.grading import changed_files
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.judging import FAILURE_TAXONOMY, FailureCategory, FailureTier
from evals_pipeline.models.session import Session


@dataclass(frozen=True)
class Firing:
    category: FailureCategory
    clause: str
    evidence: tuple[str, ...]
    terminal: bool = False  # the run ended for this reason: the spec's `termination_reason`

    @property
    def tier(self) -> FailureTier:
        return FAILURE_TAXONOMY[self.category][1]

    @property
    def rule_id(self) -> str:
        return f"{FAILURE_TAXONOMY[self.category][0]}.{self.clause}"


@dataclass(frozen=True)
class FailedTrial:
    """One failed trial with the caller's limits, and the views of it the rules share."""

    session: Session
    events: Sequence[EnrichedEvent]
    grade: TrialGrade
    task_files: Collection[str] | None
    expects_changes: bool
    protected_paths: Collection[str]
    allowed_paths: Collection[str] | None
    context_window: int | None
    time_limit_s: float | None
    max_turns: int | None
    cost_budget_usd: float | None

    @cached_property
    def tool_calls(self) -> list[EnrichedEvent]:
        return [e for e in self.events if e.kind == "tool_call"]

    @cached_property
    def changes(self) -> list[str]:
        return sorted(changed_files(self.session.file_changes))

    @property
    def completed(self) -> bool:
        return self.session.status == "ok"

    @property
    def wall_ms(self) -> int | None:
        s = self.session
        if s.duration_ms is not None:
            return s.duration_ms
        return s.end_ms - s.start_ms if s.end_ms is not None and s.start_ms is not None else None


Rule = Callable[[FailedTrial], Firing | None]


def fire(category: FailureCategory, clause: str, *evidence: str, terminal: bool = False) -> Firing:
    return Firing(category, clause, tuple(evidence), terminal)

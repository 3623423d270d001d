"""`attribute_failure`: run the rules in §9.1's precedence and pick the primary category."""

from __future__ import annotations

from collections.abc import Collection

from evals_pipeline.judging.attribution.capability import RULES as CAPABILITY_RULES
from evals_pipeline.judging.attribution.environmental import RULES as ENVIRONMENTAL_RULES
from evals_pipeline.judging.attribution.resource import RULES as RESOURCE_RULES
from evals_pipeline.judging.attribution.rule import FailedTrial, Firing, Rule
from evals_pipeline.judging.attribution.tags import secondary_tags
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import TrialGrade
from evals_pipeline.models.judging import FailureClassification
from evals_pipeline.models.session import Session

_RULES: tuple[Rule, ...] = (*ENVIRONMENTAL_RULES, *RESOURCE_RULES, *CAPABILITY_RULES)


def attribute_failure(
    session: Session,
    events: list[EnrichedEvent],
    trial: TrialGrade,
    *,
    task_files: Collection[str] | None = None,
    expects_changes: bool = True,
    protected_paths: Collection[str] = (),
    allowed_paths: Collection[str] | None = None,
    context_window: int | None = None,
    time_limit_s: float | None = None,
    max_turns: int | None = None,
    cost_budget_usd: float | None = None,
) -> FailureClassification | None:
    """Classify a failed trial by §9's rules; None when there is no failure to attribute.

    None: the trial passed, a grader errored (no outcome was checked), or the run failed in a way
    no rule recognises (an `agent_error` matching no known pattern): no category is guessed.
    Limits come from the case and target, and a rule whose limit is None is skipped:
    `task_files` the files the task is about (reference patch, or named in the task or traceback;
    globs); `expects_changes` False for tasks answered in text, where an empty diff is no
    misunderstanding; `protected_paths` / `allowed_paths` the task's path constraints (globs);
    `context_window` in tokens; `time_limit_s`, `max_turns`, `cost_budget_usd` harness budgets.
    """
    if trial.verdict == "pass" or trial.failure_stage == "grader":
        return None
    t = FailedTrial(
        session,
        events,
        trial,
        task_files,
        expects_changes,
        protected_paths,
        allowed_paths,
        context_window,
        time_limit_s,
        max_turns,
        cost_budget_usd,
    )
    fired = [firing for rule in _RULES if (firing := rule(t)) is not None]
    if not fired:
        return None
    primary = _primary(fired)
    others = dict.fromkeys(f.category for f in fired if f.category != primary.category)
    return FailureClassification(
        primary=primary.category,
        tier=primary.tier,
        secondary=(*others, *secondary_tags(t)),
        evidence=primary.evidence,
        rule_id=primary.rule_id,
    )


def _primary(fired: list[Firing]) -> Firing:
    # Rules run in precedence order, so the first firing names the tier; within the resource
    # tier the budget the run actually ended on beats one it merely came close to.
    first = fired[0]
    if first.tier != "resource":
        return first
    return next((f for f in fired if f.tier == "resource" and f.terminal), first)

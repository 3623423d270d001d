"""Per-agent figures from graded cases."""

from __future__ import annotations

from collections import Counter, defaultdict
from statistics import fmean, median

from evals_pipeline.models.events import MILESTONE_NAMES
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.report import AgentSummary, CaseFailure, EvalReport
from evals_pipeline.process import now_ms


def summarize_agent(agent: str, grades: list[CaseGrade]) -> AgentSummary:
    """Counts, pass rate, mean score, cost, tokens and duration of one agent's cases."""
    passed = sum(g.verdict == "pass" for g in grades)
    failed = sum(g.verdict == "fail" for g in grades)
    scored = [g.score for g in grades if g.verdict != "error"]
    trials = [t for g in grades for t in g.trials]
    durations = [t.duration_ms for t in trials if t.duration_ms is not None]
    usages = [t.token_usage for t in trials if t.token_usage]
    tools: Counter[str] = Counter()
    for t in trials:
        tools.update(t.tool_calls)
    reached = _milestone_times(trials)
    return AgentSummary(
        agent=agent,
        cases=len(grades),
        passed=passed,
        failed=failed,
        errors=len(grades) - passed - failed,
        pass_rate=passed / (passed + failed) if passed + failed else None,
        mean_score=fmean(scored) if scored else None,
        cost_usd=sum(t.cost_usd or 0.0 for t in trials),
        total_tokens=sum(u.total for u in usages),
        input_tokens=sum(u.input + u.cached for u in usages),
        output_tokens=sum(u.output for u in usages),
        mean_duration_ms=fmean(durations) if durations else None,
        llm_calls=sum(t.llm_calls for t in trials),
        tool_calls=dict(tools.most_common()),
        milestone_ms={name: median(times) for name, times in reached.items()},
        milestone_trials={name: len(times) for name, times in reached.items()},
    )


def _milestone_times(trials: list[TrialGrade]) -> dict[str, list[int]]:
    """Elapsed ms to each milestone, per milestone, over the trials that reached it."""
    times: dict[str, list[int]] = {}
    for trial in trials:
        for m in trial.milestones:
            if m.elapsed_ms is not None:
                times.setdefault(m.name, []).append(m.elapsed_ms)
    return {name: times[name] for name in MILESTONE_NAMES if name in times}


def failure_reason(grade: CaseGrade) -> str:
    """An error's stage and first line, or a failure's score and the graders that did not pass."""
    if grade.verdict == "error":
        first_line = (grade.error or "").strip().splitlines()[:1]
        return f"error in {grade.failure_stage}: {first_line[0] if first_line else 'unknown'}"[:300]
    failing = [r.name for t in grade.trials for r in t.graders if r.verdict != "pass"]
    graders = ", ".join(dict.fromkeys(failing)) or "no grader failed; the weighted score is too low"
    return f"score {grade.score:.2f} < {grade.threshold:g}: {graders}"[:300]


def case_failures(grades: list[CaseGrade]) -> list[CaseFailure]:
    """Every (case, agent) that did not pass, ordered by agent and test id."""
    return [
        CaseFailure(agent=g.agent, test_id=g.test_id, verdict=g.verdict, reason=failure_reason(g))
        for g in sorted(grades, key=lambda g: (g.agent, g.test_id))
        if g.verdict != "pass"
    ]


def build_report(
    suite: str,
    grades: list[CaseGrade],
    *,
    agents: list[str],
    not_run: int = 0,
    run_id: str | None = None,
) -> EvalReport:
    """The report over `grades`, one summary per agent in `agents` order (agents with none too)."""
    by_agent: dict[str, list[CaseGrade]] = defaultdict(list)
    for grade in grades:
        by_agent[grade.agent].append(grade)
    ordered = list(agents) + sorted(set(by_agent) - set(agents))
    return EvalReport(
        suite=suite,
        created_ms=now_ms(),
        run_id=run_id,
        agents=[summarize_agent(a, by_agent[a]) for a in ordered],
        not_run=not_run,
        failures=case_failures(grades),
    )

"""The report: per-agent figures from graded cases, and the judged sections when there are judgments,
pairwise verdicts or human labels (docs/report.md)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from statistics import fmean, median

from evals_pipeline.models.events import MILESTONE_NAMES
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import AgentSummary, EvalReport
from evals_pipeline.process import now_ms
from evals_pipeline.reporting.case_lines import case_failures, case_warnings
from evals_pipeline.reporting.comparisons import comparisons
from evals_pipeline.reporting.failures import agent_failures
from evals_pipeline.reporting.judge_health import judge_health
from evals_pipeline.reporting.judge_usage import judge_usage
from evals_pipeline.reporting.labels import HumanLabel
from evals_pipeline.reporting.rates import (
    calibration_report,
    decisions,
    dimension_rates,
    match_labels,
)
from evals_pipeline.reporting.trials import agent_repeated_trials
from evals_pipeline.reporting.variants import case_variants

DEFAULT_BOOTSTRAP_SEED = 12345


def summarize_agent(agent: str, grades: list[CaseGrade]) -> AgentSummary:
    """Counts, pass rate, mean score, cost (and per passed case), tokens and duration of one
    agent's cases."""
    passed = sum(g.verdict == "pass" for g in grades)
    failed = sum(g.verdict == "fail" for g in grades)
    scored = [g.score for g in grades if g.verdict != "error"]
    trials = [t for g in grades for t in g.trials]
    durations = [t.wall_ms for t in trials if t.wall_ms is not None]
    usages = [t.token_usage for t in trials if t.token_usage]
    tools: Counter[str] = Counter()
    for t in trials:
        tools.update(t.tool_calls)
    reached = _milestone_times(trials)
    costs = [t.cost_usd for t in trials if t.cost_usd is not None]
    # Unknown stays unknown: a run whose agent reported no cost or tokens never reads as free.
    cost = sum(costs) if costs else None
    reused = [g.reused for g in grades if g.reused is not None]
    return AgentSummary(
        agent=agent,
        cases=len(grades),
        passed=passed,
        failed=failed,
        errors=len(grades) - passed - failed,
        mean_score=fmean(scored) if scored else None,
        cost_usd=cost,
        cost_per_pass_usd=cost / passed if passed and cost is not None else None,
        total_tokens=sum(u.total for u in usages) if usages else None,
        input_tokens=sum(u.input + u.cached for u in usages) if usages else None,
        output_tokens=sum(u.output for u in usages) if usages else None,
        mean_duration_ms=fmean(durations) if durations else None,
        llm_calls=sum(t.llm_calls for t in trials),
        agent_versions=list(dict.fromkeys(t.agent_version for t in trials if t.agent_version)),
        tool_calls=dict(tools.most_common()),
        milestone_ms={name: median(times) for name, times in reached.items()},
        milestone_trials={name: len(times) for name, times in reached.items()},
        reused=len(reused),
        oldest_reused_ms=min((r.stored_ms for r in reused), default=None),
    )


def _milestone_times(trials: list[TrialGrade]) -> dict[str, list[int]]:
    """Elapsed ms to each milestone, per milestone, over the trials that reached it."""
    times: dict[str, list[int]] = {}
    for trial in trials:
        for m in trial.milestones:
            if m.elapsed_ms is not None:
                times.setdefault(m.name, []).append(m.elapsed_ms)
    return {name: times[name] for name in MILESTONE_NAMES if name in times}


def build_report(
    suite: str,
    grades: Sequence[CaseGrade],
    *,
    agents: Sequence[str],
    not_run: int = 0,
    run_id: str | None = None,
    judgments: Sequence[CaseJudgment] = (),
    pairwise: Sequence[CasePairwise] = (),
    labels: Sequence[HumanLabel] | None = None,
    labels_source: str | None = None,
    bootstrap_seed: int = DEFAULT_BOOTSTRAP_SEED,
    bootstrap_resamples: int = 10_000,
) -> EvalReport:
    """The report over `grades`, one summary per agent in `agents` order (agents with none too).

    `judgments` add corrected rates per dimension, failure attribution and judge health;
    `pairwise` adds win rates and position bias to the comparisons; `labels` (the calibration
    file, see `load_labels`; None when there is none, `labels_source` its path for the report)
    calibrate the rates. Every paired bootstrap uses `bootstrap_seed`, which the report records.
    """
    grades = list(grades)
    by_agent: dict[str, list[CaseGrade]] = defaultdict(list)
    for grade in grades:
        by_agent[grade.agent].append(grade)
    judged = {j.agent for j in judgments}
    ordered = list(agents) + sorted((set(by_agent) | judged) - set(agents))
    calibration = match = None
    if labels is not None:
        match = match_labels(labels, decisions(judgments))
        calibration = calibration_report(labels, match, source=labels_source)
    health = judge_health(judgments, pairwise, match)
    compared = comparisons(
        grades, pairwise, ordered, health, seed=bootstrap_seed, n_resamples=bootstrap_resamples
    )
    bias = None
    if any(case.pairs for case in pairwise):
        bias = any(c.position_bias_detected for c in compared) or any(
            h.bias_detected for h in health
        )
    return EvalReport(
        suite=suite,
        created_ms=now_ms(),
        run_id=run_id,
        agents=[summarize_agent(a, by_agent[a]) for a in ordered if a in by_agent or a in agents],
        not_run=not_run,
        failures=case_failures(grades),
        warnings=case_warnings(grades),
        rates=dimension_rates(judgments, ordered, calibration),
        calibration=calibration,
        failure_breakdown=agent_failures(grades, judgments, ordered) if judgments else [],
        repeated_trials=agent_repeated_trials(grades, ordered),
        comparisons=compared,
        position_bias_detected=bias,
        judge_health=health,
        judge_usage=judge_usage(grades, judgments, pairwise),
        bootstrap_seed=bootstrap_seed if any(c.bootstrap for c in compared) else None,
        variants=case_variants(grades, ordered),
    )

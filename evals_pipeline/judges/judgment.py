"""The judge layer over one (case, agent): per trial, every dimension's panel vote, heuristic and
blend, and the attribution of a failure; and per case, the position-swapped comparison of its
agents. Pure domain code: clients come in, records go out.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from evals_pipeline.judges.attribution import attribute_failure
from evals_pipeline.judges.context import GradingContext
from evals_pipeline.judges.dimension_judge import DimensionVote, judge_dimension
from evals_pipeline.judges.heuristics import heuristic_scores
from evals_pipeline.judges.judge_input import build_judge_input, render_work, task_text
from evals_pipeline.judges.pairwise import Contestant, compare_pair, order_pair
from evals_pipeline.llm import LlmClient, LlmUsage
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import (
    DIMENSIONS,
    CaseJudgment,
    CasePairwise,
    Dimension,
    DimensionJudgment,
    FailureClassification,
    TrialJudgment,
)
from evals_pipeline.models.messages import Message
from evals_pipeline.models.session import Session
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import ClaudeCodeTarget
from evals_pipeline.statistics import DEFAULT_WEIGHTS, blend, panel_vote
from evals_pipeline.storage.events import read_events

PARALLEL_CALLS = 8


class TrialView(GradingContext):
    """One trial as graders see it (messages, final answer), plus its canonical events."""

    @cached_property
    def events(self) -> list[EnrichedEvent]:
        path = self.session.events_path
        return read_events(path) if path and Path(path).exists() else []

    def transcript_messages(self) -> list[Message]:
        # Agent CLIs have events; messages are the transcript only for cli/mock/replay agents.
        return [] if self.events else self.messages


@dataclass(frozen=True)
class Panel:
    """Who judges and how the votes count: the suite's `judging:` settings with live clients."""

    judges: Sequence[LlmClient]
    spec: JudgingSpec

    def weight(self, dimension: Dimension) -> float:
        return self.spec.weights.get(dimension, DEFAULT_WEIGHTS[dimension])


def judge_case(
    case: ResolvedCase,
    sessions: Sequence[Session],
    grade: CaseGrade | None,
    panel: Panel | None,
) -> CaseJudgment:
    """Judge every trial of one (case, agent); without a panel, heuristics and attribution only."""
    trials_by_index = {t.trial: t for t in grade.trials} if grade else {}
    usage = LlmUsage()
    judged: list[TrialJudgment] = []
    for session in sorted(sessions, key=lambda s: s.trial):
        trial_grade = trials_by_index.get(session.trial)
        trial, trial_usage = judge_trial(case, session, trial_grade, panel)
        judged.append(trial)
        usage = usage + trial_usage
    return CaseJudgment(
        case_key=case.case_key,
        test_id=case.test_id,
        agent=case.agent,
        trials=tuple(judged),
        judge_calls=usage.calls,
        judge_errors=usage.errors,
        judge_input_tokens=usage.input_tokens,
        judge_output_tokens=usage.output_tokens,
        judge_cost_usd=usage.cost_usd,
    )


def judge_trial(
    case: ResolvedCase,
    session: Session,
    trial_grade: TrialGrade | None,
    panel: Panel | None,
) -> tuple[TrialJudgment, LlmUsage]:
    """One trial's dimensions and failure attribution, and what the judge calls cost."""
    view = TrialView(case, session)
    failure = _attribution(case, view, trial_grade)
    if session.status != "ok" or trial_grade is None:
        return TrialJudgment(trial=session.trial, judged=False, failure=failure), LlmUsage()
    dimensions: list[Dimension] = list(panel.spec.dimensions) if panel else list(DIMENSIONS)
    heuristics = heuristic_scores(
        dimensions,
        trial=trial_grade,
        events=view.events,
        diff=session.file_changes,
        final_answer=view.output,
        task=task_text(case),
    )
    votes: dict[Dimension, list[DimensionVote]] = {d: [] for d in dimensions}
    input_chars = 0
    if panel and panel.judges:
        judge_input = build_judge_input(
            case,
            final_answer=view.output,
            diff=session.file_changes,
            events=view.events,
            messages=view.transcript_messages(),
            max_chars=panel.spec.max_input_chars,
        )
        input_chars = len(judge_input.text)
        jobs = [(d, j) for d in dimensions for j in panel.judges]
        with ThreadPoolExecutor(max_workers=min(PARALLEL_CALLS, len(jobs))) as pool:
            results = pool.map(lambda job: judge_dimension(job[1], job[0], judge_input), jobs)
            for (dimension, _), vote in zip(jobs, results, strict=True):
                votes[dimension].append(vote)
    usage = LlmUsage()
    judged: list[DimensionJudgment] = []
    for dimension in dimensions:
        cast = votes[dimension]
        for vote in cast:
            usage = usage + vote.usage
        verdicts = [v.verdict for v in cast if v.verdict is not None]
        outcome = panel_vote(verdicts, quorum=panel.spec.quorum) if panel else None
        heuristic = heuristics[dimension]
        weight = panel.weight(dimension) if panel else DEFAULT_WEIGHTS[dimension]
        score = blend(
            dimension,
            heuristic.score,
            outcome.panel_score if outcome else None,
            weight=weight,
        )
        judged.append(
            DimensionJudgment(
                dimension=dimension,
                votes=tuple(verdicts),
                errors=tuple(f"{v.judge}: {v.error}" for v in cast if v.verdict is None),
                n_valid=outcome.n_valid if outcome else 0,
                panel_verdict=outcome.panel_verdict if outcome else None,
                panel_score=outcome.panel_score if outcome else None,
                no_majority=outcome.no_majority if outcome else False,
                heuristic_score=heuristic.score,
                heuristic_reason=heuristic.reason,
                weight_heuristic=weight,
                blended_score=score.blended_score,
                passed=score.passed,
                llm_excluded=score.llm_excluded,
            )
        )
    trial = TrialJudgment(
        trial=session.trial,
        dimensions=tuple(judged),
        failure=failure,
        judge_input_chars=input_chars,
    )
    return trial, usage


def _attribution(
    case: ResolvedCase, view: TrialView, trial: TrialGrade | None
) -> FailureClassification | None:
    if trial is None:
        return None
    target = case.target
    return attribute_failure(
        view.session,
        view.events,
        trial,
        expects_changes=case.workspace is not None,
        time_limit_s=case.timeout_seconds,
        max_turns=target.max_turns if isinstance(target, ClaudeCodeTarget) else None,
    )


def compare_agents(
    cases: Sequence[ResolvedCase],
    sessions: Sequence[Session],
    panel: Panel,
) -> CasePairwise:
    """Every pair of the agents that ran one case, each compared with position swap.

    An agent's first trial that ran speaks for it; agents whose runs all failed are left out.
    """
    by_agent: dict[str, Session] = {}
    for session in sorted(sessions, key=lambda s: s.trial):
        if session.status == "ok":
            by_agent.setdefault(session.agent, session)
    case = cases[0]
    budget = panel.spec.max_input_chars // 2
    contestants = {
        agent: Contestant(agent, _work(case, session, budget))
        for agent, session in by_agent.items()
    }
    task = task_text(case)
    pairs = []
    for x, y in itertools.combinations(sorted(contestants), 2):
        first, second = order_pair(case.case_key, x, y, panel.spec.seed)
        pairs.append(
            compare_pair(
                panel.judges,
                case_key=case.case_key,
                test_id=case.test_id,
                task=task,
                a=contestants[first],
                b=contestants[second],
                dimensions=panel.spec.dimensions,
                seed=panel.spec.seed,
            )
        )
    return CasePairwise(case_key=case.case_key, pairs=tuple(pairs))


def _work(case: ResolvedCase, session: Session, budget: int) -> str:
    view = TrialView(case, session)
    return render_work(
        final_answer=view.output,
        diff=session.file_changes,
        events=view.events,
        messages=view.transcript_messages(),
        max_chars=budget,
    ).text

"""The judge layer over one (case, agent): per trial, every dimension's panel vote, heuristic and
blend, and the attribution of a failure; and per case, the position-swapped comparison of its
agents. Pure domain code: clients come in, records go out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from evals_pipeline.grading import GradingContext
from evals_pipeline.judging.attribution import attribute_failure
from evals_pipeline.judging.category import judge_category
from evals_pipeline.judging.changes import expects_file_changes
from evals_pipeline.judging.dimension import DimensionVote, Subject, judge_dimension
from evals_pipeline.judging.heuristics import heuristic_scores
from evals_pipeline.judging.input import build_judge_input, render_work, task_text
from evals_pipeline.judging.pairwise import (
    Contestant,
    PairReadings,
    order_pair,
    pairwise_verdict,
    read_pair,
)
from evals_pipeline.llm import LlmClient, LlmUsage
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import (
    DIMENSIONS,
    CaseJudgment,
    CasePairwise,
    CategoryCheck,
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

PARALLEL_CALLS = 8


class TrialView(GradingContext):
    """One trial as graders see it (messages, final answer), plus its canonical events."""

    @cached_property
    def events(self) -> list[EnrichedEvent]:
        # Imported here: pyarrow loads with the first trial judged, not with every code location.
        from evals_pipeline.storage.events import read_events

        path = self.session.events_path
        return read_events(path) if path and Path(path).exists() else []

    def transcript_messages(self) -> list[Message]:
        # Agent CLIs have events; messages are the transcript only for cli/mock/replay agents.
        return [] if self.events else self.messages


@dataclass(frozen=True)
class TrialVotes:
    """Some judges' grounded votes on each dimension of one trial (and on its failure category,
    when the panel checks it), and the size of their input."""

    case_key: str
    agent: str
    trial: int
    votes: Mapping[Subject, tuple[DimensionVote, ...]]
    input_chars: int = 0

    @property
    def n_valid(self) -> int:
        """The votes that count: grounded verdicts that did not abstain."""
        cast = (v.verdict for vs in self.votes.values() for v in vs)
        return sum(v is not None and v.valid is not False for v in cast)


def judged_trial(session: Session, trial_grade: TrialGrade | None) -> bool:
    """Whether a trial gets dimensions at all: it ran, and its graders gave a verdict. An errored
    trial (the agent or a grader failed) is judged on nothing: no dimension can pass on it."""
    return session.status == "ok" and trial_grade is not None and trial_grade.verdict != "error"


def trial_votes(
    case: ResolvedCase,
    session: Session,
    trial_grade: TrialGrade | None,
    judges: Sequence[LlmClient],
    spec: JudgingSpec,
) -> TrialVotes:
    """Every judge on every dimension of one trial, and on the category of its failure when
    `spec.confirm_failures`; calls in parallel."""
    view = TrialView(case, session)
    judge_input = build_judge_input(
        case,
        final_answer=view.output,
        diff=session.file_changes,
        events=view.events,
        messages=view.transcript_messages(),
        max_chars=spec.max_input_chars,
    )
    failure = _attribution(case, view, trial_grade) if spec.confirm_failures else None
    subjects: list[Subject] = list(spec.dimensions)
    if failure is not None:
        subjects.append("failure_category")

    def vote(job: tuple[Subject, LlmClient]) -> DimensionVote:
        subject, judge = job
        if subject == "failure_category":
            assert failure is not None
            return judge_category(judge, failure, judge_input)
        return judge_dimension(judge, subject, judge_input)

    votes: dict[Subject, list[DimensionVote]] = {s: [] for s in subjects}
    jobs = [(s, j) for s in subjects for j in judges]
    if jobs:
        with ThreadPoolExecutor(max_workers=min(PARALLEL_CALLS, len(jobs))) as pool:
            for (subject, _), cast in zip(jobs, pool.map(vote, jobs), strict=True):
                votes[subject].append(cast)
    return TrialVotes(
        case_key=case.case_key,
        agent=case.agent,
        trial=session.trial,
        votes={s: tuple(v) for s, v in votes.items()},
        input_chars=len(judge_input.text),
    )


def merge_votes(
    parts: Iterable[TrialVotes], panel: Sequence[str]
) -> dict[tuple[str, str, int], TrialVotes]:
    """Votes on the same trials collected apart (one provider at a time), in panel order."""
    rank = {name: index for index, name in enumerate(panel)}
    merged: dict[tuple[str, str, int], TrialVotes] = {}
    for part in parts:
        key = (part.case_key, part.agent, part.trial)
        before = merged.get(key)
        if before is None:
            merged[key] = part
            continue
        votes = {
            d: tuple(
                sorted(
                    (*before.votes.get(d, ()), *part.votes.get(d, ())),
                    key=lambda v: rank.get(v.judge, len(rank)),
                )
            )
            for d in {*before.votes, *part.votes}
        }
        merged[key] = replace(
            before, votes=votes, input_chars=max(before.input_chars, part.input_chars)
        )
    return merged


def judge_case(
    case: ResolvedCase,
    sessions: Sequence[Session],
    grade: CaseGrade | None,
    spec: JudgingSpec | None,
    votes: Mapping[int, TrialVotes],
) -> CaseJudgment:
    """Every trial of one (case, agent) judged from its panel votes (by trial), heuristics and
    blend; without `spec`, heuristics and attribution only."""
    trials_by_index = {t.trial: t for t in grade.trials} if grade else {}
    usage = LlmUsage()
    judged: list[TrialJudgment] = []
    for session in sorted(sessions, key=lambda s: s.trial):
        trial_grade = trials_by_index.get(session.trial)
        trial, trial_usage = judge_trial(case, session, trial_grade, spec, votes.get(session.trial))
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
    spec: JudgingSpec | None,
    votes: TrialVotes | None,
) -> tuple[TrialJudgment, LlmUsage]:
    """One trial's dimensions and failure attribution, and what its judge calls cost."""
    view = TrialView(case, session)
    failure = _attribution(case, view, trial_grade)
    if trial_grade is None or not judged_trial(session, trial_grade):
        return TrialJudgment(trial=session.trial, judged=False, failure=failure), LlmUsage()
    dimensions: list[Dimension] = list(spec.dimensions) if spec else list(DIMENSIONS)
    heuristics = heuristic_scores(
        dimensions,
        trial=trial_grade,
        events=view.events,
        diff=session.file_changes,
        final_answer=view.output,
        task=task_text(case),
    )
    weights = spec.weights if spec else {}
    usage = LlmUsage()
    judged: list[DimensionJudgment] = []
    for dimension in dimensions:
        cast = votes.votes.get(dimension, ()) if votes else ()
        for vote in cast:
            usage = usage + vote.usage
        verdicts = [v.verdict for v in cast if v.verdict is not None]
        outcome = panel_vote(verdicts, quorum=spec.quorum) if spec else None
        heuristic = heuristics[dimension]
        weight = weights.get(dimension, DEFAULT_WEIGHTS[dimension])
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
    checks = votes.votes.get("failure_category", ()) if votes else ()
    if failure is not None and checks and spec is not None:
        failure = failure.model_copy(update={"check": _category_check(checks, spec.quorum)})
        for vote in checks:
            usage = usage + vote.usage
    trial = TrialJudgment(
        trial=session.trial,
        dimensions=tuple(judged),
        failure=failure,
        judge_input_chars=votes.input_chars if votes else 0,
    )
    return trial, usage


def _category_check(cast: Sequence[DimensionVote], quorum: int) -> CategoryCheck:
    """The panel's majority on whether a failure's category fits, as for a dimension."""
    verdicts = [v.verdict for v in cast if v.verdict is not None]
    outcome = panel_vote(verdicts, quorum=quorum)
    return CategoryCheck(
        votes=tuple(verdicts),
        errors=tuple(f"{v.judge}: {v.error}" for v in cast if v.verdict is None),
        n_valid=outcome.n_valid,
        confirmed=None if outcome.panel_verdict is None else outcome.panel_verdict == "PASS",
    )


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
        expects_changes=expects_file_changes(case),
        time_limit_s=case.timeout_seconds,
        max_turns=target.max_turns if isinstance(target, ClaudeCodeTarget) else None,
    )


def read_pairs(
    cases: Sequence[ResolvedCase],
    sessions: Sequence[Session],
    judges: Sequence[LlmClient],
    spec: JudgingSpec,
) -> list[PairReadings]:
    """Every pair of the agents that ran one case, read by `judges` with position swap.

    An agent's first trial that ran speaks for it; agents whose runs all failed are left out.
    """
    by_agent: dict[str, Session] = {}
    for session in sorted(sessions, key=lambda s: s.trial):
        if session.status == "ok":
            by_agent.setdefault(session.agent, session)
    case = cases[0]
    budget = spec.max_input_chars // 2
    contestants = {
        agent: Contestant(agent, _work(case, session, budget))
        for agent, session in by_agent.items()
    }
    task = task_text(case)
    pairs = []
    for x, y in itertools.combinations(sorted(contestants), 2):
        first, second = order_pair(case.case_key, x, y, spec.seed)
        a, b = contestants[first], contestants[second]
        readings = tuple(
            read_pair(j, task=task, a=a, b=b, dimensions=spec.dimensions) for j in judges
        )
        pairs.append(PairReadings(case.case_key, case.test_id, first, second, readings))
    return pairs


def compare_agents(case_key: str, parts: Iterable[PairReadings], spec: JudgingSpec) -> CasePairwise:
    """One case's pairwise verdicts from its pairs' readings, which may come in parts (one per
    provider); readings are put in panel order."""
    rank = {name: index for index, name in enumerate(spec.panel)}
    pairs: dict[tuple[str, str], PairReadings] = {}
    for part in parts:
        key = (part.agent_a, part.agent_b)
        before = pairs.get(key)
        readings = (*before.readings, *part.readings) if before else part.readings
        ordered = tuple(sorted(readings, key=lambda r: rank.get(r.judge, len(rank))))
        pairs[key] = replace(part, readings=ordered)
    verdicts = tuple(
        pairwise_verdict(pair, dimensions=spec.dimensions, seed=spec.seed)
        for pair in pairs.values()
    )
    return CasePairwise(case_key=case_key, pairs=verdicts)


def _work(case: ResolvedCase, session: Session, budget: int) -> str:
    view = TrialView(case, session)
    return render_work(
        final_answer=view.output,
        diff=session.file_changes,
        events=view.events,
        messages=view.transcript_messages(),
        max_chars=budget,
    ).text

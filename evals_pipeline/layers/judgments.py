"""Judgments: the panel's votes on every graded trial, blended with the heuristics, and each
failed trial's failure attributed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evals_pipeline.judging import (
    TrialVotes,
    judge_case,
    judged_trial,
    merge_votes,
    trial_votes,
)
from evals_pipeline.layers.sessions import sessions_by_partition
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade, TrialGrade
from evals_pipeline.models.judging import CaseJudgment
from evals_pipeline.models.session import Session
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.progress import LayerProgress, Progress, silent
from evals_pipeline.results import (
    ResultStore,
    votes_key,
)


def panel_judges(
    judging: JudgingSpec, judges: Mapping[str, LlmTargetSpec], provider: str | None = None
) -> dict[str, LlmTargetSpec]:
    """The panel's judge targets in panel order; only those of `provider` when given."""
    named = {name: judges[name] for name in judging.panel}
    return {n: t for n, t in named.items() if provider is None or t.provider == provider}


def collect_votes(
    cases: list[ResolvedCase],
    sessions: list[Session],
    grades: list[CaseGrade],
    judging: JudgingSpec,
    judges: Mapping[str, LlmTargetSpec],
    *,
    workers: int,
    folder: Path | None = None,
    progress: Progress = silent,
    store: ResultStore | None = None,
) -> list[TrialVotes]:
    """`judges` (the panel, or its judges of one provider) on every dimension of every trial
    that ran and was graded; scripted judges' request logs go to `folder`. Votes on a trial
    whose grade, panel and judges are unchanged are reused from `store`."""
    if not judges:
        return []
    by_partition = sessions_by_partition(sessions)
    grade_of = {(g.case_key, g.agent): g for g in grades}
    jobs: list[tuple[ResolvedCase, Session, TrialGrade]] = []
    for case in cases:
        grade = grade_of.get((case.case_key, case.agent))
        graded = {t.trial: t for t in grade.trials} if grade else {}
        for session in by_partition.get((case.case_key, case.agent), []):
            trial = graded.get(session.trial)
            if trial is not None and judged_trial(session, trial):
                jobs.append((case, session, trial))
    tracker = LayerProgress(
        f"votes of {', '.join(judges)}", len(jobs), progress, ("valid", "no valid vote")
    )
    with LlmClients(judges, log_dir=folder) as clients:
        panel = [clients.get(name) for name in judges]

        def one(job: tuple[ResolvedCase, Session, TrialGrade]) -> TrialVotes:
            case, session, trial = job
            grade = grade_of[(case.case_key, case.agent)]
            key = None
            # An errored grade is redone next time (its run may be too): its votes are not kept.
            if store and grade.result_key and grade.verdict != "error" and case.cache:
                key = votes_key(grade.result_key, session.trial, judging, judges)
            votes = store.votes(case.case_key, case.agent, key) if store and key else None
            reused = votes is not None
            if votes is None:
                votes = trial_votes(case, session, trial, panel, judging)
                if store is not None and key is not None:
                    store.put_votes(key, votes)
            label = f" (trial {session.trial})" if case.trials.count > 1 else ""
            tracker.advance(
                f"{', '.join(judges)} on {case.agent} / {case.test_id}{label}",
                f"{votes.n_valid} valid votes" + (" (reused)" if reused else ""),
                "valid" if votes.n_valid else "no valid vote",
            )
            return votes

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return list(pool.map(one, jobs))


def judge_cases(
    cases: list[ResolvedCase],
    sessions: list[Session],
    grades: list[CaseGrade],
    judging: JudgingSpec | None,
    votes: Iterable[TrialVotes] = (),
    *,
    workers: int,
    progress: Progress = silent,
) -> list[CaseJudgment]:
    """Judge every (case, agent) from the panel's votes (collected whole or one provider at a
    time), the heuristics and their blend, and attribute each failed trial."""
    by_partition = sessions_by_partition(sessions)
    cases = [c for c in cases if (c.case_key, c.agent) in by_partition]  # not run: no sessions
    grade_of = {(g.case_key, g.agent): g for g in grades}
    merged = merge_votes(votes, judging.panel if judging else ())
    tracker = LayerProgress("judgments", len(cases), progress, ("passed", "failed", "not judged"))

    def one(case: ResolvedCase) -> CaseJudgment:
        key = (case.case_key, case.agent)
        ran = by_partition.get(key, [])
        cast = {s.trial: merged[(*key, s.trial)] for s in ran if (*key, s.trial) in merged}
        judged = judge_case(case, ran, grade_of.get(key), judging, cast)
        tracker.advance(f"judged {case.agent} / {case.test_id}", _brief(judged), tally(judged))
        return judged

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, cases))


def tally(judged: CaseJudgment) -> str:
    """Where a (case, agent) counts in the layer's tally: `not judged` when none of its trials
    was (each errored), else `failed` when a judged trial's failure was attributed."""
    trials = [t for t in judged.trials if t.judged]
    if not trials:
        return "not judged"
    return "failed" if any(t.failure for t in trials) else "passed"


def _brief(judged: CaseJudgment) -> str:
    failure = next((t.failure.primary for t in judged.trials if t.failure), None)
    first = next((t for t in judged.trials if t.judged), None)
    if first is None:
        text = "not judged: the run or a grader errored"
    else:
        passed = [d.dimension for d in first.dimensions if d.passed is True]
        text = f"{len(passed)} dimensions passed"
    return text + (f"; failure: {failure}" if failure else "")

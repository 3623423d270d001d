"""Two reports of a suite compared case by case: per agent McNemar on pass/fail and a paired
bootstrap on scores over the cases both ran, and which cases regressed, were fixed, are new or
were removed. The newer report is A, so a negative delta is a drop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean

from evals_pipeline.history.bootstraps import Bootstraps
from evals_pipeline.history.entries import read_report
from evals_pipeline.history.outcomes import CaseOutcome, read_outcomes
from evals_pipeline.models.history import AgentDelta, CaseChange, RunComparison, RunEntry
from evals_pipeline.models.pass_rate import pass_rate
from evals_pipeline.statistics import mcnemar, paired_table

DEFAULT_SEED = 12345
BOOTSTRAP_RESAMPLES = 10_000
SIGNIFICANCE = 0.05

Reasons = Mapping[tuple[str, str], str]  # (agent, test id) -> why it did not pass


def compare_runs(
    before: RunEntry,
    before_outcomes: Sequence[CaseOutcome],
    after: RunEntry,
    after_outcomes: Sequence[CaseOutcome],
    *,
    reasons: Reasons,
    seed: int = DEFAULT_SEED,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    bootstraps: Bootstraps | None = None,
) -> RunComparison:
    """`after` against `before`; `reasons` are the newer run's failure reasons (report.json
    `failures`), the one line shown for each regression. The paired bootstraps are drawn
    through `bootstraps` (those already drawn are read back; new ones are added to it)."""
    known = bootstraps if bootstraps is not None else Bootstraps()
    old = _by_agent(before_outcomes)
    new = _by_agent(after_outcomes)
    order = [a.agent for a in after.agents] + [a.agent for a in before.agents]
    order += sorted(set(old) | set(new))
    deltas, changes = [], []
    for agent in dict.fromkeys(order):
        if agent not in old and agent not in new:
            continue
        delta, changed = _agent_delta(
            agent, old.get(agent, {}), new.get(agent, {}), reasons, seed, n_resamples, known
        )
        deltas.append(delta)
        changes.extend(changed)
    return RunComparison(
        suite=after.suite, before=before, after=after, agents=deltas, changes=changes
    )


def compare_stored(before: RunEntry, after: RunEntry, *, seed: int = DEFAULT_SEED) -> RunComparison:
    """Two report folders compared from their cases.parquet and the newer one's report.json (and
    the bootstraps its own comparison drew, when it was compared with the same report)."""
    report = read_report(Path(after.folder))
    reasons = {(f.agent, f.test_id): f.reason for f in report.failures} if report else {}
    return compare_runs(
        before,
        read_outcomes(Path(before.folder)),
        after,
        read_outcomes(Path(after.folder)),
        reasons=reasons,
        seed=seed,
        bootstraps=Bootstraps.read(Path(after.folder)),
    )


def _by_agent(outcomes: Sequence[CaseOutcome]) -> dict[str, dict[str, CaseOutcome]]:
    out: dict[str, dict[str, CaseOutcome]] = {}
    for o in outcomes:
        out.setdefault(o.agent, {})[o.case_key] = o
    return out


def _reason(outcome: CaseOutcome, reasons: Reasons) -> str:
    if (outcome.agent, outcome.test_id) in reasons:
        return reasons[(outcome.agent, outcome.test_id)]
    first = (outcome.error or "").strip().splitlines()[:1]
    return first[0] if first else f"verdict {outcome.verdict}"


def _change(
    kind: str, before: CaseOutcome | None, after: CaseOutcome | None, reason: str = ""
) -> CaseChange:
    known = after or before
    assert known is not None
    return CaseChange.model_validate(
        {
            "agent": known.agent,
            "test_id": known.test_id,
            "case_key": known.case_key,
            "change": kind,
            "before": before.verdict if before else None,
            "after": after.verdict if after else None,
            "score_before": before.score if before else None,
            "score_after": after.score if after else None,
            "reason": reason,
        }
    )


def _agent_delta(
    agent: str,
    old: dict[str, CaseOutcome],
    new: dict[str, CaseOutcome],
    reasons: Reasons,
    seed: int,
    n_resamples: int,
    bootstraps: Bootstraps,
) -> tuple[AgentDelta, list[CaseChange]]:
    paired = sorted(set(old) & set(new), key=lambda k: (new[k].test_id, k))
    changes: list[CaseChange] = []
    for key in paired:
        b, a = old[key], new[key]
        if b.passed and not a.passed:
            changes.append(_change("regressed", b, a, _reason(a, reasons)))
        elif a.passed and not b.passed:
            changes.append(_change("fixed", b, a))
    for key in sorted(set(new) - set(old), key=lambda k: (new[k].test_id, k)):
        a = new[key]
        changes.append(_change("new", None, a, "" if a.passed else _reason(a, reasons)))
    for key in sorted(set(old) - set(new), key=lambda k: (old[k].test_id, k)):
        changes.append(_change("removed", old[key], None))
    counts = {kind: sum(c.change == kind for c in changes) for kind in _KINDS}
    if not paired:
        return AgentDelta(agent=agent, n_paired=0, **counts), changes
    after_pass = [new[k].passed for k in paired]
    before_pass = [old[k].passed for k in paired]
    test = mcnemar(paired_table(after_pass, before_pass))
    boot = bootstraps.paired(
        [new[k].success for k in paired],
        [old[k].success for k in paired],
        seed=seed,
        n_resamples=n_resamples,
    )
    rate_after = pass_rate(sum(after_pass), len(paired))
    rate_before = pass_rate(sum(before_pass), len(paired))
    assert rate_after is not None and rate_before is not None  # paired is not empty
    delta = AgentDelta(
        agent=agent,
        n_paired=len(paired),
        pass_rate_before=rate_before,
        pass_rate_after=rate_after,
        pass_rate_delta=rate_after - rate_before,
        mean_score_before=fmean(old[k].success for k in paired),
        mean_score_after=fmean(new[k].success for k in paired),
        mcnemar=test,
        bootstrap=boot,
        significant_drop=sum(after_pass) < sum(before_pass) and test.p_exact < SIGNIFICANCE,
        **counts,
    )
    return delta, changes


_KINDS = ("regressed", "fixed", "new", "removed")

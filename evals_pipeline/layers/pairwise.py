"""Pairwise: the panel reads every pair of a case's agents both ways (A/B, then B/A), and each
pair gets a verdict."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from evals_pipeline.judging import (
    PairReadings,
    compare_agents,
    read_pairs,
)
from evals_pipeline.layers.sessions import sessions_by_partition
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.judging import CasePairwise
from evals_pipeline.models.session import Session
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import LlmTargetSpec
from evals_pipeline.progress import LayerProgress, Progress, silent


def collect_readings(
    cases: list[ResolvedCase],
    sessions: list[Session],
    judging: JudgingSpec,
    judges: Mapping[str, LlmTargetSpec],
    *,
    folder: Path | None = None,
    progress: Progress = silent,
) -> list[PairReadings]:
    """`judges` (the panel, or its judges of one provider) read every pair of the agents of
    every case, A/B then B/A."""
    if not judges:
        return []
    by_case = _cases_by_key(cases)
    by_partition = sessions_by_partition(sessions)
    readings: list[PairReadings] = []
    tracker = LayerProgress(
        f"pairwise readings of {', '.join(judges)}", len(by_case), progress, ("read", "no pairs")
    )
    with LlmClients(judges, log_dir=folder) as clients:
        panel = [clients.get(name) for name in judges]
        for case_key, group in by_case.items():
            ran = [s for c in group for s in by_partition.get((case_key, c.agent), [])]
            pairs = read_pairs(group, ran, panel, judging)
            readings += pairs
            tracker.advance(
                f"{', '.join(judges)} read {group[0].test_id}",
                f"{len(pairs)} pairs",
                "read" if pairs else "no pairs",
            )
    return readings


def compare_cases(
    cases: list[ResolvedCase],
    judging: JudgingSpec,
    readings: Iterable[PairReadings],
    *,
    progress: Progress = silent,
) -> list[CasePairwise]:
    """Every case's pairwise verdicts from its pairs' readings (whole or one provider at a time)."""
    by_case = _cases_by_key(cases)
    read: dict[str, list[PairReadings]] = {key: [] for key in by_case}
    for pair in readings:
        read.setdefault(pair.case_key, []).append(pair)
    compared: list[CasePairwise] = []
    tracker = LayerProgress("pairwise verdicts", len(by_case), progress, ("compared", "no pairs"))
    for case_key, group in by_case.items():
        result = compare_agents(case_key, read[case_key], judging)
        compared.append(result)
        winners = ", ".join(
            f"{p.agent_a} vs {p.agent_b}: {p.winner or 'tie'}" for p in result.pairs
        )
        tracker.advance(
            f"compared {group[0].test_id}",
            winners or "no pairs",
            "compared" if result.pairs else "no pairs",
        )
    return compared


def _cases_by_key(cases: list[ResolvedCase]) -> dict[str, list[ResolvedCase]]:
    by_case: dict[str, list[ResolvedCase]] = {}
    for case in cases:
        by_case.setdefault(case.case_key, []).append(case)
    return by_case

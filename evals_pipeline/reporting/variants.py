"""Variants (lanes): several variants of one agent run on the same cases (seed 004: a skill
installed in the workspace or not, another model, another prompt), each an agent of the suite.

The compare table has one row per case and one lane per variant, holding the case verdict (the
aggregate over the trials, which is what McNemar pairs); the first result for a (case, lane)
wins, so a later record never overwrites it. The Markdown section adds each lane's passes and
cost per pass, and one line per pair of variants with the report's paired statistics.
"""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.report import (
    AgentComparison,
    AgentSummary,
    CaseVariants,
    EvalReport,
    LaneResult,
)
from evals_pipeline.reporting.text import num, p_value, signed_interval, table


def lane_result(grade: CaseGrade) -> LaneResult:
    """One (case, agent)'s cell: its case verdict and score, trials passed and summed cost."""
    costs = [t.cost_usd for t in grade.trials if t.cost_usd is not None]
    return LaneResult(
        verdict=grade.verdict,
        score=grade.score,
        trials=len(grade.trials),
        passed_trials=sum(t.verdict == "pass" for t in grade.trials),
        cost_usd=sum(costs) if costs else None,
    )


def case_variants(grades: Sequence[CaseGrade], agents: Sequence[str]) -> list[CaseVariants]:
    """The compare table's rows, cases in the order first graded, lanes in `agents` order (then
    any other graded agent by name); empty when fewer than two agents have grades."""
    rows: dict[str, tuple[str, dict[str, LaneResult]]] = {}
    for grade in grades:
        _, lanes = rows.setdefault(grade.case_key, (grade.test_id, {}))
        if grade.agent not in lanes:  # first result per lane wins
            lanes[grade.agent] = lane_result(grade)
    graded = {agent for _, lanes in rows.values() for agent in lanes}
    if len(graded) < 2:
        return []
    order = [a for a in agents if a in graded] + sorted(graded - set(agents))
    return [
        CaseVariants(
            test_id=test_id,
            case_key=case_key,
            lanes={agent: lanes[agent] for agent in order if agent in lanes},
        )
        for case_key, (test_id, lanes) in rows.items()
    ]


def _cell(lane: LaneResult | None) -> str:
    if lane is None:
        return "-"
    text = f"{lane.verdict} {lane.score:.2f}"
    return text + (f" ({lane.passed_trials}/{lane.trials})" if lane.trials > 1 else "")


def _pair_line(c: AgentComparison) -> str:
    """One pair of variants: the 2x2 counts, Δ, McNemar's p-values and the bootstrap interval."""
    m, b = c.mcnemar, c.bootstrap
    assert m is not None
    t = m.table
    delta = "-" if m.delta is None else f"{m.delta:+.3f}"
    line = (
        f"- {c.agent_a} vs {c.agent_b} ({c.n_cases} cases): both pass {t.a}, only "
        f"{c.agent_a} {t.b}, only {c.agent_b} {t.c}, neither {t.d}; Δ pass rate "
        f"({c.agent_a} - {c.agent_b}) {delta}; McNemar exact p {p_value(m.p_exact)} "
        f"(mid-p {p_value(m.p_mid)})"
    )
    if b is not None:
        line += f"; paired bootstrap Δ {b.delta:+.3f}, 95% CI {signed_interval(b.ci95_low, b.ci95_high)}"
    return line


def variants_section(report: EvalReport) -> list[str]:
    """The "Variants" section: the compare table and the pairwise lines; none for one agent."""
    if not report.variants:
        return []
    present = {a for row in report.variants for a in row.lanes}
    ordered = [a.agent for a in report.agents if a.agent in present]
    lanes = ordered + sorted(present - set(ordered))
    summaries: dict[str, AgentSummary] = {a.agent: a for a in report.agents}
    rows = [
        [row.test_id, *(_cell(row.lanes.get(a)) for a in lanes), "yes" if row.differs else ""]
        for row in report.variants
    ]
    passed = [
        f"{summaries[a].passed}/{summaries[a].cases}" if a in summaries else "-" for a in lanes
    ]
    cost = [num(summaries[a].cost_per_pass_usd, 4) if a in summaries else "-" for a in lanes]
    rows += [["**passed**", *passed, ""], ["**cost per pass $**", *cost, ""]]
    chosen = set(lanes)
    pairs = [
        c for c in report.comparisons if c.mcnemar is not None and {c.agent_a, c.agent_b} <= chosen
    ]
    out = [
        "## Variants",
        "",
        "One lane per variant: each case's verdict and score (the aggregate over its trials; "
        "passed/run trials when several), the first result per case and lane. Cost per pass: the "
        "lane's cost over its passed cases.",
        "",
        *table(["case", *lanes, "lanes differ"], rows),
    ]
    if pairs:
        out += ["", *(_pair_line(c) for c in pairs)]
    return out

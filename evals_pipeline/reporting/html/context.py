"""What the report page shows, as plain data for its template: per-agent rows with their 95%
intervals, the case x agent matrix, judged dimensions and the comparison with the previous run.

Only agents that ran (cases > 0) get a row, a matrix column or a point on a plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.history import AgentDelta, CaseChange, RunComparison, RunEntry
from evals_pipeline.models.report import (
    AgentComparison,
    AgentSummary,
    DimensionRate,
    EvalReport,
)
from evals_pipeline.reporting.html.case_files import case_file, case_id
from evals_pipeline.reporting.reuse import reuse_line
from evals_pipeline.statistics import wilson_interval


@dataclass(frozen=True)
class AgentRow:
    """One agent's headline figures; `corrected` is its correctness rate corrected for judge
    error with its interval, when the run's labels allowed a correction."""

    summary: AgentSummary
    ci95: tuple[float, float] | None
    corrected: DimensionRate | None
    durations_ms: tuple[int, ...]

    @property
    def cost_per_pass(self) -> float | None:
        """The summary's cost per pass, else cost / passed; None when nothing passed."""
        a = self.summary
        if a.cost_per_pass_usd is not None:
            return a.cost_per_pass_usd
        return a.cost_usd / a.passed if a.passed and a.cost_usd is not None else None


@dataclass(frozen=True)
class Cell:
    """One (case, agent) of the matrix."""

    agent: str
    verdict: str  # pass, fail, error or not-run
    score: float | None
    regressed: bool
    fixed: bool
    key: str
    file: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatrixRow:
    case_key: str
    test_id: str
    cells: tuple[Cell, ...]

    @cached_property  # read for each count of the page's filters and by the page itself
    def flags(self) -> str:
        """The filters this row matches, space separated (the page's filter buttons)."""
        flags = {c.verdict for c in self.cells if c.verdict in ("fail", "error")}
        names = {"fail": "failed", "error": "errored"}
        out = sorted(names[f] for f in flags)
        if any(c.regressed for c in self.cells):
            out.append("regressed")
        if len({c.verdict for c in self.cells if c.verdict != "not-run"}) > 1:
            out.append("differ")
        if any(c.warnings for c in self.cells):
            out.append("warned")
        return " ".join(out)


@dataclass(frozen=True)
class DimensionRow:
    """One judged dimension across the agents (None where an agent has no judged trial)."""

    dimension: str
    rates: tuple[DimensionRate | None, ...]


def run_pass_rate(entry: RunEntry, agent: str) -> float | None:
    """`agent`'s pass rate in one report of the history, over that report's own cases (None when
    it ran none): the one figure the trend plots and "Since previous run" shows as before and
    after, the agents table's pass rate for this report."""
    figures = next((f for f in entry.agents if f.agent == agent and f.cases > 0), None)
    return None if figures is None else figures.pass_rate


@dataclass(frozen=True)
class SinceRow:
    """One agent of "Since previous run": both reports' pass rates (as the trend plots them) and
    the comparison over the cases both ran (`delta`, the McNemar test's)."""

    delta: AgentDelta
    before: float | None
    after: float | None

    @property
    def change(self) -> float | None:
        """after - before, the step the trend draws between the two reports."""
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True)
class PageContext:
    report: EvalReport
    created: str
    agents: list[AgentRow]
    matrix: list[MatrixRow]
    rates: list[DimensionRate]
    dimensions: list[DimensionRow]
    since_previous: RunComparison | None
    trend: list[RunEntry]
    comparisons: list[AgentComparison] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    reused: str | None = None

    @property
    def since_rows(self) -> list[SinceRow]:
        """The rows of "Since previous run", one per agent compared."""
        cmp = self.since_previous
        if cmp is None:
            return []
        return [
            SinceRow(d, run_pass_rate(cmp.before, d.agent), run_pass_rate(cmp.after, d.agent))
            for d in cmp.agents
        ]

    @property
    def changes(self) -> list[CaseChange]:
        """The cases that changed since the previous run, regressions first."""
        if self.since_previous is None:
            return []
        order = {"regressed": 0, "fixed": 1, "new": 2, "removed": 3}
        return sorted(
            self.since_previous.changes, key=lambda c: (order[c.change], c.test_id, c.agent)
        )


def when(ms: int) -> str:
    """Epoch milliseconds as a UTC date and time for people."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _durations(agent: str, grades: Sequence[CaseGrade]) -> tuple[int, ...]:
    return tuple(
        t.wall_ms for g in grades if g.agent == agent for t in g.trials if t.wall_ms is not None
    )


def _corrected(agent: str, rates: Sequence[DimensionRate]) -> DimensionRate | None:
    return next(
        (
            r
            for r in rates
            if r.agent == agent and r.dimension == "correctness" and r.corrected_rate is not None
        ),
        None,
    )


def matrix_agents(report: EvalReport) -> list[str]:
    """The matrix's columns: the agents that ran a case."""
    return [a.agent for a in report.agents if a.cases > 0]


def matrix_rows(
    grades: Sequence[CaseGrade], cases: Sequence[ResolvedCase] = ()
) -> list[tuple[str, str]]:
    """The matrix's rows, (case key, test id) by test id: every case graded, and (for tests
    never graded) every case resolved."""
    test_ids: dict[str, str] = {}
    for g in sorted(grades, key=lambda g: g.test_id):
        test_ids.setdefault(g.case_key, g.test_id)
    for c in cases:
        test_ids.setdefault(c.case_key, c.test_id)
    return sorted(test_ids.items(), key=lambda kv: kv[1])


def build_context(
    report: EvalReport, grades: Sequence[CaseGrade], cases: Sequence[ResolvedCase] = ()
) -> PageContext:
    """The page's data from the report, its grades and (for tests never graded) the cases."""
    ran = [a for a in report.agents if a.cases > 0]
    agents = [
        AgentRow(
            summary=a,
            ci95=wilson_interval(a.passed, a.cases),  # the interval of a.pass_rate
            corrected=_corrected(a.agent, report.rates),
            durations_ms=_durations(a.agent, grades),
        )
        for a in ran
    ]
    changes = report.since_previous.changes if report.since_previous else []
    regressed = {(c.agent, c.case_key) for c in changes if c.change == "regressed"}
    fixed = {(c.agent, c.case_key) for c in changes if c.change == "fixed"}
    by_cell = {(g.agent, g.case_key): g for g in grades}
    matrix = []
    for case_key, test_id in matrix_rows(grades, cases):
        cells = []
        for row in agents:
            agent = row.summary.agent
            grade = by_cell.get((agent, case_key))
            cells.append(
                Cell(
                    agent=agent,
                    verdict=grade.verdict if grade else "not-run",
                    score=grade.score if grade else None,
                    regressed=(agent, case_key) in regressed,
                    fixed=(agent, case_key) in fixed,
                    key=case_id(agent, case_key),
                    file=case_file(agent, case_key),
                    warnings=tuple(grade.warnings) if grade else (),
                )
            )
        matrix.append(MatrixRow(case_key=case_key, test_id=test_id, cells=tuple(cells)))
    verdicts = [c.verdict for r in matrix for c in r.cells]
    counts = {v: verdicts.count(v) for v in ("pass", "fail", "error", "not-run")}
    counts["regressed"] = sum(1 for r in matrix for c in r.cells if c.regressed)
    for flag in ("failed", "errored", "regressed", "differ", "warned"):
        counts[f"rows_{flag}"] = sum(1 for r in matrix if flag in r.flags.split())
    rates = [r for r in report.rates if r.n > 0 and r.agent in {a.agent for a in ran}]
    by_rate = {(r.dimension, r.agent): r for r in rates}
    dimensions = [
        DimensionRow(name, tuple(by_rate.get((name, a.agent)) for a in ran))
        for name in dict.fromkeys(r.dimension for r in rates)
    ]
    return PageContext(
        report=report,
        created=when(report.created_ms),
        agents=agents,
        matrix=matrix,
        rates=rates,
        dimensions=dimensions,
        since_previous=report.since_previous,
        trend=report.trend,
        comparisons=[
            c for c in report.comparisons if {c.agent_a, c.agent_b} <= {a.agent for a in ran}
        ],
        counts=counts,
        reused=reuse_line(report),
    )

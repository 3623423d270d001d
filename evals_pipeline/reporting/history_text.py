"""A comparison of two runs as text: the report's "Since the previous run" Markdown section and
the terminal output of `evals-pipeline compare` (docs/report.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from evals_pipeline.models.history import AgentDelta, CaseChange, RunComparison, RunEntry
from evals_pipeline.reporting.text import p_value, pct, signed_interval, table

DELTA_HEADERS = [
    "agent",
    "paired cases",
    "pass rate before",
    "pass rate after",
    "delta",
    "McNemar p",
    "score delta [95% CI]",
]


def delta_row(a: AgentDelta) -> list[str]:
    boot = a.bootstrap
    score = "-"
    if boot is not None:
        score = f"{boot.delta:+.3f} {signed_interval(boot.ci95_low, boot.ci95_high)}"
    delta = "-" if a.pass_rate_delta is None else f"{a.pass_rate_delta * 100:+.1f} pp"
    return [
        a.agent,
        str(a.n_paired),
        pct(a.pass_rate_before),
        pct(a.pass_rate_after),
        delta + (" (significant drop)" if a.significant_drop else ""),
        p_value(a.mcnemar.p_exact if a.mcnemar else None),
        score,
    ]


def change_line(c: CaseChange) -> str:
    """One changed case; a regression (or a new case that fails) with its reason."""
    verdicts = f"{c.before or '-'} -> {c.after or '-'}"
    why = f": {c.reason}" if c.reason else ""
    return f"{c.agent} / {c.test_id} ({verdicts}){why}"


def run_label(entry: RunEntry) -> str:
    return f"{entry.run_id or entry.folder} ({entry.trigger})"


def since_previous_section(comparison: RunComparison | None) -> list[str]:
    """The report's short Markdown section: per-agent delta with its p-value, and the regressed
    cases with their reason. Empty for a suite's first report."""
    if comparison is None:
        return []
    out = ["", "## Since the previous run", ""]
    out.append(f"Against run {run_label(comparison.before)}; pass rates over the cases both ran.")
    out.append("")
    out += table(DELTA_HEADERS, [delta_row(a) for a in comparison.agents])
    regressed = [c for c in comparison.changes if c.change == "regressed"]
    if regressed:
        out += ["", "Regressed:", ""]
        out += [f"- {change_line(c)}" for c in regressed]
    return out


def render_comparison(comparison: RunComparison) -> str:
    """`evals-pipeline compare` on a terminal: the deltas, then every changed case by kind."""
    out = [
        f"suite {comparison.suite}: {run_label(comparison.after)} against "
        f"{run_label(comparison.before)}",
        "",
        *table(DELTA_HEADERS, [delta_row(a) for a in comparison.agents]),
    ]
    for kind in ("regressed", "fixed", "new", "removed"):
        changes = [c for c in comparison.changes if c.change == kind]
        out += ["", f"{kind} ({len(changes)}):"]
        out += [f"  {change_line(c)}" for c in changes] or ["  none"]
    return "\n".join(out) + "\n"


def render_runs(entries: list[RunEntry]) -> str:
    """`evals-pipeline runs`: one line per report, oldest first, with the agents that ran."""
    rows = []
    for e in entries:
        when = datetime.fromtimestamp(e.created_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        ran = [a for a in e.agents if a.cases]  # not the targets registered but not run
        agents = ", ".join(f"{a.agent} {pct(a.pass_rate)}" for a in ran) or "-"
        rows.append([e.suite, when, e.trigger, e.run_id or "-", agents])
    headers = ["suite", "time (UTC)", "trigger", "run id", "agents (pass rate)"]
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [headers, *rows]]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"

"""The report as text: a Markdown summary for files and the UI, an aligned table for terminals."""

from __future__ import annotations

from evals_pipeline.models.report import AgentSummary, EvalReport
from evals_pipeline.reporting.history_text import since_previous_section
from evals_pipeline.reporting.judged_markdown import judged_sections
from evals_pipeline.reporting.reuse import reuse_line
from evals_pipeline.reporting.text import count as _count
from evals_pipeline.reporting.text import num as _num
from evals_pipeline.reporting.text import pct as _pct
from evals_pipeline.reporting.text import table as _table
from evals_pipeline.reporting.variants import variants_section
from evals_pipeline.terminal_text import for_markdown, for_terminal

HEADERS = [
    "agent",
    "cases",
    "passed",
    "failed",
    "errors",
    "pass rate",
    "mean score",
    "cost $",
    "cost/pass $",
    "tokens",
    "mean ms",
]


PASS_RATE_NOTE = "Pass rate = passed / cases: an errored case counts as not passed."


def summary_rows(report: EvalReport) -> list[list[str]]:
    """One row of display strings per agent, in HEADERS order."""

    def row(a: AgentSummary) -> list[str]:
        return [
            a.agent,
            str(a.cases),
            str(a.passed),
            str(a.failed),
            str(a.errors),
            _pct(a.pass_rate),
            _num(a.mean_score),
            _num(a.cost_usd, 4),
            _num(a.cost_per_pass_usd, 4),
            _count(a.total_tokens),
            _num(a.mean_duration_ms, 0),
        ]

    return [row(a) for a in report.agents]


BEHAVIOUR_HEADERS = ["agent", "LLM calls", "tool calls", "input tokens", "output tokens", "cost $"]
MILESTONE_COLUMNS = {
    "first_file_edit": "first edit",
    "first_test_run": "first test run",
    "first_test_pass": "first test pass",
    "final_answer": "final answer",
}


def _milestone(a: AgentSummary, name: str) -> str:
    if name not in a.milestone_ms:
        return "-"
    return f"{a.milestone_ms[name] / 1000:.1f} s ({a.milestone_trials[name]})"


def behaviour_rows(report: EvalReport) -> list[list[str]]:
    """Per agent: what it did to get there (calls, tokens, cost) and how soon (milestones)."""
    return [
        [
            a.agent,
            str(a.llm_calls),
            ", ".join(f"{tool} {n}" for tool, n in a.tool_calls.items()) or "-",
            _count(a.input_tokens),
            _count(a.output_tokens),
            _num(a.cost_usd, 4),
            *(_milestone(a, name) for name in MILESTONE_COLUMNS),
        ]
        for a in report.agents
    ]


def render_markdown(report: EvalReport) -> str:
    """The Markdown summary written next to the report tables and shown in the Dagster UI.

    The judged sections (docs/report.md) follow the per-agent ones, each only when it has data.
    Control characters (an agent's stderr in an error, say) are written out visibly.
    """
    out = [f"# Eval report: {report.suite}", ""]
    out += _table(HEADERS, summary_rows(report))
    out += ["", PASS_RATE_NOTE]
    versions = [
        f"{a.agent} {', '.join(a.agent_versions)}" for a in report.agents if a.agent_versions
    ]
    if versions:
        out += ["", f"Agent versions: {'; '.join(versions)}."]
    if any(a.tool_calls or a.llm_calls for a in report.agents):
        headers = BEHAVIOUR_HEADERS + [
            f"{label} (median, n)" for label in MILESTONE_COLUMNS.values()
        ]
        out += ["", "## Agent behaviour", ""]
        out += _table(headers, behaviour_rows(report))
    if report.not_run:
        out += ["", f"{report.not_run} registered (case, agent) partitions have no grades yet."]
    if reused := reuse_line(report):
        out += ["", reused]
    if report.not_run_cases:
        out += ["", "## Not run", ""]
        out.extend(f"- {c.agent} / {c.test_id}: {c.reason}" for c in report.not_run_cases)
    variants = variants_section(report)
    if variants:
        out += ["", *variants]
    if report.failures:
        out += ["", "## Failures and errors", ""]
        out.extend(f"- {f.agent} / {f.test_id}: {f.reason}" for f in report.failures)
    if report.warnings:
        out += ["", "## Warnings", ""]
        out.extend(
            f"- ⚠ {w.agent} / {w.test_id} ({w.verdict}): {warning}"
            for w in report.warnings
            for warning in w.warnings
        )
    out += since_previous_section(report.since_previous)
    out += judged_sections(report)
    return for_markdown("\n".join(out) + "\n")


def render_text_table(report: EvalReport) -> str:
    """The per-agent summary as an aligned plain-text table for the terminal."""
    rows = [HEADERS, *summary_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return for_terminal("\n".join([*lines, "", PASS_RATE_NOTE]))

"""A Markdown summary fit for a pull-request comment: a headline per agent, the change since the
previous run when there is one, and the failing cases folded away (docs/report.md)."""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.history import AgentDelta
from evals_pipeline.models.report import EvalReport
from evals_pipeline.reporting.history_text import change_line
from evals_pipeline.reporting.text import p_value, pct, table
from evals_pipeline.terminal_text import for_markdown


def _since(delta: AgentDelta | None) -> str:
    if delta is None or delta.pass_rate_delta is None:
        return "-"
    p = p_value(delta.mcnemar.p_exact if delta.mcnemar else None)
    flag = " ⚠️ significant drop" if delta.significant_drop else ""
    return f"{delta.pass_rate_delta * 100:+.1f} pp (p {p}){flag}"


def render_pr_summary(reports: Sequence[EvalReport]) -> str:
    out: list[str] = []
    for report in reports:
        ok = report.all_passed
        out += [f"### {'✅' if ok else '❌'} {report.suite}", ""]
        deltas = {
            a.agent: a for a in (report.since_previous.agents if report.since_previous else [])
        }
        rows = [
            [
                a.agent,
                pct(a.pass_rate),
                str(a.passed),
                str(a.failed),
                str(a.errors),
                _since(deltas.get(a.agent)),
            ]
            for a in report.agents
            if a.cases  # not the targets registered but not run
        ]
        out += table(["agent", "pass rate", "passed", "failed", "errors", "since previous"], rows)
        if report.since_previous:
            regressed = [c for c in report.since_previous.changes if c.change == "regressed"]
            if regressed:
                out += ["", f"**{len(regressed)} regressed since run "
                        f"{report.since_previous.before.run_id}:**", ""]  # fmt: skip
                out += [f"- {change_line(c)}" for c in regressed]
        if report.failures:
            out += [
                "",
                f"<details><summary>{len(report.failures)} failing or erroring case(s)</summary>",
                "",
            ]
            out += [f"- {f.agent} / {f.test_id} ({f.verdict}): {f.reason}" for f in report.failures]
            out += ["", "</details>"]
        out.append("")
    return for_markdown("\n".join(out))

"""The judged sections of the Markdown summary: corrected rates, calibration, failure attribution,
repeated trials, paired and pairwise comparisons, judge health and judge cost (docs/report.md).

Each section appears only when the report has data for it.
"""

from __future__ import annotations

from collections.abc import Callable

from evals_pipeline.llm.usage import LlmUsage
from evals_pipeline.models.judging import FAILURE_TAXONOMY, CategoryCount
from evals_pipeline.models.report import DimensionRate, EvalReport
from evals_pipeline.reporting.text import interval, num, p_value, pct, signed_interval, table

Section = Callable[[EvalReport], list[str]]


def judged_sections(report: EvalReport) -> list[str]:
    """The lines of every judged section that has data, each preceded by a blank line."""
    out: list[str] = []
    for section in SECTIONS:
        lines = section(report)
        if lines:
            out += ["", *lines]
    return out


def _valid(rate: DimensionRate) -> str:
    if not rate.correction_valid:
        return f"no: {rate.reason}"
    flags = (["clipped"] if rate.clipped else []) + list(rate.warnings)
    return "yes" + (f" ({', '.join(flags)})" if flags else "")


def judged_dimensions(report: EvalReport) -> list[str]:
    # A row with n = 0 (every trial environmental or undecided) has no rate to show; the
    # report's JSON keeps it with its counts.
    shown = [r for r in report.rates if r.n]
    if not shown:
        return []
    if report.calibration is None:
        basis = "no calibration file: corrected rates need human labels (docs/report.md)."
    else:
        basis = (
            "TPR/TNR from the human labels of the "
            + ("test split" if report.calibration.split == "test" else "whole file (no splits)")
            + "; Rogan-Gladen point, Lang-Reiczigel 95% interval."
        )
    rows = [
        [
            r.agent,
            r.dimension,
            str(r.n),
            pct(r.observed_rate),
            pct(r.corrected_rate),
            interval(r.ci95_low, r.ci95_high) if r.correction_valid else "-",
            pct(r.tpr),
            pct(r.tnr),
            _valid(r),
        ]
        for r in shown
    ]
    headers = ["agent", "dimension", "n", "observed", "corrected", "95% CI", "TPR", "TNR", "valid"]
    return [
        "## Judged dimensions",
        "",
        "Observed: share of judged trials whose blended decision passed; errored trials (not "
        "judged), undecided ones and environmental failures are counted apart, never in n. "
        f"Corrected for judge error: {basis}",
        "",
        *table(headers, rows),
    ]


def calibration(report: EvalReport) -> list[str]:
    cal = report.calibration
    if cal is None:
        return []
    split = "test split" if cal.split == "test" else "all labels (no splits given)"
    source = f" from `{cal.source}`" if cal.source else ""
    summary = (
        f"{cal.labels_used} of {cal.labels_total} labels used{source} ({split}: "
        f"{cal.labels_in_split}; {cal.unmatched} match no decision of this run, "
        f"{cal.environmental} are on environmental failures)."
    )
    rows = [
        [
            d.dimension,
            str(d.labels_used),
            str(d.m1),
            str(d.m0),
            f"{pct(d.tpr)} {interval(*d.tpr_ci95)}",
            f"{pct(d.tnr)} {interval(*d.tnr_ci95)}",
            num(d.kappa),
            ", ".join(d.warnings) or "-",
        ]
        for d in cal.dimensions
    ]
    headers = ["dimension", "labels", "human PASS", "human FAIL", "TPR (95% CI)", "TNR (95% CI)"]
    return [
        "## Calibration",
        "",
        summary,
        *(["", *table([*headers, "κ", "warnings"], rows)] if rows else []),
    ]


def failure_attribution(report: EvalReport) -> list[str]:
    if not report.failure_breakdown:
        return []
    rows, categories = [], []
    for f in report.failure_breakdown:
        b = f.breakdown
        tiers = {t: c.count for t, c in b.by_tier.items()}
        rows.append(
            [
                f.agent,
                str(b.n_trials),
                str(b.n_trials - b.n_failed),
                str(b.n_failed),
                str(tiers.get("environmental", 0)),
                str(tiers.get("resource", 0)),
                str(tiers.get("capability", 0)),
                str(f.n_unclassified),
                pct(b.infra_failure_rate),
                pct(b.pass_rate_incl_infra),
                pct(b.pass_rate_excl_infra),
            ]
        )
        categories += [
            [f.agent, f"{FAILURE_TAXONOMY[c][0]} {c}", FAILURE_TAXONOMY[c][1], str(n.count),
             pct(n.rate_of_failures), _checked(n)]
            for c, n in b.by_category.items()
            if n.count
        ]  # fmt: skip
    headers = [
        "agent", "trials", "passed", "failed", "environmental", "resource", "capability",
        "unclassified", "infra rate", "pass rate incl. infra", "pass rate excl. infra",
    ]  # fmt: skip
    out = ["## Failure attribution", "", *table(headers, rows)]
    if categories:
        headers = ["agent", "category", "tier", "trials", "of failures", "panel agrees"]
        out += ["", *table(headers, categories)]
    return out


def _checked(count: CategoryCount) -> str:
    """How many of a category's failures the panel confirmed, of those it decided on."""
    decided = count.confirmed + count.disputed
    return f"{count.confirmed}/{decided}" if decided else "-"


def repeated_trials(report: EvalReport) -> list[str]:
    repeated = [r for r in report.repeated_trials if r.trials_per_case and r.trials_per_case > 1]
    uneven = [r for r in report.repeated_trials if r.reason]
    if not repeated:
        return []
    rows = [
        [r.agent, str(r.n_cases), str(v.k), pct(v.pass_at_k), pct(v.pass_hat_k)]
        for r in repeated
        for v in r.values
    ]
    out = [
        "## Repeated trials",
        "",
        "pass@k: a case passes in at least one of k trials; pass^k: in all k (errored trials "
        "count as failures).",
        "",
        *table(["agent", "cases", "k", "pass@k", "pass^k"], rows),
    ]
    out += [f"- {r.agent}: no pass@k, {r.reason}" for r in uneven]
    return out


def paired_comparison(report: EvalReport) -> list[str]:
    compared = [c for c in report.comparisons if c.mcnemar is not None]
    if not compared:
        return []
    rows = []
    for c in compared:
        m, b = c.mcnemar, c.bootstrap
        assert m is not None
        t = m.table
        rows.append(
            [
                c.agent_a,
                c.agent_b,
                str(c.n_cases),
                f"{t.a} / {t.b} / {t.c} / {t.d}",
                num(m.delta, 3) if m.delta is None else f"{m.delta:+.3f}",
                signed_interval(m.wald_low, m.wald_high),
                signed_interval(b.ci95_low, b.ci95_high) if b else "-",
                num(b.p_delta_le_zero) if b else "-",
                p_value(m.p_mid),
                p_value(m.p_exact),
            ]
        )
    headers = [
        "A", "B", "cases", "both / A only / B only / neither pass", "Δ (A - B)", "Wald 95% CI",
        "bootstrap 95% CI", "P(Δ* ≤ 0)", "McNemar mid-p", "exact p",
    ]  # fmt: skip
    resamples = next((c.bootstrap.n_resamples for c in compared if c.bootstrap), 0)
    return [
        "## Paired comparison",
        "",
        "Case verdicts of A and B on the cases both ran. Bootstrap: "
        f"{resamples:,} case resamples of the per-case share of passed trials, seed "
        f"{report.bootstrap_seed}.",
        "",
        *table(headers, rows),
    ]


def pairwise(report: EvalReport) -> list[str]:
    compared = [c for c in report.comparisons if c.pairwise]
    if not compared:
        return []
    rows = [
        [
            c.agent_a,
            c.agent_b,
            t.dimension,
            str(t.n),
            str(t.wins),
            str(t.ties),
            str(t.losses),
            pct(t.win_rate),
            "yes" if t.bias_detected else "no",
        ]
        for c in compared
        for t in c.pairwise
    ]
    headers = ["A", "B", "dimension", "cases", "A wins", "ties", "B wins", "A win rate", "bias"]
    detected = "yes" if report.position_bias_detected else "no"
    return [
        "## Pairwise (position-swapped)",
        "",
        "Each pair judged in both orders; a win counts only when it holds in both, else a tie. "
        f"Position bias detected: **{detected}**.",
        "",
        *table(headers, rows),
    ]


def judge_health(report: EvalReport) -> list[str]:
    if not report.judge_health:
        return []
    rows = []
    for h in report.judge_health:
        p, c = h.position, h.calibration
        rows.append(
            [
                h.judge,
                ", ".join(h.models),
                str(h.votes),
                str(h.invalid),
                pct(h.grounding_failure_rate),
                str(h.partially_grounded),
                str(h.pairwise_readings),
                pct(p.position_consistency) if p else "-",
                pct(p.primacy_rate) if p else "-",
                pct(p.recency_rate) if p else "-",
                p_value(p.binomial_p) if p else "-",
                "yes" if h.bias_detected else "no",
                num(c.cohen_kappa) if c else "-",
                pct(c.tpr) if c else "-",
                pct(c.tnr) if c else "-",
            ]
        )
    headers = [
        "judge", "models", "votes", "invalid", "grounding failures", "partially grounded",
        "pairwise readings", "consistency", "primacy", "recency", "binomial p", "bias", "κ",
        "TPR", "TNR",
    ]  # fmt: skip
    return ["## Judge health", "", *table(headers, rows)]


def _usage_row(source: str, u: LlmUsage) -> list[str]:
    return [
        source,
        str(u.calls),
        str(u.errors),
        str(u.input_tokens),
        str(u.output_tokens),
        num(u.cost_usd, 4),
    ]


def judge_cost(report: EvalReport) -> list[str]:
    u = report.judge_usage
    if u is None:
        return []
    rows = [_usage_row(f"dimension panels: {agent}", x) for agent, x in u.by_agent.items()]
    if u.pairwise.calls or u.pairwise.errors:
        rows.append(_usage_row("pairwise panels", u.pairwise))
    if u.graders.calls or u.graders.errors:
        rows.append(_usage_row("LLM graders", u.graders))
    rows.append(_usage_row("**total**", u.total))
    headers = ["source", "calls", "errors", "input tokens", "output tokens", "cost $"]
    return [
        "## Judge cost",
        "",
        "What the judges cost; not included in the agents' cost above.",
        "",
        *table(headers, rows),
    ]


SECTIONS: tuple[Section, ...] = (
    judged_dimensions,
    calibration,
    failure_attribution,
    repeated_trials,
    paired_comparison,
    pairwise,
    judge_health,
    judge_cost,
)

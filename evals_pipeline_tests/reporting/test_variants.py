"""The variants compare table (seed 004's lanes): one row per case, one lane per agent, the first
result per lane kept; its Markdown section with passes, cost per pass and the pairwise lines."""

from __future__ import annotations

from evals_pipeline.reporting import build_report, render_markdown
from evals_pipeline_tests.reporting.judged_records import graded
from evals_pipeline_tests.reporting.test_reporting import failing, passing


def test_one_row_per_case_with_each_lane_in_agent_order() -> None:
    grades = [
        graded("skill", "parse", ["pass", "pass", "fail"]),
        graded("baseline", "parse", ["fail", "fail", "fail"]),
        graded("baseline", "total", ["pass", "pass", "pass"]),
        graded("skill", "total", ["pass", "pass", "pass"]),
        graded("skill", "format", ["pass", "pass", "pass"]),  # baseline never ran it
    ]
    report = build_report("s", grades, agents=["baseline", "skill"])
    rows = {row.test_id: row for row in report.variants}
    assert [row.test_id for row in report.variants] == ["parse", "total", "format"]
    assert list(rows["parse"].lanes) == ["baseline", "skill"]  # agent order, not grade order
    skill = rows["parse"].lanes["skill"]
    assert (skill.verdict, skill.trials, skill.passed_trials) == ("pass", 3, 2)
    assert rows["parse"].differs and not rows["total"].differs
    assert list(rows["format"].lanes) == ["skill"]


def test_the_first_result_per_case_and_lane_wins() -> None:
    first, later = passing("skill", "t"), failing("skill", "t")
    report = build_report(
        "s", [first, later, failing("baseline", "t")], agents=["baseline", "skill"]
    )
    [row] = report.variants
    assert row.lanes["skill"].verdict == "pass"


def test_one_agent_has_no_variants_table() -> None:
    report = build_report("s", [passing("a", "t1"), failing("a", "t2")], agents=["a", "b"])
    assert report.variants == []
    assert "## Variants" not in render_markdown(report)


def test_the_markdown_section_has_lanes_passes_cost_per_pass_and_the_pair_lines() -> None:
    grades = [
        passing("skill", "parse", cost=0.02),
        failing("baseline", "parse"),
        passing("skill", "total", cost=0.02),
        passing("baseline", "total", cost=0.03),
    ]
    text = render_markdown(build_report("s", grades, agents=["baseline", "skill"]))
    section = text[text.index("## Variants") :].split("\n## ")[0].splitlines()
    assert "| case | baseline | skill | lanes differ |" in section
    assert "| parse | fail 0.25 | pass 1.00 | yes |" in section
    assert "| total | pass 1.00 | pass 1.00 |  |" in section
    assert "| **passed** | 1/2 | 2/2 |  |" in section
    assert "| **cost per pass $** | 0.0300 | 0.0200 |  |" in section
    [pair] = [line for line in section if line.startswith("- baseline vs skill")]
    assert "both pass 1, only baseline 0, only skill 1, neither 0" in pair
    assert "Δ pass rate (baseline - skill) -0.500" in pair
    assert "McNemar exact p 1.0000 (mid-p 0.5000)" in pair
    assert "paired bootstrap Δ -0.500, 95% CI [-1.000, +0.000]" in pair

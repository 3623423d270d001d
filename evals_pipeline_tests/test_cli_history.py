"""`evals-pipeline runs`, `compare`, `run --junit` / `--summary-md` and the exit codes, as real
subprocesses: the quickstart suite run twice, the second time with a deliberately worse agent
(its `careful` target swapped for the hasty style)."""

from __future__ import annotations

import json
import math
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
import xmlschema

from evals_pipeline_tests.test_cli import QUICKSTART, REPO, Done, cli, table_rows

SCHEMAS = REPO / "evals_pipeline_tests" / "fixtures" / "junit"
# junit-10.xsd: the Jenkins xUnit plugin's JUnit schema (MIT, Gregory Boissinot), as pytest's own
# sdist ships it (testing/example_scripts/) to validate pytest's junit output; junit.xsd: ours,
# which adds Apache Ant's stricter <testsuite> requirements.
SCHEMA_FILES = ("junit-10.xsd", "junit.xsd")


@dataclass(frozen=True)
class TwoRuns:
    home: Path
    first: Done
    second: Done


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> TwoRuns:
    home = tmp_path_factory.mktemp("history")
    suite = home / "quickstart"
    shutil.copytree(QUICKSTART, suite)
    (suite / ".git").mkdir()  # upward searches for .agentv stop here
    eval_file = str(suite / "quickstart.eval.yaml")
    first = cli("run", eval_file, "--target", "careful", home=home)
    targets = suite / ".agentv" / "targets.yaml"
    worse = targets.read_text().replace("--style careful", "--style hasty")
    assert worse != targets.read_text()
    targets.write_text(worse)
    second = cli(
        "run", eval_file, "--target", "careful",
        "--junit", str(home / "ci" / "junit.xml"), "--summary-md", str(home / "ci" / "pr.md"),
        home=home,
    )  # fmt: skip
    return TwoRuns(home, first, second)


def exact_mcnemar_p(b: int, c: int) -> float:
    """By hand: two-sided exact binomial on the discordant pairs, p = 2 P(X <= min(b, c))."""
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_exit_codes_follow_agentv(two_runs: TwoRuns) -> None:
    # The careful agent passes all but one case, which errors: errors alone keep exit 0, as
    # `agentv eval` (exit 1 only for a case scoring below the threshold, 2 when all errored).
    assert two_runs.first.code == 0, two_runs.first.explain()
    # The worse agent fails cases under the suite's execution.threshold 0.8: exit 1.
    assert two_runs.second.code == 1, two_runs.second.explain()


def test_compare_lists_regressions_with_the_hand_computed_mcnemar_p(two_runs: TwoRuns) -> None:
    done = cli("compare", "--json", home=two_runs.home)
    assert done.code == 1, done.explain()  # as agentv compare: the later run scores lower
    comparison = json.loads(done.stdout)
    (careful,) = comparison["agents"]
    changes = comparison["changes"]
    regressed = {c["test_id"] for c in changes if c["change"] == "regressed"}
    fixed = {c["test_id"] for c in changes if c["change"] == "fixed"}
    # The hasty style gets the sum, the JSON profile, the file listing, the haiku and the
    # greeting wrong, and crashes on the migration.
    assert regressed == {
        "add-numbers", "json-profile", "list-workspace-files", "write-haiku", "greet-politely",
        "migrate-database",
    }  # fmt: skip
    assert fixed == set()
    table = careful["mcnemar"]["table"]
    # A is the newer run: b = passes only now, c = passes only before.
    assert (table["b"], table["c"]) == (len(fixed), len(regressed))
    assert careful["mcnemar"]["p_exact"] == pytest.approx(exact_mcnemar_p(0, 6))
    assert careful["mcnemar"]["p_exact"] == pytest.approx(2 * 0.5**6)
    assert careful["significant_drop"] is True
    assert careful["pass_rate_delta"] == pytest.approx(-6 / 10)
    boot = careful["bootstrap"]
    assert boot["delta"] < 0 and boot["ci95_high"] < 0
    reasons = {c["test_id"]: c["reason"] for c in changes if c["change"] == "regressed"}
    assert "simulated crash" in reasons["migrate-database"]
    assert reasons["add-numbers"].startswith("score 0.00 < 0.8")

    # The same on the terminal: p-value and one line of why per regression.
    text = cli("compare", home=two_runs.home)
    assert text.code == 1, text.explain()
    assert "0.0312" in text.stdout and "(significant drop)" in text.stdout
    assert "regressed (6):" in text.stdout and "fixed (0):" in text.stdout
    assert "careful / migrate-database (pass -> error): error in agent" in text.stdout


def test_compare_takes_run_ids_prefixes_and_folders(two_runs: TwoRuns) -> None:
    runs = json.loads(cli("runs", "--json", home=two_runs.home).stdout)
    assert [r["trigger"] for r in runs] == ["cli", "cli"]
    old, new = runs
    by_prefix = cli("compare", old["run_id"][:8], new["folder"], "--json", home=two_runs.home)
    assert by_prefix.code == 1, by_prefix.explain()
    assert json.loads(by_prefix.stdout)["before"]["run_id"] == old["run_id"]
    alone = json.loads(cli("compare", new["run_id"], "--json", home=two_runs.home).stdout)
    assert alone["before"]["run_id"] == old["run_id"]  # its previous report
    # The other way round the later run scores higher: exit 0.
    better = cli("compare", new["run_id"], old["run_id"], home=two_runs.home)
    assert better.code == 0 and "fixed (6):" in better.stdout, better.explain()
    unknown = cli("compare", "nope", new["run_id"], home=two_runs.home)
    assert unknown.code == 2 and "no run 'nope'" in unknown.stderr, unknown.explain()
    first = cli("compare", old["run_id"], home=two_runs.home)
    assert first.code == 2 and "first report of quickstart" in first.stderr


def test_compare_of_a_run_with_itself_warns_and_exits_0(two_runs: TwoRuns) -> None:
    runs = json.loads(cli("runs", "--json", home=two_runs.home).stdout)
    new = runs[-1]
    # The same report named by its id, a prefix and its folder: one warning each, exit 0.
    for a, b in [(new["run_id"], new["run_id"]), (new["run_id"][:8], new["folder"])]:
        done = cli("compare", a, b, home=two_runs.home)
        assert done.code == 0, done.explain()
        assert "are the same report" in done.stderr and new["run_id"] in done.stderr, done.explain()
    different = cli("compare", runs[0]["run_id"], new["run_id"], home=two_runs.home)
    assert "same report" not in different.stderr, different.explain()


def test_runs_lists_suite_time_trigger_and_pass_rates(two_runs: TwoRuns) -> None:
    done = cli("runs", "--suite", "quickstart", home=two_runs.home)
    assert done.code == 0, done.explain()
    lines = done.stdout.splitlines()
    assert lines[0].split()[:4] == ["suite", "time", "(UTC)", "trigger"]
    rows = [line.split() for line in lines[2:]]
    assert len(rows) == 2
    assert [r[0] for r in rows] == ["quickstart", "quickstart"] and rows[0][3] == "cli"
    # careful: 9 of 10 passed before (one error); 3 of 10 with the hasty style.
    assert rows[0][-2:] == ["careful", "90.0%"] and rows[1][-2:] == ["careful", "30.0%"]


def test_runs_and_compare_errors_are_clear(tmp_path: Path) -> None:
    empty = cli("runs", home=tmp_path)
    assert empty.code == 2 and "no reports under" in empty.stderr
    compare = cli("compare", home=tmp_path)
    assert compare.code == 2 and "run a suite first" in compare.stderr


def test_one_report_is_not_enough_to_compare(two_runs: TwoRuns, tmp_path: Path) -> None:
    storage = tmp_path / "storage" / "quickstart" / "eval_report"
    storage.mkdir(parents=True)
    runs = json.loads(cli("runs", "--json", home=two_runs.home).stdout)
    shutil.copytree(runs[0]["folder"], storage / runs[0]["run_id"])
    done = cli("compare", home=tmp_path)
    assert done.code == 2 and "has 1 report(s)" in done.stderr and "needs two" in done.stderr


def test_junit_validates_against_the_junit_schema(two_runs: TwoRuns) -> None:
    path = two_runs.home / "ci" / "junit.xml"
    for name in SCHEMA_FILES:
        xmlschema.XMLSchema(SCHEMAS / name).validate(str(path))
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "quickstart.careful" and suite.get("id") == "0"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert len(cases) == 10 and {c.get("classname") for c in cases.values()} == {
        "quickstart.careful"
    }
    failure = cases["add-numbers"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("score 0.00 < 0.8")
    error = cases["migrate-database"].find("error")
    assert error is not None and "simulated crash" in (error.get("message") or "")
    stderr = cases["migrate-database"].find("system-err")
    assert stderr is not None and "simulated crash" in (stderr.text or "")
    passed = cases["reverse-word"]
    assert list(passed) == [] and float(passed.get("time") or "nan") >= 0
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("10", "5", "2")


def test_summary_md_is_fit_for_a_pr_comment(two_runs: TwoRuns) -> None:
    text = (two_runs.home / "ci" / "pr.md").read_text()
    assert text.startswith("### ❌ quickstart")
    assert "| careful | 30.0% | 3 | 5 | 2 | -60.0 pp (p 0.0312) ⚠️ significant drop |" in text
    assert "| hasty |" not in text  # registered, not run
    assert "**6 regressed since run" in text
    assert "<details><summary>7 failing or erroring case(s)</summary>" in text
    assert "- careful / migrate-database (error): error in agent" in text


def _cells(text: str, first: str) -> list[list[str]]:
    """The Markdown table rows of `text` whose first cell is `first`, as stripped cells."""
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith(f"| {first} |")
    ]


def test_every_surface_shows_one_pass_rate_with_errors_counted_as_not_passed(
    two_runs: TwoRuns,
) -> None:
    # careful: 9 of 10 passed and one errored (90%, never 100%); then with the hasty style 3 of
    # 10 passed, 5 failed, 2 errored (30%, not 3/8 = 37.5%).
    runs = json.loads(cli("runs", "--json", home=two_runs.home).stdout)
    folders = [Path(r["folder"]) for r in runs]
    expected = []
    for folder in folders:
        verdicts = [
            v for a, v in zip(*_columns(folder / "cases.parquet"), strict=True) if a == "careful"
        ]
        expected.append(verdicts.count("pass") / len(verdicts))
    assert expected == [0.9, 0.3]
    shown = ["90.0%", "30.0%"]
    counts = ["9/10 passed · 1 error", "3/10 passed · 2 errors"]

    # The table `run` prints.
    for done, rate in zip((two_runs.first, two_runs.second), shown, strict=True):
        assert table_rows(done.stdout)["careful"]["pass_rate"] == rate, done.stdout
        assert "Pass rate = passed / cases" in done.stdout
    for folder, rate, text, count in zip(folders, expected, shown, counts, strict=True):
        # report.json: the rate, and the rate over graded cases beside it.
        report = json.loads((folder / "report.json").read_text())
        (careful,) = [a for a in report["agents"] if a["agent"] == "careful"]
        assert careful["pass_rate"] == pytest.approx(rate)
        assert careful["pass_rate_graded"] == pytest.approx(
            careful["passed"] / (careful["passed"] + careful["failed"])
        )
        for breakdown in report["failure_breakdown"]:
            assert breakdown["breakdown"]["pass_rate_incl_infra"] == pytest.approx(rate)
        # summary.md's agents table.
        summary = (folder / "summary.md").read_text()
        assert _cells(summary, "careful")[0][5] == text
        # report.html: the agents table, its counts, and the bar chart below it.
        html = (folder / "report.html").read_text()
        assert f'<strong class="pass-rate">{text}</strong>' in html
        assert f'<small class="pass-counts">{count}</small>' in html
        chart = html.split('<figure class="plot-pass_rates">', 1)[1].split("</figure>", 1)[0]
        assert f">{rate:.0%}<" in chart and ">100%<" in chart  # the label, the axis
    assert "pass rate (graded): 100.0%" in (folders[0] / "report.html").read_text()

    # The second report's "Since previous run", in summary.md and report.html, and `compare`.
    summary = (folders[1] / "summary.md").read_text().split("## Since the previous run", 1)[1]
    since = _cells(summary, "careful")[0]
    assert since[2:4] == shown
    html = (folders[1] / "report.html").read_text()
    before_after = rf'<td class="num since-before">{shown[0]}</td>\s*<td class="num since-after">{shown[1]}</td>'
    assert re.search(before_after, html)
    comparison = json.loads(cli("compare", "--json", home=two_runs.home).stdout)
    (delta,) = comparison["agents"]
    assert (delta["pass_rate_before"], delta["pass_rate_after"]) == pytest.approx(expected)
    assert [a["pass_rate"] for a in (comparison["before"]["agents"] + comparison["after"]["agents"])
            if a["agent"] == "careful"] == pytest.approx(expected)  # fmt: skip
    compare_text = cli("compare", home=two_runs.home).stdout
    assert _cells(compare_text, "careful")[0][2:4] == shown

    # `runs`.
    lines = cli("runs", "--suite", "quickstart", home=two_runs.home).stdout.splitlines()[2:]
    assert [line.split()[-2:] for line in lines] == [["careful", r] for r in shown]

    # JUnit and the PR summary (of the second run).
    (suite,) = ET.parse(two_runs.home / "ci" / "junit.xml").getroot().findall("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert float(properties["pass_rate"] or "nan") == pytest.approx(expected[1])
    assert properties["pass_counts"] == counts[1]
    pr = (two_runs.home / "ci" / "pr.md").read_text()
    assert _cells(pr, "careful")[0][1] == shown[1]

    # Dagster: each eval_report materialization's per-agent figure and agents table.
    with dg.DagsterInstance.from_config(str(two_runs.home / "dagster")) as instance:
        records = instance.fetch_materializations(
            dg.AssetKey(["quickstart", "eval_report"]), limit=10, ascending=True
        ).records
        metadata = [dict(r.asset_materialization.metadata) for r in records]  # type: ignore[union-attr]
    assert [m["careful/pass_rate"].value for m in metadata] == pytest.approx(expected)
    for m, rate in zip(metadata, expected, strict=True):
        (row,) = [r.data for r in m["agents"].value.records if r.data["agent"] == "careful"]
        assert row["pass_rate"] == pytest.approx(rate)


def _columns(path: Path) -> tuple[list[str], list[str]]:
    table = pq.read_table(path, columns=["agent", "verdict"])
    return table.column("agent").to_pylist(), table.column("verdict").to_pylist()

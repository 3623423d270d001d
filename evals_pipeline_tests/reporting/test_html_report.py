"""report.html without a browser: what the page holds (agents that ran, intervals, the matrix,
the comparison with the previous run, the trend) and the per-case files it loads on demand,
trimmed so large sessions stay small."""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import RecordError
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.history import (
    AgentDelta,
    AgentRunFigures,
    CaseChange,
    RunComparison,
    RunEntry,
)
from evals_pipeline.models.judging import CaseJudgment, Evidence, JudgeVerdict
from evals_pipeline.models.messages import Message, ToolCall
from evals_pipeline.models.report import DimensionRate, EvalReport
from evals_pipeline.models.session import Session
from evals_pipeline.reporting import build_report, write_report
from evals_pipeline.reporting.html import transcript, write_html_report
from evals_pipeline.reporting.html.transcript import MESSAGE_BUDGET, TEXT_LIMIT, TOOL_LIMIT
from evals_pipeline.reporting.record_digest import record_digest
from evals_pipeline.statistics import PairedTable, mcnemar, wilson_interval
from evals_pipeline.storage import preview
from evals_pipeline.storage.messages import write_messages
from evals_pipeline.storage.parquet import read_parquet
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.reporting.judged_records import CAPABILITY, judged
from evals_pipeline_tests.reporting.test_reporting import erroring, failing, passing

CALL = re.compile(r"^window\.__evalCase\((\"[^\"]+\"), (.*)\);\n$", re.S)


def case_data(folder: Path, agent: str, case_key: str) -> dict[str, Any]:
    """The JSON a case file hands to the page's callback."""
    text = (folder / "cases" / agent / f"{case_key}.js").read_text()
    match = CALL.match(text)
    assert match, text[:200]
    assert json.loads(match.group(1)) == f"{agent}/{case_key}"
    data: dict[str, Any] = json.loads(match.group(2))
    return data


def grades() -> list[CaseGrade]:
    return [
        passing("claude", "t1", cost=0.02, duration=1500),
        passing("claude", "t2", cost=0.02, duration=2500),
        failing("claude", "t3"),
        erroring("codex", "t1"),
        passing("codex", "t2", cost=0.01, duration=900),
        failing("codex", "t3"),
    ]


def report_of(grades: list[CaseGrade], **fields: Any) -> EvalReport:
    report = build_report("demo", grades, agents=["claude", "codex", "idle"])
    return report.model_copy(update=fields)


def entry(created_ms: int, claude: float, codex: float) -> RunEntry:
    return RunEntry(
        suite="demo",
        run_id=f"run-{created_ms}",
        created_ms=created_ms,
        folder=f"/runs/{created_ms}",
        agents=[
            AgentRunFigures(
                agent=a,
                cases=6,
                passed=round(r * 6),
                failed=6 - round(r * 6),
                errors=0,
                mean_score=r,
            )
            for a, r in (("claude", claude), ("codex", codex))
        ],
    )


def comparison() -> RunComparison:
    return RunComparison(
        suite="demo",
        before=entry(1_700_000_000_000, 1.0, 0.5),
        after=entry(1_700_086_400_000, 2 / 3, 1 / 2),
        agents=[
            AgentDelta(
                agent="claude",
                n_paired=3,
                pass_rate_before=1.0,
                pass_rate_after=2 / 3,
                pass_rate_delta=-1 / 3,
                mcnemar=mcnemar(PairedTable(a=2, b=0, c=1, d=0)),
                regressed=1,
            )
        ],
        changes=[
            CaseChange(
                agent="claude",
                test_id="t3",
                case_key="t3",
                change="regressed",
                before="pass",
                after="fail",
                reason="score 0.25 < 0.8: tests-pass, style",
            ),
            CaseChange(agent="codex", test_id="t2", case_key="t2", change="fixed"),
        ],
    )


def matrix_rows(html: str) -> dict[str, str]:
    """Each matrix row's test id and its data-flags."""
    return dict(
        (test, flags)
        for flags, test in re.findall(
            r'<tr data-flags="([^"]*)" data-test="[^"]*">\s*<th scope="row">([^<]+)</th>', html
        )
    )


def test_the_page_shows_only_agents_that_ran_with_their_wilson_interval(tmp_path: Path) -> None:
    graded = grades()
    report = report_of(graded)
    assert [a.agent for a in report.agents] == ["claude", "codex", "idle"]
    page = write_html_report(report, graded, tmp_path).read_text()
    assert "idle" not in page  # 0 cases: no row, no column, no point on a plot
    low, high = wilson_interval(2, 3)
    assert f"[{low:.1%}, {high:.1%}]" in page
    # cost per pass falls back to cost / passed when the summary has none
    assert "$0.0200" in page
    columns = re.findall(r"<th>(\w+)</th>", page.split('id="matrix"')[1].split("</thead>")[0])
    assert columns == ["test", "claude", "codex"]
    assert matrix_rows(page) == {"t1": "errored differ", "t2": "", "t3": "failed"}
    assert page.count('class="cell v-') == 6
    assert re.search(r'<svg [^>]*viewBox="[^>]*class="plot"', page)
    assert not (tmp_path / "cases" / "idle").exists()


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    graded = grades()
    page = write_html_report(report_of(graded, trend=[entry(1, 0.5, 0.5)]), graded, tmp_path)
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    # (SVG clip paths refer to their own ids: url(#...))
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|@import|url\((?!#)", html)
    # plots are inline SVG, their text kept as text
    assert "<text" in html and "<image" not in html


def test_regressed_cases_come_from_the_comparison_with_the_previous_run(tmp_path: Path) -> None:
    graded = grades()
    trend = [entry(1_700_000_000_000, 1.0, 0.5), entry(1_700_086_400_000, 2 / 3, 1 / 2)]
    report = report_of(graded, since_previous=comparison(), trend=trend)
    html = write_html_report(report, graded, tmp_path).read_text()
    since = html.split('id="since"')[1].split("</section>")[0]
    assert "Since previous run" in since
    assert "-33.3 pt" in since
    p = mcnemar(PairedTable(a=2, b=0, c=1, d=0)).p_exact
    assert re.search(rf"pt\)</small></td>\s*<td class=\"num\">{p:.3g}</td>", since)
    assert 'href="#case/claude/t3"' in since
    # regressions come first
    assert since.index('class="change-regressed"') < since.index('class="change-fixed"')
    assert "score 0.25 &lt; 0.8: tests-pass, style" in since
    assert 'aria-label="Pass rate per agent over the last runs"' in since
    assert matrix_rows(html)["t3"] == "failed regressed"
    assert 'data-filter="regressed"' in html
    assert re.search(r'class="cell v-fail regressed" href="#case/claude/t3"', html)
    assert re.search(r'class="cell v-pass" href="#case/codex/t2"[^>]*>[^<]*<span[^▲]*▲', html)


def test_without_a_previous_run_there_is_no_regressed_filter(tmp_path: Path) -> None:
    graded = grades()
    html = write_html_report(report_of(graded), graded, tmp_path).read_text()
    assert 'id="since"' not in html
    assert 'data-filter="regressed"' not in html
    assert "regressed" not in "".join(matrix_rows(html).values())


def test_corrected_rates_and_judged_dimensions_appear_only_with_judged_trials(
    tmp_path: Path,
) -> None:
    graded = grades()
    plain = write_html_report(report_of(graded), graded, tmp_path / "plain").read_text()
    assert 'id="dimensions"' not in plain and "corrected <small>" not in plain
    rate = DimensionRate(
        agent="claude", dimension="correctness", n=3, n_passed=2, observed_rate=2 / 3,
        corrected_rate=0.71, tpr=0.9, tnr=0.9, m1=40, m0=40, ci95_low=0.52, ci95_high=0.88,
        correction_valid=True,
    )  # fmt: skip
    empty = rate.model_copy(update={"agent": "codex", "n": 0, "n_passed": 0})
    judged_report = report_of(graded, rates=[rate, empty])
    html = write_html_report(judged_report, graded, tmp_path / "judged").read_text()
    assert "71.0%" in html and "[52.0%, 88.0%]" in html
    dims = html.split('id="dimensions"')[1].split("</section>")[0]
    # codex has no judged trial: its cell is empty, not a 0% rate
    assert "0.0%" not in dims
    assert 'aria-label="Judged dimensions per agent"' in html


def suite_cases(tmp_path: Path) -> list[ResolvedCase]:
    path = tmp_path / "demo.eval.yaml"
    path.write_text(
        "name: demo\n"
        "execution: {targets: [claude, codex]}\n"
        "targets:\n"
        "  - {name: claude, provider: mock, response: hi}\n"
        "  - {name: codex, provider: mock, response: hi}\n"
        "tests:\n"
        "  - {id: t1, input: 'say <b>hi</b>', criteria: 'says hi', assertions: [{type: contains, value: hi}]}\n"
        "  - {id: t2, input: say hi, assertions: [{type: contains, value: hi}]}\n"
        "  - {id: t3, input: say hi, assertions: [{type: contains, value: hi}]}\n"
        "  - {id: t4, input: never run, assertions: [{type: contains, value: hi}]}\n"
    )
    return resolve_cases(load_suite(path))


def big_session(folder: Path, agent: str, case_key: str) -> Session:
    """A session of 10 MB: long messages and tool outputs, and many of them."""
    messages = [Message(role="user", content="start: " + "u" * 50)]
    for i in range(400):
        messages.append(
            Message(
                role="assistant",
                content=f"step {i} " + "a" * 20_000,
                tool_calls=[
                    ToolCall(tool="Bash", input={"command": f"run {i}"}, output="o" * 5_000)
                ],
            )
        )
    messages.append(Message(role="assistant", content="the final answer"))
    path = write_messages(messages, folder / "messages.parquet")
    return Session(
        case_key=case_key,
        agent=agent,
        messages_path=str(path),
        message_count=len(messages),
        file_changes="diff --git a/x.py b/x.py\n+++ b/x.py\n" + "+x = 1\n" * 20_000,
        stderr="warning\n" * 5_000,
    )


def test_case_files_hold_the_case_trimmed(tmp_path: Path) -> None:
    graded = grades()
    cases = suite_cases(tmp_path)
    session = big_session(tmp_path / "session", "claude", "t3")
    assert Path(session.messages_path).stat().st_size > 0
    vote = JudgeVerdict(
        judge="judge-a", judge_model="m-1", dimension="correctness", verdict="FAIL",
        confidence=0.9, critique="It floors the mean.", valid=True,
        evidence=(
            Evidence(quote="return sum(v) // len(v)", match="EXACT", match_score=100),
            Evidence(quote="a quote the transcript lacks", match="UNVERIFIED",
                     reason="below-threshold"),
        ),
    )  # fmt: skip
    judgment: CaseJudgment = judged(
        "claude", "t3", [False], votes=[vote], failure=CAPABILITY
    ).model_copy(update={"case_key": "t3"})
    report = report_of(graded)
    files = write_report(
        report, graded, tmp_path / "report", sessions=[session], cases=cases, judgments=[judgment]
    )
    assert files.report_html.is_file()
    folder = files.folder
    data = case_data(folder, "claude", "t3")
    assert (data["test_id"], data["agent"], data["verdict"]) == ("t3", "claude", "fail")
    assert data["reason"] == next(f.reason for f in report.failures if f.test_id == "t3")
    [trial] = data["trials"]
    assert [g["name"] for g in trial["graders"]] == ["g", "tests-pass", "style"]
    assert trial["graders"][1]["misses"][0]["text"] == "tests-pass holds"
    transcript = trial["session"]["transcript"]
    assert transcript["path"] == session.messages_path
    messages = transcript["messages"]
    # the first and the last messages survive; the middle is left out past the budget
    assert messages[0]["content"]["text"].startswith("start:")
    assert messages[-1]["content"]["text"] == "the final answer"
    assert transcript["omitted"] == 402 - len(messages) > 0
    long = messages[1]
    assert len(long["content"]["text"]) == TEXT_LIMIT
    assert long["content"]["cut"] == len("step 0 ") + 20_000 - TEXT_LIMIT
    call = long["tool_calls"][0]
    assert call["input"]["text"] == '{\n  "command": "run 0"\n}'
    assert len(call["output"]["text"]) == TOOL_LIMIT and call["output"]["cut"] == 3_000
    diff = trial["session"]["diff"]
    assert diff["cut"] > 0 and diff["text"].startswith("diff --git")
    assert len(json.dumps(data)) < 2 * MESSAGE_BUDGET
    # the judges' votes with each quote marked grounded or not, and the failure category
    [dimension] = trial["judgment"]["dimensions"]
    [judge] = dimension["votes"]
    assert judge["critique"] == "It floors the mean."
    assert [(e["quote"], e["grounded"]) for e in judge["evidence"]] == [
        ("return sum(v) // len(v)", True),
        ("a quote the transcript lacks", False),
    ]
    assert trial["judgment"]["failure"]["primary"] == "incorrect_implementation"
    # the case's own input and criteria, from the cases layer
    first = case_data(folder, "claude", "t1")
    assert first["case"]["input"][0]["text"]["text"] == "say <b>hi</b>"
    assert first["case"]["criteria"] == "says hi"
    # a test no agent ran is a row of not-run cells, its page still shows its input
    html = files.report_html.read_text()
    assert "say &lt;b&gt;hi&lt;/b&gt;" not in html  # inputs live in the case files only
    assert matrix_rows(html)["t4"] == ""
    never = case_data(folder, "codex", "t4")
    assert never["verdict"] is None and never["trials"] == []
    assert never["case"]["input"][0]["text"]["text"] == "never run"


def test_small_and_large_transcripts_are_trimmed_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small session is trimmed in plain Python, a large one in Arrow: the page gets the same
    messages either way (each way run on both sessions here)."""
    small = [
        Message(role="user", content="héllo wörld 😀 " + "ü" * TEXT_LIMIT),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(tool="Bash", input={"command": "ls"}, output="ö" * (TOOL_LIMIT + 7)),
                ToolCall(tool="Read", input="a plain string", output=None),
            ],
        ),
        Message(role="assistant", content="done"),
    ]
    paths = [
        str(write_messages(small, tmp_path / "small" / "messages.parquet")),
        str(big_session(tmp_path / "big", "claude", "t3").messages_path),
    ]
    by_python = {}
    for path in paths:
        table = read_parquet(path, columns=preview.MESSAGE_COLUMNS)
        monkeypatch.setattr(preview, "SMALL_TABLE", 10**12)
        by_python[path] = preview.preview(table)
        monkeypatch.setattr(preview, "SMALL_TABLE", -1)
        assert preview.preview(table) == by_python[path]
        # What the page shows is that preview, kept in the file's footer when it was written.
        shown = transcript.read_transcript(path)
        assert {**shown, "version": preview.PREVIEW_VERSION} == {
            **by_python[path],
            "path": path,
            "error": None,
        }
    first = by_python[paths[0]]["messages"]
    assert first[0]["content"]["cut"] == len("héllo wörld 😀 ") and first[2]["tool_calls"] == []
    assert first[1]["tool_calls"][0]["output"]["cut"] > 0
    assert by_python[paths[1]]["omitted"] > 0


def test_a_long_transcript_is_shown_from_its_footer_and_an_older_file_from_its_messages(
    tmp_path: Path,
) -> None:
    """A report reads a session's preview from its file's footer (a few KB), not its messages;
    a file written before previews (no footer entry) shows the same, trimmed when read."""
    path = Path(big_session(tmp_path / "big", "claude", "t3").messages_path)
    stored = preview.stored_preview(path)
    assert stored is not None and len(stored) < 2 * MESSAGE_BUDGET < pq.read_table(path).nbytes
    shown = transcript.read_transcript(str(path))
    older = tmp_path / "older" / "messages.parquet"
    older.parent.mkdir()
    pq.write_table(pq.read_table(path), older, compression="zstd")  # no preview in its footer
    assert preview.stored_preview(older) is None
    assert {**transcript.read_transcript(str(older)), "path": str(path)} == shown
    # A footer entry that is not one JSON object is never spliced into a page.
    with pq.ParquetWriter(older, pq.read_schema(path)) as writer:
        writer.write_table(pq.read_table(path))
        writer.add_key_value_metadata({preview.PREVIEW_KEY: b'1});alert(1);({"version":1}'})
    assert preview.stored_preview(older) is None
    assert {**transcript.read_transcript(str(older)), "path": str(path)} == shown


def test_unchanged_case_pages_are_carried_over_from_the_previous_report(tmp_path: Path) -> None:
    """A page whose records and session files are unchanged is the earlier report's own file;
    a changed grade, a rewritten messages file or other page-making code makes it again."""
    cases = suite_cases(tmp_path)
    small = [Message(role="user", content="start"), Message(role="assistant", content="done")]
    sessions = [
        Session(
            case_key=key,
            agent="claude",
            messages_path=str(write_messages(small, tmp_path / key / "messages.parquet")),
        )
        for key in ("t1", "t3")
    ]

    def written(folder: str, graded: list[CaseGrade], previous: str | None = None) -> Path:
        report = build_report("demo", graded, agents=["claude", "codex"])
        before = tmp_path / previous if previous else None
        write_report(
            report, graded, tmp_path / folder, sessions=sessions, cases=cases, previous=before
        )
        return tmp_path / folder / "cases"

    def page(folder: Path, case_key: str, agent: str = "claude") -> Path:
        return folder / agent / f"{case_key}.js"

    first = written("first", grades())
    second = written("second", grades(), previous="first")
    for key in ("t1", "t2", "t3", "t4"):
        assert page(second, key).read_text() == page(first, key).read_text()
        assert page(second, key).samefile(page(first, key))  # linked, not made again
    # a changed grade and a rewritten transcript remake their pages only
    changed = [passing("claude", "t3") if g.test_id == "t3" else g for g in grades()]
    write_messages([*small, Message(role="user", content="more")], tmp_path / "t1/messages.parquet")
    third = written("third", changed, previous="second")
    assert page(third, "t2").samefile(page(second, "t2"))
    for key in ("t1", "t3"):
        assert not page(third, key).samefile(page(second, key))
    assert case_data(third.parent, "claude", "t3")["verdict"] == "pass"
    [trial] = case_data(third.parent, "claude", "t1")["trials"]
    assert trial["session"]["transcript"]["messages"][-1]["content"]["text"] == "more"
    assert page(second, "t1").read_text() == page(first, "t1").read_text()  # earlier ones kept
    # pages of other code are not reused
    index = json.loads((third / "pages.json").read_text())
    (third / "pages.json").write_text(json.dumps({**index, "code": "other"}))
    fourth = written("fourth", changed, previous="third")
    assert not page(fourth, "t2").samefile(page(third, "t2"))
    assert page(fourth, "t2").read_text() == page(third, "t2").read_text()


def test_a_missing_messages_file_is_named_not_fatal(tmp_path: Path) -> None:
    graded = [failing("claude", "t3")]
    gone = Session(case_key="t3", agent="claude", messages_path=str(tmp_path / "gone.parquet"))
    report = build_report("demo", graded, agents=["claude"])
    write_html_report(report, graded, tmp_path, sessions=[gone])
    transcript = case_data(tmp_path, "claude", "t3")["trials"][0]["session"]["transcript"]
    assert transcript["messages"] == []
    assert "gone.parquet is not there any more" in transcript["error"]


@pytest.mark.parametrize("name", ["<script>alert(1)</script>"])
def test_text_from_the_suite_is_escaped(tmp_path: Path, name: str) -> None:
    graded = [failing("claude", "t3")]
    report = build_report(name, graded, agents=["claude"])
    html = write_html_report(report, graded, tmp_path).read_text()
    assert name not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_an_interval_that_misses_its_point_still_plots(tmp_path: Path) -> None:
    # Wilson's upper bound of 10/10 rounds to 0.9999999999999999, below the rate itself; a
    # clipped corrected rate can sit outside its interval too.
    graded = [passing("claude", f"t{i}", cost=0.01, duration=1000) for i in range(10)]
    rate = DimensionRate(
        agent="claude", dimension="correctness", n=10, n_passed=10, observed_rate=1.0,
        corrected_rate=1.0, tpr=0.8, tnr=0.7, m1=30, m0=30, ci95_low=0.6, ci95_high=0.95,
        correction_valid=True, clipped=True,
    )  # fmt: skip
    report = build_report("demo", graded, agents=["claude"]).model_copy(update={"rates": [rate]})
    html = write_html_report(report, graded, tmp_path).read_text()
    assert 'aria-label="Pass rate per agent"' in html
    assert 'aria-label="Judged dimensions per agent"' in html


def test_agents_compared_pairwise_with_the_reports_mcnemar(tmp_path: Path) -> None:
    graded = grades()
    report = report_of(graded)
    [comparison] = [c for c in report.comparisons if {c.agent_a, c.agent_b} == {"claude", "codex"}]
    assert comparison.mcnemar is not None
    html = write_html_report(report, graded, tmp_path).read_text()
    section = html.split('id="variants"')[1].split("</section>")[0]
    table = comparison.mcnemar.table
    cells = "".join(f'<td class="num">{n}</td>' for n in (table.a, table.b, table.c, table.d))
    assert cells in section
    assert f"{comparison.mcnemar.p_exact:.3g}" in section
    assert "idle" not in section
    # t1: claude passes, codex errors, so the agents differ there; t3 both fail
    rows = matrix_rows(html)
    assert "differ" in rows["t1"].split() and "differ" not in rows["t3"].split()
    assert 'data-filter="differ"' in html


def test_one_agent_has_no_pairwise_section(tmp_path: Path) -> None:
    graded = [g for g in grades() if g.agent == "claude"]
    html = write_html_report(report_of(graded), graded, tmp_path).read_text()
    assert 'id="variants"' not in html and 'data-filter="differ"' not in html


def test_pages_are_keyed_by_the_digests_of_the_records_as_loaded(tmp_path: Path) -> None:
    """A loader's digests of the records' stored JSON key their pages as serializing them does;
    a record whose stored text differs makes its page again."""
    cases = suite_cases(tmp_path)
    graded = grades()

    def written(folder: str, stored: dict[int, bytes], previous: str | None = None) -> Path:
        report = build_report("demo", graded, agents=["claude", "codex"])
        before = tmp_path / previous if previous else None
        write_report(report, graded, tmp_path / folder, cases=cases, previous=before, stored=stored)
        return tmp_path / folder / "cases" / "claude"

    first = written("first", {})
    as_loaded = {id(r): record_digest(r.model_dump_json()) for r in [*graded, *cases]}
    second = written("second", as_loaded, previous="first")
    assert all(second.joinpath(f"{k}.js").samefile(first / f"{k}.js") for k in ("t1", "t3"))
    [t3] = [g for g in graded if g.agent == "claude" and g.case_key == "t3"]
    third = written("third", {**as_loaded, id(t3): record_digest("other text")}, "second")
    assert third.joinpath("t1.js").samefile(second / "t1.js")
    assert not third.joinpath("t3.js").samefile(second / "t3.js")
    assert third.joinpath("t3.js").read_text() == second.joinpath("t3.js").read_text()


def test_tables_and_case_pages_are_written_while_the_history_is_compared(tmp_path: Path) -> None:
    """With the history still being compared, write_report writes the tables, results.jsonl
    and case pages first (the history is only set once they exist: waiting for it before them
    would never end), then the summary, report.json and page from the report with history."""
    graded = grades()
    report = report_of(graded)
    history: Future[EvalReport] = Future()
    folder = tmp_path / "report"
    before_history = ["cases.parquet", "graders.parquet", "results.jsonl", "cases/claude/t3.js"]

    def compare() -> None:
        deadline = time.monotonic() + 60
        while not all((folder / f).exists() for f in before_history):
            assert time.monotonic() < deadline, "case pages not written before the history"
            time.sleep(0.01)
        assert not (folder / "report.json").exists()
        history.set_result(report.model_copy(update={"since_previous": comparison()}))

    comparing = threading.Thread(target=compare)
    comparing.start()
    files = write_report(report, graded, folder, history=history)
    comparing.join()
    written = EvalReport.model_validate_json(files.report_json.read_text())
    assert written.since_previous == comparison()
    assert "## Since the previous run" in files.summary_md.read_text()
    assert matrix_rows(files.report_html.read_text())["t3"].split() == ["failed", "regressed"]


def test_records_loaded_clean_are_not_scrubbed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record the loader found free of secrets is written as it is; any other is scrubbed."""
    monkeypatch.setenv("DEMO_API_KEY", "sk-demo-0123456789abcdef")
    leaked = RecordError(stage="agent", kind="failed", message="key sk-demo-0123456789abcdef")
    leaky = [g.model_copy(update={"error": leaked}) if g.agent == "codex" else g for g in grades()]
    loaded_clean = {id(g) for g in leaky if g.test_id == "t1"}
    files = write_report(report_of(leaky), leaky, tmp_path, clean=loaded_clean)
    errors = {
        (r["agent"], r["test_id"]): r["error"]
        for r in pq.read_table(files.cases_parquet).to_pylist()
    }
    assert errors[("codex", "t1")] == "key sk-demo-0123456789abcdef"  # trusted as loaded
    assert errors[("codex", "t3")] == "key [REDACTED:DEMO_API_KEY]"

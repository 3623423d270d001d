"""`report.html` and its `cases/` scripts written for one report (the package's entry points)."""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment
from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.html.case_files import CASES_DIR, case_detail, write_case_file
from evals_pipeline.reporting.html.context import build_context, matrix_agents, matrix_rows
from evals_pipeline.reporting.html.page import render_page
from evals_pipeline.reporting.html.page_cache import PageCache, page_key


def write_html_report(
    report: EvalReport,
    grades: Sequence[CaseGrade],
    folder: Path,
    *,
    sessions: Sequence[Session] = (),
    cases: Sequence[ResolvedCase] = (),
    judgments: Sequence[CaseJudgment] = (),
    previous: Path | None = None,
    stored: Mapping[int, bytes] | None = None,
) -> Path:
    """Write `report.html` and `cases/<agent>/<case_key>.js` for every cell of its matrix; a
    page unchanged since the report in `previous` is linked from there (page_cache.py, whose
    `record_digest`s of the records as loaded `stored` holds, by `id()`)."""
    write_case_pages(
        report,
        grades,
        folder,
        sessions=sessions,
        cases=cases,
        judgments=judgments,
        previous=previous,
        stored=stored,
    )
    return write_page(report, grades, folder, cases=cases)


def write_case_pages(
    report: EvalReport,
    grades: Sequence[CaseGrade],
    folder: Path,
    *,
    sessions: Sequence[Session] = (),
    cases: Sequence[ResolvedCase] = (),
    judgments: Sequence[CaseJudgment] = (),
    previous: Path | None = None,
    stored: Mapping[int, bytes] | None = None,
) -> None:
    """The `cases/` scripts of `write_html_report`, one per cell of the matrix. They show no
    history, so they are written while the report's comparison is drawn."""
    grade_of = {(g.agent, g.case_key): g for g in grades}
    case_of = {(c.agent, c.case_key): c for c in cases}
    judgment_of = {(j.agent, j.case_key): j for j in judgments}
    reasons = {(f.agent, f.test_id): f.reason for f in report.failures}
    sessions_of: dict[tuple[str, str], list[Session]] = defaultdict(list)
    for s in sessions:
        sessions_of[(s.agent, s.case_key)].append(s)
    if (folder / CASES_DIR).exists():
        # Pages of an earlier write here may be links to another report's: never written over.
        shutil.rmtree(folder / CASES_DIR)
    rows = matrix_rows(grades, cases)
    agents = matrix_agents(report) if rows else []
    for agent in agents:
        (folder / CASES_DIR / agent).mkdir(parents=True, exist_ok=True)
    same = previous is not None and previous.resolve() == folder.resolve()
    pages = PageCache(folder, None if same else previous)
    for case_key, test_id in rows:
        for agent in agents:
            key = (agent, case_key)
            grade, case = grade_of.get(key), case_of.get(key)
            judgment = judgment_of.get(key)
            sessions_here = sorted(sessions_of.get(key, []), key=lambda s: s.trial)
            reason = reasons.get((agent, test_id))
            page = page_key((grade, case, judgment), sessions_here, test_id, reason, stored=stored)
            if pages.reuse(agent, case_key, page):
                continue
            detail = case_detail(grade, case, sessions_here, judgment)
            detail["test_id"] = test_id
            detail["agent"] = agent
            detail["reason"] = reason
            write_case_file(folder, agent, case_key, detail)
    pages.save()


def write_page(
    report: EvalReport,
    grades: Sequence[CaseGrade],
    folder: Path,
    *,
    cases: Sequence[ResolvedCase] = (),
) -> Path:
    """`report.html` of `write_html_report`, its history included."""
    path = folder / "report.html"
    path.write_text(render_page(build_context(report, grades, cases)), encoding="utf-8")
    return path

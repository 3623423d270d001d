"""Write a report's files into its run folder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import pyarrow.parquet as pq
from pydantic import BaseModel

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.models.judging import CaseJudgment, CasePairwise
from evals_pipeline.models.report import EvalReport
from evals_pipeline.models.session import Session
from evals_pipeline.reporting.html import write_case_pages, write_page
from evals_pipeline.reporting.judge_usage import case_judge_costs
from evals_pipeline.reporting.markdown import render_markdown
from evals_pipeline.reporting.results_jsonl import render_results_jsonl
from evals_pipeline.reporting.tables import (
    cases_table,
    dimensions_table,
    graders_table,
    pairwise_table,
)
from evals_pipeline.secrets import run_redactor

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ReportFiles:
    folder: Path
    summary_md: Path
    cases_parquet: Path
    graders_parquet: Path
    results_jsonl: Path
    report_json: Path
    report_html: Path
    dimensions_parquet: Path | None = None
    pairwise_parquet: Path | None = None

    @classmethod
    def named(cls, folder: Path) -> ReportFiles:
        """The files every report has, in `folder` (the judged tables not yet known)."""
        return cls(
            folder=folder,
            summary_md=folder / "summary.md",
            cases_parquet=folder / "cases.parquet",
            graders_parquet=folder / "graders.parquet",
            results_jsonl=folder / "results.jsonl",
            report_json=folder / "report.json",
            report_html=folder / "report.html",
        )


def write_report(
    report: EvalReport,
    grades: Sequence[CaseGrade],
    folder: Path,
    *,
    judgments: Sequence[CaseJudgment] = (),
    pairwise: Sequence[CasePairwise] = (),
    sessions: Sequence[Session] = (),
    cases: Sequence[ResolvedCase] = (),
    previous: Path | None = None,
    stored: Mapping[int, bytes] | None = None,
    clean: AbstractSet[int] = frozenset(),
    history: Future[EvalReport] | None = None,
) -> ReportFiles:
    """Write the Markdown summary, the Parquet tables, results.jsonl, report.json and report.html
    (its case pages under `cases/` show the `sessions`' transcripts and the `cases`' inputs).

    `dimensions.parquet` and `pairwise.parquet` are written only when the judgments or the
    pairwise verdicts give them rows; their paths are None otherwise. Case pages unchanged since
    the report in `previous` (an earlier report's folder) are linked from it; `stored` holds the
    digests of the records as loaded, by `id()` (html/page_cache.py `record_digest`), so their
    pages are keyed without serializing them again. The records whose `id()` is in `clean` were
    found to hold no secret as they were loaded, and are not serialized again to be scrubbed.

    `history`: `report` with its place in the suite's history, still being compared on another
    thread (history/attach.py, whose bootstraps numpy draws without the GIL). The tables,
    results.jsonl and case pages show no history and are written meanwhile; the summary,
    report.json and report.html are written from it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    # The cases hold the secrets a suite interpolated (their steps need them); no report does.
    redactor = run_redactor()

    def scrub(record: M) -> M:
        return record if id(record) in clean else redactor.model(record)

    report = scrub(report)
    grades = [scrub(g) for g in grades]
    judgments = [scrub(j) for j in judgments]
    pairwise = [scrub(p) for p in pairwise]
    sessions = [scrub(s) for s in sessions]
    cases = [scrub(c) for c in cases]
    files = ReportFiles.named(folder)
    ordered = sorted(grades, key=lambda g: (g.agent, g.test_id))
    costs = case_judge_costs(ordered, judgments, pairwise)
    pq.write_table(
        cases_table(report.suite, ordered, costs), files.cases_parquet, compression="zstd"
    )
    pq.write_table(graders_table(report.suite, ordered), files.graders_parquet, compression="zstd")
    files.results_jsonl.write_text(render_results_jsonl(report.suite, ordered, report.created_ms))
    write_case_pages(
        report,
        ordered,
        folder,
        sessions=sessions,
        cases=cases,
        judgments=judgments,
        previous=previous,
        stored=stored,
    )
    files = _write_judged_tables(report.suite, judgments, pairwise, files)
    if history is not None:
        report = scrub(history.result())
    files.summary_md.write_text(render_markdown(report))
    files.report_json.write_text(report.model_dump_json(indent=2))
    write_page(report, ordered, folder, cases=cases)
    return files


def _write_judged_tables(
    suite: str,
    judgments: Sequence[CaseJudgment],
    pairwise: Sequence[CasePairwise],
    files: ReportFiles,
) -> ReportFiles:
    """`dimensions.parquet` and `pairwise.parquet`, each only when it has rows; `files` with
    the paths of those written."""
    dimensions = dimensions_table(suite, sorted(judgments, key=lambda j: (j.agent, j.test_id)))
    if dimensions.num_rows:
        path = files.folder / "dimensions.parquet"
        pq.write_table(dimensions, path, compression="zstd")
        files = replace(files, dimensions_parquet=path)
    pairs = pairwise_table(suite, sorted(pairwise, key=lambda p: p.case_key))
    if pairs.num_rows:
        path = files.folder / "pairwise.parquet"
        pq.write_table(pairs, path, compression="zstd")
        files = replace(files, pairwise_parquet=path)
    return files

"""The answer an LLM grader reads when it holds file blocks: converters run as real processes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.preprocessing import preprocessed_answer
from evals_pipeline.models.assertions import PreprocessorSpec, merge_preprocessors
from evals_pipeline.models.messages import Message
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _context(
    make_case: CaseFactory, make_session: SessionFactory, blocks: list[Any]
) -> GradingContext:
    messages = [Message(role="user", content="Report?"), Message(role="assistant", content=blocks)]
    return GradingContext(make_case(), make_session(messages))


def _converter(tmp_path: Path, body: str) -> PreprocessorSpec:
    script = tmp_path / "convert.py"
    script.write_text("import json, sys\nrequest = json.load(sys.stdin)\n" + body)
    return PreprocessorSpec(type="xlsx", command=[sys.executable, str(script)])


def test_file_blocks_are_converted_or_read_as_text(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    (tmp_path / "report.xlsx").write_text("binary-ish")
    (tmp_path / "notes.md").write_text("# Notes\r\nfine\n")
    converter = _converter(
        tmp_path, "print(f\"{request['original_path']} as {request['media_type']}\")\n"
    )
    ctx = _context(
        make_case,
        make_session,
        [
            {"type": "text", "text": "Here it is."},
            {"type": "file", "path": "report.xlsx", "media_type": XLSX},
            {"type": "file", "path": "notes.md", "media_type": "text/markdown"},
        ],
    )
    assert preprocessed_answer(ctx, [converter]) == (
        f"Here it is.\n[[ file: report.xlsx ]]\nreport.xlsx as {XLSX}\n"
        "[[ file: notes.md ]]\n# Notes\nfine\n"
    )


def test_unreadable_files_become_warning_lines(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    (tmp_path / "data.bin").write_bytes(b"\x00\x01")
    (tmp_path / "broken.xlsx").write_text("x")
    failing = _converter(tmp_path, "print('bad workbook', file=sys.stderr)\nsys.exit(1)\n")
    ctx = _context(
        make_case,
        make_session,
        [
            {"type": "file", "path": "data.bin", "media_type": "application/octet-stream"},
            {"type": "file", "path": "broken.xlsx", "media_type": "XLSX"},
            {"type": "file", "path": "https://example.com/a.pdf", "media_type": "pdf"},
        ],
    )
    assert preprocessed_answer(ctx, [failing]) == (
        "[file preprocessing warning] data.bin (application/octet-stream): default UTF-8 read "
        "produced binary or invalid text; configure a preprocessor\n"
        "[file preprocessing warning] broken.xlsx (XLSX): bad workbook\n"
        "[file preprocessing warning] https://example.com/a.pdf (pdf): remote file paths are "
        "not supported for preprocessing"
    )


def test_a_plain_text_answer_is_left_alone(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    ctx = GradingContext(make_case(), make_session())
    assert preprocessed_answer(ctx, []) is None


def test_a_graders_own_preprocessor_wins_for_its_type() -> None:
    suite = [
        PreprocessorSpec(type="xlsx", command=["a.py"]),
        PreprocessorSpec(type="pdf", command=["p.py"]),
    ]
    own = [PreprocessorSpec(type=XLSX, command=["b.py"])]
    assert [p.command for p in merge_preprocessors(suite, own)] == [["b.py"], ["p.py"]]

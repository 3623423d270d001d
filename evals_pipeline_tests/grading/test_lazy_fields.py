"""Graders read a long session lazily: stdin stays small, the transcript comes from its file.

Sessions go through the real enricher (a cli output file → Parquet); graders are real processes:
the Python helper (`evals_pipeline.grader`) and TypeScript graders on AgentV's own SDK (from its
corpus, installed by `make agentv` as conformance/node_modules/@agentv) run with bun. Each grader's stdin is captured byte for byte on its way in.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.enrichers import enrich_run
from evals_pipeline.grading import run_code_grader
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.grading.conftest import CaseFactory, python_grader

REPO = Path(__file__).resolve().parents[2]
GRADERS = REPO / "conformance" / "grader-payload" / "graders"
BUN = REPO / "conformance" / "node_modules" / ".bin" / "bun"
needs_bun = pytest.mark.skipif(not BUN.exists(), reason="needs `make agentv` (bun, @agentv/eval)")

HELPER_GRADER = """
import io, sys
from evals_pipeline.grader import GraderInput, Score, run


def check(inp: GraderInput) -> Score:
    inline = {key: key in inp.raw and inp.raw[key] is not None for key in ("messages", "trace")}
    messages = inp.messages  # inline, else read from messages_json_path now
    trace = inp.trace  # inline, else read from trace_path now
    calls = [call for message in messages for call in message.tool_calls]
    details = {
        "inline": inline,
        "roles": [messages[0].role, messages[-1].role],
        "messages": len(messages),
        "calls": len(calls),
        "events": len(trace["events"]),
        "same_transcript": len(trace["messages"]) == len(messages),
        "answer": inp.answer,
        "cached": inp.messages is messages,
    }
    return Score(1.0 if inp.output == messages[-1].content else 0.0, [], details)


sys.exit(run(check))
"""


def _session(tmp_path: Path, tool_calls: int, output_bytes: int) -> Session:
    """A cli agent's output file with `tool_calls` calls, each returning `output_bytes`,
    enriched as a real run is."""
    chunk = ("source line of the project under refactoring\n" * (output_bytes // 45 + 1))[
        :output_bytes
    ]
    turns: list[dict[str, Any]] = []
    for i in range(tool_calls):
        call = {
            "tool": "Read",
            "id": f"call-{i}",
            "input": {"filePath": f"src/module_{i}.py"},
            "output": chunk,
            "start_time": "2025-01-15T10:30:00.000Z",
            "end_time": "2025-01-15T10:30:00.120Z",
        }
        turns.append({"role": "assistant", "content": f"Reading module {i}.", "tool_calls": [call]})
    turns.append({"role": "assistant", "content": "Refactored every module; the answer is 42."})
    document = {"output": turns, "token_usage": {"input": 120, "output": 30}, "cost_usd": 0.01}
    output_file = tmp_path / "agent-output.json"
    output_file.write_text(json.dumps(document), encoding="utf-8")
    run = AgentRun(
        case_key="case-1",
        agent="mock",
        output_file_path=str(output_file),
        start_ms=1_736_937_000_000,
        end_ms=1_736_937_060_000,
    )
    return enrich_run(run, tmp_path / "session")


SESSIONS = {"2 KB": (2, 400), "10 MB": (2_000, 5_000)}


@pytest.fixture(params=list(SESSIONS), ids=list(SESSIONS))
def session(request: pytest.FixtureRequest, tmp_path: Path) -> Session:
    calls, size = SESSIONS[request.param]
    session = _session(tmp_path, calls, size)
    transcript = sum(len(json.dumps(t["output"])) for t in _wire_calls(session))
    assert transcript == pytest.approx(calls * size, rel=0.05)
    return session


def _wire_calls(session: Session) -> list[dict[str, Any]]:
    from evals_pipeline.storage.messages import read_messages

    return [
        call.model_dump() for m in read_messages(session.messages_path) for call in m.tool_calls
    ]


@pytest.fixture
def observed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the graders' stdin is kept: a folder the sandboxed grader may write."""
    folder = tmp_path / "observed"
    folder.mkdir()
    monkeypatch.setenv(WRITABLE_VAR, str(folder))
    return folder


def _grade(
    make_case: CaseFactory, session: Session, observed: Path, command: list[str]
) -> tuple[GraderResult, bytes]:
    """Run the grader behind a shell that keeps the exact bytes it was given on stdin."""
    stdin = observed / f"stdin-{len(list(observed.glob('stdin-*')))}.json"
    wrapped = f'cat > {shlex.quote(str(stdin))} && exec "$@" < {shlex.quote(str(stdin))}'
    case: ResolvedCase = make_case(
        [
            {
                "type": "code-grader",
                "command": ["sh", "-c", wrapped, "grader", *command],
                # These graders read a long session's transcript and trace as JSON files.
                "messages_format": "json",
            }
        ],
        input=[{"role": "user", "content": "Refactor the project."}],
    )
    spec = case.assertions[0]
    assert isinstance(spec, CodeGraderAssertion)
    grade = run_code_grader(spec, case, session)
    return grade, stdin.read_bytes()


def test_python_helper_reads_the_transcript_lazily(
    make_case: CaseFactory, session: Session, tmp_path: Path, observed: Path
) -> None:
    command = python_grader(tmp_path, "helper.py", HELPER_GRADER)
    grade, stdin = _grade(make_case, session, observed, command)
    assert grade.verdict == "pass", (grade.error, grade.stderr)
    calls = session.trace_summary.tool_calls["Read"]
    large = calls > 100
    assert grade.details == {
        "inline": {"messages": not large, "trace": not large},
        "roles": ["user", "assistant"],
        "messages": calls + 2,
        "calls": calls,
        "events": (calls + 2) + 2 * calls + 1,
        "same_transcript": True,
        "answer": "Refactored every module; the answer is 42.",
        "cached": True,
    }
    payload = json.loads(stdin)
    if large:
        assert len(stdin) < 64 * 1024, len(stdin)
        assert "messages" not in payload and payload["trace"] is None
        assert Path(payload["messages_json_path"]).stat().st_size > 10_000_000
    else:
        assert len(stdin) < 16 * 1024 and len(payload["messages"]) == calls + 2


@needs_bun
def test_typescript_sdk_grader_runs_unchanged(
    make_case: CaseFactory, session: Session, observed: Path
) -> None:
    grade, stdin = _grade(make_case, session, observed, [str(BUN), str(GRADERS / "sdk_plain.ts")])
    assert grade.verdict == "pass", (grade.error, grade.stderr)
    assert grade.score == 1.0, [a for a in grade.assertions if not a.passed]
    assert len(stdin) < 64 * 1024


@needs_bun
def test_typescript_transcript_helper_reads_a_long_session(
    make_case: CaseFactory, session: Session, observed: Path
) -> None:
    grade, stdin = _grade(make_case, session, observed, [str(BUN), str(GRADERS / "sdk_fields.ts")])
    assert grade.verdict == "pass", (grade.error, grade.stderr)
    assert grade.score == 1.0, [a.text for a in grade.assertions if not a.passed]
    assert len(stdin) < 64 * 1024


def test_the_suites_transcript_helper_is_the_shipped_one() -> None:
    shipped = REPO / "evals_pipeline" / "js" / "transcript.mjs"
    assert (GRADERS / "transcript.mjs").read_text() == shipped.read_text()

"""A stream's session written straight from the parser to Arrow (enrichers/stream_tables.py),
files read line by line: byte for byte the Parquet files, and the same figures, that the
canonical models give (storage/events.py, storage/messages.py), on every captured stream."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from evals_pipeline.agents.registry import parse_stream
from evals_pipeline.enrichers.session import enriched_run, milestone_origin, priced, trace_summary
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.events import write_events
from evals_pipeline.storage.messages import read_messages, write_transcript
from evals_pipeline.storage.parquet import read_parquet

TRANSCRIPTS = Path(__file__).parent.parent / "fixtures" / "transcripts"
STREAMS = {
    "claude.jsonl": ("claude-code", None),
    "claude.multi_parallel_and_failing_tool.jsonl": ("claude-code", None),
    "codex.jsonl": ("codex", None),
    "codex.multi_parallel_and_failing_tool.jsonl": ("codex", None),
    "codex.rollout.jsonl": ("codex", None),
    "codex.jsonl+rollout": ("codex", "codex.rollout.jsonl"),
    "pi.jsonl": ("pi-agent", None),
    "pi.multi_parallel_and_failing_tool.jsonl": ("pi-agent", None),
    "pi.session.jsonl": ("pi-agent", None),
    "pi.jsonl+rollout": ("pi-agent", "codex.rollout.jsonl"),  # ignored, with a warning
}


def _run(name: str, stdout: Path) -> AgentRun:
    kind, rollout = STREAMS[name]
    return AgentRun(
        case_key="case",
        agent=kind,
        stdout_path=str(stdout),
        start_ms=0,
        end_ms=1,
        stream_kind=kind,
        side_files={"rollout": str(TRANSCRIPTS / rollout)} if rollout else {},
    )


def _assert_as_models(run: AgentRun, tmp_path: Path) -> None:
    made = enriched_run(run, tmp_path / "arrow")
    rollout = run.side_files.get("rollout")
    enriched = parse_stream(
        run.agent,
        Path(str(run.stdout_path)).read_text(errors="replace"),
        rollout=Path(rollout).read_text() if rollout else None,
    )
    models = tmp_path / "models"
    write_events(enriched.events, models / "events.parquet")
    as_stored = write_transcript(enriched.messages, models / "messages.parquet")
    for name in ("events.parquet", "messages.parquet"):
        assert (tmp_path / "arrow" / name).read_bytes() == (models / name).read_bytes(), name
    session = made.session
    assert session.trace_summary == trace_summary(enriched.messages, enriched.llm_call_count)
    assert session.output == enriched.final_answer
    assert session.message_count == len(enriched.messages)
    assert session.token_usage == enriched.token_usage
    assert session.cost_usd == (enriched.cost_usd or priced(enriched.token_usage, run.pricing))
    assert session.duration_ms == (enriched.duration_ms or run.duration_ms)
    assert session.parse_warnings == enriched.parse_warnings
    assert session.system_prompt_injections == enriched.system_prompt_injections
    from evals_pipeline.enrichers.milestones import compute_milestones

    origin = milestone_origin(run, enriched)
    assert session.milestones == compute_milestones(enriched.events, origin)
    assert (made.messages is not None) == as_stored
    if made.messages is not None:
        assert list(made.messages) == enriched.messages
    assert read_messages(session.messages_path) == enriched.messages or not as_stored


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream_session_is_the_models_session_byte_for_byte(name: str, tmp_path: Path) -> None:
    stdout = TRANSCRIPTS / name.split("+")[0]
    _assert_as_models(_run(name, stdout), tmp_path)


@pytest.mark.parametrize(
    "name", ["claude.multi_parallel_and_failing_tool.jsonl", "pi.jsonl", "codex.jsonl+rollout"]
)
def test_stream_session_scrubs_secrets_as_the_models_do(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Values the streams hold in texts, tool inputs and outputs: scrubbed from both files.
    monkeypatch.setenv("BENCH_API_KEY", "test_greet.py")
    monkeypatch.setenv("OTHER_API_KEY", "hello.py")
    stdout = TRANSCRIPTS / name.split("+")[0]
    _assert_as_models(_run(name, stdout), tmp_path)
    for stored in ("events.parquet", "messages.parquet"):
        text = str(read_parquet(tmp_path / "arrow" / stored).to_pylist())
        assert "test_greet.py" not in text and "hello.py" not in text
        assert "<redacted" in text or "BENCH_API_KEY" in text or "OTHER_API_KEY" in text


def test_stream_cut_mid_line_and_crlf_read_from_the_file(tmp_path: Path) -> None:
    """A file read line by line splits and warns as its whole text did: CRLF and lone CR line
    ends, a blank last line, and a last line cut mid-write."""
    lines = (TRANSCRIPTS / "claude.multi_parallel_and_failing_tool.jsonl").read_bytes()
    first, *rest = lines.split(b"\n")
    data = first + b"\r\n" + b"\r".join(rest[:3]) + b"\nnot json\n" + b"\n".join(rest[3:])
    for name, ending in {
        "cut": data[:-40],
        "blank": data + b"\n  ",
        "bad": data + b"\xff\n",
    }.items():
        stdout = tmp_path / f"{name}.jsonl"
        stdout.write_bytes(ending)
        run = _run("claude.jsonl", stdout)
        _assert_as_models(run, tmp_path / name)


@pytest.mark.parametrize(
    ("name", "most"),
    [
        ("claude.multi_parallel_and_failing_tool.jsonl", 3.0),
        ("pi.multi_parallel_and_failing_tool.jsonl", 1.5),
    ],
)
def test_a_long_stream_is_never_held_whole(name: str, most: float, tmp_path: Path) -> None:
    """The Python heap's peak while a 2 MB stream becomes a session, in multiples of the stream:
    read whole (its text, then its lines, then its models) it was 4.6x for claude and 7x for pi;
    read line by line straight to Arrow, 2.2x and 0.8x (Arrow's own buffers are not counted)."""
    one = (TRANSCRIPTS / name).read_bytes()
    stdout = tmp_path / "long.jsonl"
    stdout.write_bytes(one * (2 * 2**20 // len(one)))
    enriched_run(_run(name, TRANSCRIPTS / name), tmp_path / "warm")  # first-use costs
    tracemalloc.start()
    try:
        enriched_run(_run(name, stdout), tmp_path / "long")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < most * stdout.stat().st_size

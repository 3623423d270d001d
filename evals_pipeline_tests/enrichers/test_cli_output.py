"""The enricher: AgentV `cli` output files and JSONL recordings into canonical sessions."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evals_pipeline.enrichers import enrich_run, trace_summary
from evals_pipeline.enrichers.cli_output import (
    NOT_OUTPUT_SHAPE,
    answer_warnings,
    parse_message_lines,
    parse_output_document,
)
from evals_pipeline.enrichers.jsonl import LONE_SURROGATES
from evals_pipeline.enrichers.session import enriched_run
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import (
    Message,
    PlainMessages,
    ToolCall,
    final_answer,
    messages_from_wire,
)
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.messages import messages_table, read_messages

T0 = "2025-01-15T10:30:00.000Z"
T0_MS = int(datetime(2025, 1, 15, 10, 30, tzinfo=UTC).timestamp() * 1000)


def doc(**fields: object) -> str:
    return json.dumps(fields)


def texts(messages: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.text()) for m in messages]


# --- parse_output_document ------------------------------------------------------------------


def test_output_wins_over_text() -> None:
    parsed = parse_output_document(
        doc(
            text="from text",
            output=[
                {"role": "user", "content": "question"},
                {"role": "assistant", "content": "from output"},
            ],
            output_messages=[{"role": "assistant", "content": "from legacy"}],
        )
    )
    assert texts(parsed.messages) == [("user", "question"), ("assistant", "from output")]
    assert parsed.warnings == []


def test_legacy_output_messages_are_read() -> None:
    parsed = parse_output_document(
        doc(text="from text", output_messages=[{"role": "assistant", "content": "legacy"}])
    )
    assert texts(parsed.messages) == [("assistant", "legacy")]


def test_text_only_is_one_assistant_message() -> None:
    parsed = parse_output_document(doc(text="the answer", cost_usd=0.5, duration_ms=1200))
    assert texts(parsed.messages) == [("assistant", "the answer")]
    assert (parsed.cost_usd, parsed.duration_ms) == (0.5, 1200)


def test_token_usage_is_read() -> None:
    parsed = parse_output_document(
        doc(text="a", token_usage={"input": 10, "output": 5, "cached": 2, "reasoning": 9})
    )
    assert parsed.token_usage is not None
    assert (parsed.token_usage.input, parsed.token_usage.output, parsed.token_usage.cached) == (
        10,
        5,
        2,
    )


def test_invalid_token_usage_is_a_warning() -> None:
    parsed = parse_output_document(doc(text="a", token_usage={"input": "lots"}))
    assert parsed.token_usage is None
    assert len(parsed.warnings) == 1 and "token_usage" in parsed.warnings[0]


@pytest.mark.parametrize(
    ("text", "warned"),
    [
        ("plain answer, not JSON", False),
        ("{truncated json", True),
        ('{"output": [{"role": "assistant", "content": "cut o', True),
        ("", False),
    ],
)
def test_non_json_is_the_whole_text_as_one_assistant_message(text: str, warned: bool) -> None:
    parsed = parse_output_document(text)
    assert texts(parsed.messages) == [("assistant", text)]
    # AgentV grades it as text; what starts like JSON and does not parse says so, for the grade.
    assert answer_warnings(parsed.warnings) == parsed.warnings
    assert len(parsed.warnings) == warned
    assert parsed.cost_usd is None and parsed.token_usage is None


@pytest.mark.parametrize(
    "text",
    [
        '["a", "list"]',
        '"a JSON string"',
        "42",
        "null",
        '{"answer": "an object without output, output_messages or text"}',
    ],
)
def test_json_that_is_not_an_output_object_is_kept_as_text(text: str) -> None:
    parsed = parse_output_document(text)
    assert texts(parsed.messages) == [("assistant", text)]
    assert parsed.warnings == []


@pytest.mark.parametrize("key", ["cost_usd", "duration_ms"])
@pytest.mark.parametrize("value", [-1, -0.01, "12", [3]])
def test_negative_or_non_numeric_cost_and_duration_are_ignored_with_a_warning(
    key: str, value: object
) -> None:
    parsed = parse_output_document(doc(text="a", **{key: value}))
    assert (parsed.cost_usd, parsed.duration_ms) == (None, None)
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith(f"{NOT_OUTPUT_SHAPE}: ignored {key}=")
    assert texts(parsed.messages) == [("assistant", "a")]


def test_zero_cost_and_duration_are_kept() -> None:
    parsed = parse_output_document(doc(text="a", cost_usd=0, duration_ms=0))
    assert (parsed.cost_usd, parsed.duration_ms) == (0.0, 0)
    assert parsed.warnings == []


@pytest.mark.parametrize(
    "output",
    [
        [{"role": 7, "content": "hi"}],
        [{"content": "no role"}],
        [{"role": "assistant", "content": "x", "tool_calls": [{"input": "no tool name"}]}],
        [5],
    ],
)
def test_messages_that_do_not_fit_the_schema_are_kept_as_text_with_a_warning(
    output: list[object],
) -> None:
    text = doc(output=output, text="ignored", cost_usd=0.25)
    parsed = parse_output_document(text)
    assert texts(parsed.messages) == [("assistant", text)]
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith(
        f"{NOT_OUTPUT_SHAPE}: ignored the output messages, the whole file graded as text ("
    )
    assert answer_warnings(parsed.warnings) == parsed.warnings  # grades show it
    assert parsed.cost_usd == 0.25  # the rest of the document is still read


def test_a_message_with_an_unknown_role_is_dropped_with_a_warning_naming_it() -> None:
    output = [
        {"role": "user", "content": "go"},
        {"role": "robot", "content": "beep"},
        {"role": "assistant", "content": "done"},
    ]
    parsed = parse_output_document(doc(output=output))
    # As AgentV grades it: the answer is the last assistant message.
    assert texts(parsed.messages) == [("user", "go"), ("assistant", "done")]
    assert parsed.warnings == [
        f"{NOT_OUTPUT_SHAPE}: ignored output message 2="
        '{"role": "robot", "content": "beep"} (expected a role among system, user, assistant, tool)'
    ]
    assert answer_warnings(parsed.warnings) == parsed.warnings


@pytest.mark.parametrize(
    ("usage", "found"),
    [
        ({"input": -10, "output": 5}, "input=-10"),
        ({"input": 1.5, "output": 5}, "input=1.5"),
        ({"input": "ten", "output": 5, "cached": -1}, "input='ten', cached=-1"),
        ({"output": 5}, "no input"),
        ([10, 5], None),
        (15, None),
    ],
)
def test_token_usage_that_is_not_whole_counts_is_ignored_with_a_warning(
    usage: object, found: str | None
) -> None:
    parsed = parse_output_document(doc(text="a", token_usage=usage))
    assert parsed.token_usage is None  # unknown, never a negative or made-up count
    assert len(parsed.warnings) == 1, parsed.warnings
    assert parsed.warnings[0].startswith(f"{NOT_OUTPUT_SHAPE}: ignored token_usage=")
    assert found is None or f"found {found})" in parsed.warnings[0]
    assert answer_warnings(parsed.warnings) == parsed.warnings


def test_an_output_that_is_neither_messages_nor_text_is_named() -> None:
    parsed = parse_output_document(doc(output={"role": "assistant"}, text="the answer"))
    assert texts(parsed.messages) == [("assistant", "the answer")]
    assert parsed.warnings == [
        f'{NOT_OUTPUT_SHAPE}: ignored output={{"role": "assistant"}} (expected a list of messages)'
    ]


def test_a_bare_string_in_output_is_a_warning_not_a_crash() -> None:
    text = doc(output=["hello"])
    try:
        parsed = parse_output_document(text)
    except ValueError as exc:
        pytest.fail(
            "BUG: parse_output_document raised instead of warning on a non-object message: "
            f"{exc!r}. cli_output._timed calls dict(raw), which raises ValueError for a string; "
            "parse_output_document catches only ValidationError, TypeError and AttributeError."
        )
    assert texts(parsed.messages) == [("assistant", text)]
    assert len(parsed.warnings) == 1


def test_iso_times_become_epoch_ms_and_durations_are_derived() -> None:
    parsed = parse_output_document(
        doc(
            output=[
                {
                    "role": "assistant",
                    "content": "done",
                    "start_time": T0,
                    "end_time": "2025-01-15T10:30:02.500Z",
                    "tool_calls": [
                        {
                            "tool": "Bash",
                            "start_time": "2025-01-15T10:30:00.250+00:00",
                            "end_time": "2025-01-15T10:30:01.000Z",
                        },
                        {"tool": "Read", "start_time": T0, "end_time": T0, "duration_ms": 99},
                    ],
                },
                {"role": "assistant", "content": "ms given", "start_time_ms": 5, "end_time_ms": 8},
            ]
        )
    )
    first, second = parsed.messages
    assert (first.start_time_ms, first.end_time_ms, first.duration_ms) == (
        T0_MS,
        T0_MS + 2500,
        2500,
    )
    bash, read = first.tool_calls
    assert (bash.start_time_ms, bash.end_time_ms, bash.duration_ms) == (
        T0_MS + 250,
        T0_MS + 1000,
        750,
    )
    assert read.duration_ms == 99  # a given duration is kept
    assert (second.start_time_ms, second.end_time_ms, second.duration_ms) == (5, 8, 3)


def test_an_unparseable_time_is_dropped() -> None:
    parsed = parse_output_document(
        doc(output=[{"role": "assistant", "content": "x", "start_time": "yesterday"}])
    )
    [message] = parsed.messages
    assert message.start_time_ms is None and message.duration_ms is None


# --- parse_message_lines --------------------------------------------------------------------


def test_jsonl_recording_with_a_truncated_last_line_warns() -> None:
    text = (
        json.dumps({"role": "user", "content": "hi"})
        + "\n\n"
        + json.dumps({"role": "assistant", "content": "hello", "start_time": T0})
        + "\n"
        + '{"role": "assistant", "content": "cut of'
    )
    parsed = parse_message_lines(text)
    assert texts(parsed.messages) == [("user", "hi"), ("assistant", "hello")]
    assert parsed.messages[1].start_time_ms == T0_MS
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith("line 4: skipped, not a message")


def test_jsonl_lines_that_are_not_messages_are_skipped_with_a_warning() -> None:
    lines = [
        json.dumps({"role": "nobody", "content": "x"}),
        "5",
        json.dumps({"role": "assistant", "content": "kept"}),
    ]
    parsed = parse_message_lines("\n".join(lines))
    assert texts(parsed.messages) == [("assistant", "kept")]
    assert [w.split(":")[0] for w in parsed.warnings] == ["line 1", "line 2"]


def test_a_jsonl_line_holding_a_string_is_a_warning_not_a_crash() -> None:
    text = '"just a string"\n' + json.dumps({"role": "assistant", "content": "kept"})
    try:
        parsed = parse_message_lines(text)
    except ValueError as exc:
        pytest.fail(
            "BUG: parse_message_lines raised instead of warning on a line that is a JSON string: "
            f"{exc!r}. cli_output._timed calls dict(raw), which raises ValueError; the except "
            "clause catches only JSONDecodeError, ValidationError, TypeError and AttributeError."
        )
    assert texts(parsed.messages) == [("assistant", "kept")]
    assert len(parsed.warnings) == 1


# --- trace_summary --------------------------------------------------------------------------


def test_trace_summary_counts_events_tools_errors_and_model_turns() -> None:
    messages = [
        Message(role="user", content="go"),
        Message(
            role="assistant",
            content="working",
            tool_calls=[
                ToolCall(tool="Bash", status="ok", duration_ms=10),
                ToolCall(tool="Bash", status="error", duration_ms=5),
                ToolCall(tool="Read", status="timeout"),
            ],
        ),
        Message(role="tool", content="output"),
        Message(
            role="assistant",
            content="done",
            tool_calls=[ToolCall(tool="Edit", status="unknown"), ToolCall(tool="Bash")],
        ),
    ]
    summary = trace_summary(messages)
    assert summary.event_count == 4 + 5
    assert summary.tool_calls == {"Bash": 3, "Read": 1, "Edit": 1}
    assert summary.error_count == 2
    assert summary.tool_durations == {"Bash": 15}
    assert summary.llm_call_count == 2


def test_trace_summary_of_no_messages_is_empty() -> None:
    summary = trace_summary([])
    assert (summary.event_count, summary.tool_calls, summary.error_count) == (0, {}, 0)
    assert summary.llm_call_count == 0


# --- enrich_run -----------------------------------------------------------------------------


def agent_run(
    tmp_path: Path, output: str | None, *, suffix: str = ".json", **kw: object
) -> AgentRun:
    path = None
    if output is not None:
        path = tmp_path / f"output{suffix}"
        path.write_text(output, encoding="utf-8")
    fields: dict[str, object] = {
        "case_key": "fix-bug",
        "agent": "careful",
        "trial": 1,
        "output_file_path": str(path) if path else None,
        "start_ms": 1_000,
        "end_ms": 4_000,
    }
    fields.update(kw)
    return AgentRun.model_validate(fields)


def test_enrich_run_stores_messages_and_summarises(tmp_path: Path) -> None:
    output = doc(
        output=[
            {"role": "user", "content": "fix it"},
            {
                "role": "assistant",
                "content": "looking",
                "tool_calls": [{"tool": "Bash", "status": "error"}],
            },
            {"role": "assistant", "content": "fixed"},
        ],
        token_usage={"input": 7, "output": 3},
        cost_usd=0.002,
        duration_ms=-5,
    )
    session = enrich_run(agent_run(tmp_path, output), tmp_path / "session")
    assert session.status == "ok"
    assert (session.case_key, session.agent, session.trial) == ("fix-bug", "careful", 1)
    assert session.message_count == 3
    assert texts(read_messages(session.messages_path)) == [
        ("user", "fix it"),
        ("assistant", "looking"),
        ("assistant", "fixed"),
    ]
    assert session.output == "fixed" and session.output_path is None
    assert session.output_chars == 5
    assert session.trace_summary.tool_calls == {"Bash": 1}
    assert session.trace_summary.error_count == 1
    assert session.token_usage is not None and session.token_usage.total == 10
    assert session.cost_usd == 0.002
    assert session.duration_ms == 3_000  # the invalid reported duration falls back to wall time
    assert len(session.parse_warnings) == 1 and "duration_ms" in session.parse_warnings[0]


def test_an_enriched_run_keeps_the_messages_its_file_holds(tmp_path: Path) -> None:
    calls = [{"tool": "Bash", "input": {"cmd": "ls"}, "output": {"files": ["a"]}}]
    output = doc(
        output=[
            {"role": "assistant", "content": [{"type": "text", "text": "look"}]},
            {"role": "assistant", "content": "done", "tool_calls": calls, "metadata": {"k": 1}},
        ]
    )
    made = enriched_run(agent_run(tmp_path, output), tmp_path / "session")
    assert made.messages is not None and len(made.messages) == 2
    assert made.messages == read_messages(made.session.messages_path)


def test_messages_of_a_role_and_text_alone_stay_plain_and_store_as_their_models_do(
    tmp_path: Path,
) -> None:
    raws = [
        {"role": "user", "content": "fix it"},
        {"role": "tool", "content": "é" * 10},
        {"role": "assistant", "content": "fixed"},
        {"role": "assistant", "content": ""},  # an empty last turn is not the answer
    ]
    made = enriched_run(agent_run(tmp_path, doc(output=raws)), tmp_path / "session")
    plain = made.messages
    assert isinstance(plain, PlainMessages) and plain.rows == raws
    models = messages_from_wire(raws)
    assert messages_table(plain)[0].equals(messages_table(models)[0])
    assert made.session.output == final_answer(models) == final_answer(plain) == "fixed"
    assert made.session.trace_summary == trace_summary(models)
    assert plain._models is None  # none of it made a model
    assert list(plain) == models == read_messages(made.session.messages_path)


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "assistant", "content": "hi", "name": "bot"},  # a third key
        {"role": "assistant", "content": ["hi"]},  # structured content
        {"role": "assistant", "content": None},
        "hi",
    ],
)
def test_other_messages_are_validated_into_models(raw: object) -> None:
    parsed = parse_output_document(doc(output=[{"role": "user", "content": "go"}, raw]))
    assert not isinstance(parsed.messages, PlainMessages)
    assert PlainMessages.of([raw]) is None


def test_messages_a_secret_was_scrubbed_from_are_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_SERVICE_TOKEN", "tok-0123456789")
    output = doc(output=[{"role": "assistant", "content": "the token is tok-0123456789"}])
    made = enriched_run(agent_run(tmp_path, output), tmp_path / "session")
    assert made.messages is None  # a grader reads the scrubbed file instead
    [stored] = read_messages(made.session.messages_path)
    assert stored.text() == "the token is [REDACTED:BENCH_SERVICE_TOKEN]"
    clean = doc(output=[{"role": "assistant", "content": "no token here"}])
    assert enriched_run(agent_run(tmp_path, clean), tmp_path / "clean").messages is not None


def test_enrich_run_reads_a_jsonl_recording(tmp_path: Path) -> None:
    lines = json.dumps({"role": "assistant", "content": "recorded"}) + '\n{"role": "assis'
    session = enrich_run(agent_run(tmp_path, lines, suffix=".jsonl"), tmp_path / "session")
    assert session.status == "ok"
    assert session.output == "recorded"
    assert len(session.parse_warnings) == 1 and session.parse_warnings[0].startswith("line 2")


# A JavaScript string cut mid-emoji, as JSON.stringify writes it: half a UTF-16 pair, escaped.
CUT = "cut \\ud83d here, whole \\ud83d\\ude00"


@pytest.mark.parametrize(
    ("output", "suffix"),
    [
        ('{"output": [{"role": "assistant", "content": "' + CUT + '"}]}', ".json"),
        ('{"role": "assistant", "content": "' + CUT + '"}\n', ".jsonl"),
    ],
)
def test_a_character_cut_in_half_is_stored_as_u_fffd_with_a_warning(
    tmp_path: Path, output: str, suffix: str
) -> None:
    session = enrich_run(agent_run(tmp_path, output, suffix=suffix), tmp_path / "session")
    assert session.status == "ok"
    assert session.output == "cut \ufffd here, whole \U0001f600"
    assert session.parse_warnings == [LONE_SURROGATES]
    [stored] = read_messages(session.messages_path)
    assert stored.text() == session.output


def test_an_output_the_enricher_cannot_read_is_its_cases_error(tmp_path: Path) -> None:
    # An agent that made its output file a folder: that case's error, with its stderr, and an
    # empty transcript; nothing is raised to the step, whose other cases go on.
    folder = tmp_path / "output.json"
    folder.mkdir()
    run = agent_run(tmp_path, None, output_file_path=str(folder), stderr="wrote a folder")
    session = enrich_run(run, tmp_path / "session")
    assert session.status == "agent_error"
    assert session.error is not None
    assert message_of(session.error).startswith("its output could not be read: IsADirectoryError")
    assert session.stderr == "wrote a folder" and session.message_count == 0
    # A failed run's output is not read: its own error stands alone.
    failed = run.model_copy(update={"error": "exit code 3"})
    assert message_of(enrich_run(failed, tmp_path / "failed").error) == "exit code 3"


def test_a_final_answer_over_50000_characters_goes_to_output_json(tmp_path: Path) -> None:
    answer = "x" * 60_000 + ' "quoted" \\ and a newline\n'
    session = enrich_run(agent_run(tmp_path, doc(text=answer)), tmp_path / "session")
    assert session.output is None
    assert session.output_path == str(tmp_path / "session" / "output.json")
    stored = Path(session.output_path).read_text(encoding="utf-8")
    assert stored.startswith('"')  # a JSON string literal, not the raw text
    assert json.loads(stored) == answer
    assert session.output_chars == len(answer)


def test_the_50000_character_rule_counts_the_json_encoding(tmp_path: Path) -> None:
    # The encoding of 49,998 plain characters, with its quotes, is exactly 50,000: inline.
    at_limit = enrich_run(agent_run(tmp_path, doc(text="a" * 49_998)), tmp_path / "at")
    assert at_limit.output == "a" * 49_998 and at_limit.output_path is None
    over = enrich_run(agent_run(tmp_path, doc(text="a" * 49_999)), tmp_path / "over")
    assert over.output is None and over.output_path is not None


def test_a_non_ascii_answer_under_the_limit_stays_inline(tmp_path: Path) -> None:
    # docs/grader-contract.md: inline when the JSON encoding of the answer is at most 50,000
    # characters; grading/code_grader/payload.py measures it with ensure_ascii=False (as AgentV's
    # JSON.stringify does). 30,000 "é" encode to 30,002 characters.
    answer = "é" * 30_000
    session = enrich_run(agent_run(tmp_path, doc(text=answer)), tmp_path / "session")
    assert session.output == answer and session.output_path is None, (
        "BUG: evals_pipeline/enrichers/session.py measures len(json.dumps(answer)) with the "
        "default ensure_ascii=True, so each non-ASCII character counts as a 6-character \\uXXXX "
        "escape and a 30,000-character answer is moved to output.json; the contract (and "
        "grading/code_grader/payload.py) use ensure_ascii=False"
    )


def test_a_failed_run_gives_an_empty_session(tmp_path: Path) -> None:
    run = agent_run(
        tmp_path, doc(text="partial"), error="agent exited with code 3", stderr="Traceback"
    )
    session = enrich_run(run, tmp_path / "session")
    assert session.status == "agent_error"
    assert (message_of(session.error), session.stderr) == ("agent exited with code 3", "Traceback")
    assert session.message_count == 0 and session.output == ""
    assert read_messages(session.messages_path) == []  # the file is written even so

    timed_out = enrich_run(
        agent_run(tmp_path, None, error="timed out after 30 s", timed_out=True),
        tmp_path / "timed-out",
    )
    assert timed_out.status == "timed_out"


def test_stdout_is_the_answer_when_no_output_file_was_written(tmp_path: Path) -> None:
    stdout = tmp_path / "stdout.txt"
    stdout.write_text("printed answer\n")
    session = enrich_run(agent_run(tmp_path, None, stdout_path=str(stdout)), tmp_path / "session")
    assert session.output == "printed answer\n"
    assert any("stdout was taken as the answer" in w for w in session.parse_warnings)

"""The grader payload stays small however long the session: transcript and big answers by path."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.enrichers.arrow_output import read_plain_output
from evals_pipeline.grading import build_grader_payload, run_code_grader
from evals_pipeline.grading.code_grader.payload import grader_payload
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import (
    Message,
    PlainMessages,
    TokenUsage,
    ToolCall,
    messages_from_wire,
)
from evals_pipeline.models.session import INLINE_OUTPUT_LIMIT as OUTPUT_INLINE_LIMIT
from evals_pipeline.models.session import TraceSummary
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.storage.arrow_messages import ArrowMessages
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader

HELPER_GRADER = """
from evals_pipeline.grader import GraderInput, Score, grader


@grader
def check(inp: GraderInput) -> Score:
    messages = inp.messages
    last = messages[-1]
    details = {
        "count": len(messages),
        "last_role": last.role,
        "last_content": last.content,
        "tool_calls": sum(len(m.tool_calls) for m in messages),
        "output_len": len(inp.output),
        "output_tail": inp.output[-20:],
        "inline_output_is_null": inp.raw["output"] is None,
    }
    return Score(1.0, [("read the transcript", True, f"{len(messages)} messages")], details)
"""


def _spec(case: ResolvedCase) -> CodeGraderAssertion:
    spec = case.assertions[0]
    assert isinstance(spec, CodeGraderAssertion)
    return spec


def _big_transcript(target_bytes: int = 10_000_000) -> list[Message]:
    """About `target_bytes` of messages: user turns, tool calls with large outputs, answers."""
    chunk = 5_000
    messages = [Message(role="user", content="Refactor the project.")]
    i = 0
    while len(messages) * chunk < target_bytes:
        filler = f"{i:06d} " + "lorem ipsum dolor sit amet " * (chunk // 27)
        call = ToolCall(tool="Bash", id=f"c{i}", input={"command": f"cat f{i}.py"}, output=filler)
        messages.append(Message(role="assistant", content=None, tool_calls=[call]))
        messages.append(Message(role="assistant", content=filler))
        i += 1
    messages.append(Message(role="assistant", content="All done: 42 files refactored."))
    return messages


def test_ten_megabyte_transcript_keeps_the_payload_small(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = _big_transcript()
    transcript_bytes = sum(len(json.dumps(m.model_dump(mode="json"))) for m in messages)
    assert transcript_bytes > 10_000_000
    session = make_session(
        messages,
        trace_summary=TraceSummary(event_count=len(messages), tool_calls={"Bash": 1000}),
        token_usage=TokenUsage(input=1000, output=200),
        cost_usd=0.12,
    )
    # The capturing grader keeps its stdin in a folder of its own, writable in its sandbox.
    observed = tmp_path / "observed"
    observed.mkdir()
    monkeypatch.setenv(WRITABLE_VAR, str(observed))
    captured = observed / "stdin.json"
    command = ["bash", "-c", f"cat > {captured}; echo captured"]
    # By default the transcript goes by its Parquet file alone: no JSON copy is written.
    capture = make_case([{"type": "code-grader", "command": command}])
    assert run_code_grader(_spec(capture), capture, session).verdict == "pass"
    stdin = captured.read_bytes()
    assert len(stdin) < 16 * 1024, len(stdin)
    payload = json.loads(stdin)
    assert "messages" not in payload and payload["trace"] is None
    assert payload["messages_path"] == session.messages_path
    assert "messages_json_path" not in payload and "trace_path" not in payload
    assert not list(Path(session.messages_path).parent.glob("*.json"))
    assert payload["output"] == "All done: 42 files refactored."
    assert "output_path" not in payload
    # A grader that asks for JSON gets both files, and its case's other graders their paths.
    asks = make_case([{"type": "code-grader", "command": command, "messages_format": "json"}])
    assert run_code_grader(_spec(asks), asks, session).verdict == "pass"
    payload = json.loads(captured.read_bytes())
    assert Path(payload["messages_json_path"]).is_file() and Path(payload["trace_path"]).is_file()

    reader = make_case(
        [{"type": "code-grader", "command": python_grader(tmp_path, "read.py", HELPER_GRADER)}]
    )
    grade = run_code_grader(_spec(reader), reader, session)
    assert grade.verdict == "pass", grade.error
    assert grade.details is not None
    assert grade.details["count"] == len(messages)
    assert grade.details["last_role"] == "assistant"
    assert grade.details["last_content"] == "All done: 42 files refactored."
    assert grade.details["tool_calls"] == (len(messages) - 2) // 2


@pytest.mark.parametrize("file_backed_by", ["enricher", "judge"])
def test_large_output_goes_by_file(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path, file_backed_by: str
) -> None:
    answer = "x" * 60_000 + '\n"quoted" ünïcode end'
    fields: dict[str, Any] = {"output": answer}
    if file_backed_by == "enricher":
        output_file = tmp_path / "output.json"
        output_file.write_text(json.dumps(answer), encoding="utf-8")
        fields = {"output": None, "output_path": str(output_file)}
    session = make_session(**fields)
    case = make_case(
        [{"type": "code-grader", "command": python_grader(tmp_path, "read.py", HELPER_GRADER)}]
    )
    payload = build_grader_payload(case, session, _spec(case))
    assert payload["output"] is None
    assert json.loads(Path(payload["output_path"]).read_text(encoding="utf-8")) == answer
    assert len(json.dumps(payload)) < 16 * 1024

    grade = run_code_grader(_spec(case), case, session)
    assert grade.verdict == "pass", grade.error
    assert grade.details is not None
    assert grade.details["output_len"] == len(answer)
    assert grade.details["output_tail"] == answer[-20:]
    assert grade.details["inline_output_is_null"] is True


def test_output_inline_up_to_fifty_thousand_encoded_chars(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "code-grader", "command": "true"}])
    at_limit = "a" * (OUTPUT_INLINE_LIMIT - 2)  # plus the two quotes of its JSON encoding
    assert (
        build_grader_payload(case, make_session(output=at_limit), _spec(case))["output"] == at_limit
    )
    over = build_grader_payload(case, make_session(output=at_limit + "a"), _spec(case))
    assert over["output"] is None and over["output_path"]


def test_messages_json_copy_is_written_once(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "code-grader", "command": "true", "messages_format": "json"}])
    session = make_session([Message(role="assistant", content="Hello, world!")])
    ctx = GradingContext(case, session)
    payload = grader_payload(_spec(case), ctx)
    path = Path(payload["messages_json_path"])
    assert path == Path(session.messages_path).with_suffix(".json")
    # The copy is the payload's `messages`: AgentV's transcript, the input turn included.
    assert json.loads(path.read_text()) == payload["messages"]
    assert [m["content"] for m in payload["messages"]] == ["Say hello.", "Hello, world!"]
    # Within one trial the Parquet file is read once, whatever the number of graders.
    os.remove(session.messages_path)
    again = grader_payload(_spec(case), ctx)
    assert again["messages_json_path"] == payload["messages_json_path"]
    parquet_only = make_case([{"type": "code-grader", "command": "true"}])
    plain = build_grader_payload(parquet_only, make_session(), _spec(parquet_only))
    assert "messages_json_path" not in plain


@pytest.fixture
def payload(make_case: CaseFactory, make_session: SessionFactory) -> dict[str, Any]:
    """The payload of a case with a file input, snake-cased expected output and metadata, and a
    session with one timed tool call, a diff, cost and tokens."""
    case = make_case(
        [{"type": "code-grader", "command": "true", "threshold_lines": 3}],
        input=[
            {
                "role": "user",
                "content": [
                    {
                        "type": "file",
                        "value": "spec.md",
                        "path": "/abs/spec.md",
                        "text": "X" * 9000,
                    },
                    {"type": "text", "value": "Implement the spec."},
                ],
            }
        ],
        input_files=["/abs/spec.md"],
        expected_output=[{"role": "assistant", "content": {"answerValue": 42}}],
        metadata={"difficulty": "easy", "camelKey": {"innerKey": 1, "Bash": 2}},
    )
    messages = [
        Message(
            role="assistant",
            content="Reading.",
            tool_calls=[
                ToolCall(
                    tool="Read",
                    id="c1",
                    input={"filePath": "spec.md"},
                    output="X",
                    start_time_ms=1_700_000_000_000,
                    end_time_ms=1_700_000_000_250,
                )
            ],
        ),
        Message(role="assistant", content="Hello, world!"),
    ]
    session = make_session(
        messages,
        workspace_path="/tmp/ws",
        file_changes="diff --git a/x b/x",
        cost_usd=0.5,
        token_usage=TokenUsage(input=10, output=5),
    )
    return build_grader_payload(case, session, _spec(case))


def test_payload_fields(payload: dict[str, Any]) -> None:
    # AgentV's loader keeps the file's text, the path as written and the resolved path.
    assert payload["input"][0]["content"][0] == {
        "type": "file",
        "value": "spec.md",
        "path": "spec.md",
        "text": "X" * 9000,
        "resolved_path": "/abs/spec.md",
    }
    assert payload["input_files"] == ["/abs/spec.md"]
    # toSnakeCaseDeep: every nested key, except those starting upper-case.
    assert payload["expected_output"] == [{"role": "assistant", "content": {"answer_value": 42}}]
    assert payload["metadata"] == {"difficulty": "easy", "camel_key": {"inner_key": 1, "Bash": 2}}
    assert payload["config"] == {"threshold_lines": 3}


def test_payload_transcript_and_trace(payload: dict[str, Any]) -> None:
    # The transcript: the input as AgentV's prompt, then the agent's messages.
    assert [m["role"] for m in payload["messages"]] == ["user", "assistant", "assistant"]
    assert payload["messages"][0]["content"] == '<file: path="/abs/spec.md">\n\nImplement the spec.'
    assert payload["messages"][1]["tool_calls"] == [
        {
            "tool": "Read",
            "input": {"file_path": "spec.md"},
            "output": "X",
            "id": "c1",
            "start_time": "2023-11-14T22:13:20.000Z",
            "end_time": "2023-11-14T22:13:20.250Z",
        }
    ]
    assert payload["trace_summary"] == {
        "event_count": 1,
        "tool_calls": {"Read": 1},
        "error_count": 0,
        "tool_durations": {"Read": [250]},
        "llm_call_count": 2,
    }
    trace = payload["trace"]
    assert trace["messages"] == payload["messages"]
    assert [e["event_id"] for e in trace["events"]] == [
        "message-0",
        "message-1",
        "message-1-tool-0",
        "message-1-tool-0-result",
        "message-2",
        "final-response",
    ]
    assert trace["metadata"] == {"provider": "mock", "target": "mock", "eval_case_id": "case-1"}


def test_payload_time_span_and_session_figures(payload: dict[str, Any]) -> None:
    # A cli-style session: the span comes from the transcript's timestamps.
    assert (payload["start_time"], payload["end_time"]) == (
        "2023-11-14T22:13:20.000Z",
        "2023-11-14T22:13:20.250Z",
    )
    assert (payload["start_time_ms"], payload["end_time_ms"]) == (
        1_700_000_000_000,
        1_700_000_000_250,
    )
    expected = {
        "criteria": "Greets the user.",
        "token_usage": {"input": 10, "output": 5, "cached": 0},
        "cost_usd": 0.5,
        "duration_ms": 1200,
        "file_changes": "diff --git a/x b/x",
        "workspace_path": "/tmp/ws",
        "test_id": "case-1",
        "agent": "mock",
        "output": "Hello, world!",
        "answer": "Hello, world!",
    }
    assert {k: payload[k] for k in expected} == expected
    assert "output_path" not in payload and "trace_path" not in payload


def test_messages_and_trace_follow_the_output_threshold(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "code-grader", "command": "true"}])
    small = build_grader_payload(case, make_session(), _spec(case))
    assert isinstance(small["messages"], list) and isinstance(small["trace"], dict)
    assert "messages_json_path" not in small and "trace_path" not in small
    # One rule for every bulk field: compact JSON longer than 50,000 characters goes by path.
    body = "y" * 30_000
    medium = make_session([Message(role="assistant", content=body)])
    payload = build_grader_payload(case, medium, _spec(case))
    assert len(json.dumps(payload["messages"], separators=(",", ":"))) <= OUTPUT_INLINE_LIMIT
    assert payload["trace"] is None  # the trace repeats the answer: over the limit
    assert "trace_path" not in payload  # no grader of the case asks for JSON
    asks = make_case([{"type": "code-grader", "command": "true", "messages_format": "json"}])
    payload = build_grader_payload(asks, medium, _spec(asks))
    trace = json.loads(Path(payload["trace_path"]).read_text(encoding="utf-8"))
    assert trace["messages"] == payload["messages"]
    assert trace["events"][-1]["message"]["content"] == body


def test_a_composite_member_asking_for_json_gets_every_code_grader_of_the_case_the_files(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    long = make_session([Message(role="assistant", content="y" * 60_000)])
    member = {"name": "m", "type": "code-grader", "command": "true", "messages_format": "json"}
    plain = {"name": "p", "type": "code-grader", "command": "true"}
    composite = {
        "name": "c",
        "type": "composite",
        "assertions": [member],
        "aggregator": {"type": "weighted_average"},
    }
    case = make_case([plain, composite])
    payload = build_grader_payload(case, long, _spec(case))
    assert "messages" not in payload and payload["trace"] is None
    assert Path(payload["messages_json_path"]).is_file() and Path(payload["trace_path"]).is_file()
    alone = make_case([plain])
    payload = build_grader_payload(alone, long, _spec(alone))
    assert "messages_json_path" not in payload and "trace_path" not in payload


def test_the_threshold_counts_characters_not_utf8_bytes(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "code-grader", "command": "true", "messages_format": "json"}])
    body = "é" * 30_000  # 30,000 characters, 60,000 bytes in UTF-8
    payload = build_grader_payload(
        case, make_session([Message(role="assistant", content=body)]), _spec(case)
    )
    assert payload["messages"][-1]["content"] == body  # inline: under 50,000 characters
    # The trace holds the answer twice (its message and the final response): over the limit,
    # and its file is UTF-8 as written.
    trace = json.loads(Path(payload["trace_path"]).read_bytes().decode("utf-8"))
    assert trace["events"][-1]["message"]["content"] == body


def _with_file_contents(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with each file it names replaced by the file's bytes (two sessions' files
    have two paths)."""
    return {
        key: Path(value).read_bytes() if key.endswith("_path") and value else value
        for key, value in payload.items()
    }


@pytest.mark.parametrize(
    "output",
    [
        [{"role": "assistant", "content": "Hello, world!"}],
        # a whole conversation (it has a user turn): the transcript is the output alone
        [{"role": "user", "content": "Say hello."}, {"role": "assistant", "content": "Hi."}],
        # over the inline limit, so by file; the last assistant turn is empty
        [
            {"role": "tool", "content": "x" * 60_000},
            {"role": "assistant", "content": "done"},
            {"role": "assistant", "content": ""},
        ],
    ],
)
@pytest.mark.parametrize("json_files", [False, True])
def test_plain_messages_in_hand_give_the_payload_their_models_give(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    output: list[dict[str, Any]],
    json_files: bool,
) -> None:
    grader = {"type": "code-grader", "command": "true"}
    case = make_case([{**grader, "messages_format": "json"} if json_files else grader])
    plain = PlainMessages.of(output)
    assert plain is not None
    # As the enricher reads an output file of plain messages: straight to Arrow.
    (tmp_path / "output.json").write_text(json.dumps({"output": output}))
    in_arrow = read_plain_output(tmp_path / "output.json")
    assert in_arrow is not None and isinstance(in_arrow.messages, ArrowMessages)
    arrow = in_arrow.messages
    models = messages_from_wire(output)
    made = []
    for messages in (plain, arrow, models):
        session = make_session(models)
        ctx = GradingContext(case, session, messages=messages)
        made.append(_with_file_contents(grader_payload(_spec(case), ctx)))
    assert plain._models is None and arrow._models is None  # encoded without a model
    if "messages" not in made[1] and not json_files:  # by file: not a Python row made either
        assert arrow._rows is None
    assert made[0] == made[1] == made[2]
    assert made[0]["trace_summary"]["llm_call_count"] == sum(
        1 for m in output if m["role"] == "assistant"
    )

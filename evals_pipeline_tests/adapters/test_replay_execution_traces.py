"""AgentV's execution traces (`agentv.trace.v1`) as a replay source: lookup, AgentV's projection
of spans to messages, and the errors for files replay cannot use."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from evals_pipeline.adapters.execution_traces import (
    TraceEnvelope,
    TraceError,
    read_traces,
    replayed_output,
)
from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.errors import message_of
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases

T0 = 1_795_470_540_714_000_000


def span(
    span_id: str, parent: str | None, kind: str, start: int = 0, **attributes: Any
) -> dict[str, Any]:
    operation = {"chat": "chat", "tool": "execute_tool", "agent": "invoke_agent"}[kind]
    return {
        "trace_id": "t",
        "span_id": span_id,
        "parent_span_id": parent,
        "name": f"{operation} x",
        "kind": "INTERNAL",
        "start_time_unix_nano": str(T0 + start),
        "end_time_unix_nano": str(T0 + start + 2_000_000),
        "status": {"code": "OK"},
        "attributes": {"gen_ai.operation.name": operation, **attributes},
    }


def envelope(test_id: str, spans: list[dict[str, Any]], **eval_fields: Any) -> dict[str, Any]:
    return {
        "schema_version": "agentv.trace.v1",
        "artifact_id": f"execution-trace-{test_id}",
        "created_at": "2026-11-23T21:49:00.000Z",
        "eval": {"suite": "rp", "test_id": test_id, "target": "live", **eval_fields},
        "trace": {
            "format": "otlp_openinference_spans",
            "trace_id": "t",
            "root_span_id": "root",
            "spans": spans,
        },
        "source": {"kind": "agentv_run"},
        "capture": {"content": "full", "redaction_level": "none"},
    }


def answer(test_id: str, text: str, **eval_fields: Any) -> dict[str, Any]:
    root = span("root", None, "agent", **{"agentv.trace.cost_usd": 0.5})
    root["attributes"] |= {"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2}
    chat = span("c1", "root", "chat", **{"gen_ai.output.messages": text})
    return envelope(test_id, [root, chat], **eval_fields)


def project(root: Path, envelopes: list[dict[str, Any]]) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "traces.json").write_text(json.dumps(envelopes))  # a JSON array is read too
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        "targets: [{name: replayed, provider: replay, execution_traces: traces.json, "
        "source_target: live}]\n"
    )
    suite = root / "s.eval.yaml"
    suite.write_text(
        dedent(
            """\
            name: rp
            tests:
              - {id: a, input: x, assertions: [{type: contains, value: alpha}, {type: cost, budget: 1}]}
              - {id: b, input: x, assertions: [{type: contains, value: beta}]}
            """
        )
    )
    return suite


def grades(suite: Path, folder: Path) -> dict[str, Any]:
    cases = resolve_cases(load_suite(suite))
    sessions = enrich_runs(run_agents(cases, folder / "r", workers=1), folder / "s")
    return {g.test_id: g for g in grade_cases(cases, sessions, workers=1)}


def test_traces_are_graded_by_identity_and_a_missing_one_is_an_error(tmp_path: Path) -> None:
    envelopes = [
        answer("a", "alpha"),
        answer("a", "wrong: another target", target="other"),
        answer("a", "wrong: another attempt", attempt=1),
        # No source_target or suite in eval: the replay lookup key supplies them.
        {**answer("b", "beta"), "replay": {"lookup_key": {"suite": "rp"}}},
    ]
    del envelopes[3]["eval"]["suite"]
    found = grades(project(tmp_path / "p", envelopes), tmp_path / "out")
    assert (found["a"].score, found["a"].execution_status) == (1.0, "ok")
    assert found["a"].trials[0].cost_usd == 0.5
    assert found["b"].score == 1.0
    del envelopes[3]
    found = grades(project(tmp_path / "q", envelopes), tmp_path / "out2")
    assert found["b"].execution_status == "execution_error"
    assert "Execution trace replay lookup found no record for suite=rp" in (
        message_of(found["b"].error) or ""
    )


def test_duplicate_traces_are_an_error(tmp_path: Path) -> None:
    suite = project(
        tmp_path / "p", [answer("a", "alpha"), answer("a", "alpha"), answer("b", "beta")]
    )
    found = grades(suite, tmp_path / "out")
    assert "found 2 duplicate records" in (message_of(found["a"].error) or "")


def test_chat_spans_become_messages_in_agentv_span_order() -> None:
    spans = [
        span("root", None, "agent", **{"agentv.trace.duration_ms": 42}),
        span("zz-late-id", "root", "chat", **{"gen_ai.output.messages": "first by time"}),
        span(
            "tool-1",
            "zz-late-id",
            "tool",
            **{"gen_ai.tool.name": "Read", "gen_ai.tool.call.arguments": {"p": 1}},
        ),
        # Same start and end as the next chat span: AgentV orders them by span id.
        span("b-chat", "root", "chat", 5_000_000, **{"gen_ai.output.messages": "b"}),
        span("a-chat", "root", "chat", 5_000_000, **{"gen_ai.output.messages": "a"}),
        span("orphan-tool", None, "tool", 9_000_000, **{"tool.name": "Bash"}),
    ]
    spans[2]["status"] = {"code": "ERROR"}
    output = replayed_output(TraceEnvelope.model_validate(envelope("a", spans)), "f")
    assert [m["content"] for m in output["output"]] == ["first by time", "a", "b"]
    first = output["output"][0]
    assert first["tool_calls"] == [
        {
            "tool": "Read",
            "id": "tool-1",
            "input": {"p": 1},
            "status": "error",
            "start_time": "2026-11-23T21:49:00.714Z",
            "end_time": "2026-11-23T21:49:00.716Z",
            "duration_ms": 2.0,
        }
    ]
    # A tool span without a parent belongs to the root span, which is no chat span: dropped.
    assert all("tool_calls" not in m for m in output["output"][1:])
    assert output["duration_ms"] == 42
    assert "token_usage" not in output


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ([span("root", None, "agent")], "no chat spans found"),
        (
            [span("root", None, "agent"), span("c", "root", "chat")],
            "missing assistant output content",
        ),
    ],
)
def test_traces_replay_cannot_use_are_errors(spans: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(TraceError, match=message):
        replayed_output(TraceEnvelope.model_validate(envelope("a", spans)), "f")


def test_a_bad_trace_file_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = json.dumps(answer("a", "x"))
    path.write_text(good + "\n{not json\n")
    with pytest.raises(TraceError, match=r"Invalid execution trace JSONL at .*t\.jsonl:2"):
        read_traces(path)
    path.write_text(good + "\n" + json.dumps({**answer("b", "y"), "extra": 1}) + "\n")
    with pytest.raises(TraceError, match=r"t\.jsonl:2: `extra`: Extra inputs"):
        read_traces(path)
    path.write_text(json.dumps({**answer("a", "x"), "schema_version": "agentv.trace.v0"}))
    with pytest.raises(TraceError, match="`schema_version`"):
        read_traces(path)
    single = tmp_path / "single.json"  # one envelope, pretty-printed as outputs/trace.json is
    single.write_text(json.dumps(answer("a", "x"), indent=2))
    assert [e.eval.test_id for e, line in read_traces(single)] == ["a"]


def test_a_replay_target_needs_one_source_and_an_existing_file(tmp_path: Path) -> None:
    suite = project(tmp_path / "p", [answer("a", "alpha")])
    targets = tmp_path / "p/.agentv/targets.yaml"
    targets.write_text(
        "targets: [{name: replayed, provider: replay, execution_traces: traces.json}]\n"
    )
    with pytest.raises(
        SuiteError, match="a replay target with execution_traces needs source_target"
    ):
        resolve_cases(load_suite(suite))  # a target's problems are the run's
    targets.write_text(
        "targets: [{name: replayed, provider: replay, source_target: live, "
        "execution_traces: traces.json, fixtures: f.jsonl}]\n"
    )
    with pytest.raises(SuiteError, match="exactly one source"):
        resolve_cases(load_suite(suite))  # a target's problems are the run's
    targets.write_text(
        "targets: [{name: replayed, provider: replay, source_target: live, "
        "execution_traces: nope.jsonl}]\n"
    )
    with pytest.raises(SuiteError, match=r"replay execution_traces file 'nope\.jsonl' not found"):
        resolve_cases(load_suite(suite))  # a target's problems are the run's

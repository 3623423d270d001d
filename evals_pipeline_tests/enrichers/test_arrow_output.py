"""An output file of plain messages is read straight to Arrow: the same session, messages file
and figures as the Python parse gives, without a Python object per message; any other file is
left to the Python parse."""

from __future__ import annotations

import json
import subprocess
import tracemalloc
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from evals_pipeline.enrichers.arrow_output import read_plain_output
from evals_pipeline.enrichers.cli_output import parse_output_document
from evals_pipeline.enrichers.session import enriched_run
from evals_pipeline.models.messages import PlainMessages, final_answer
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.arrow_messages import ArrowMessages
from evals_pipeline.storage.messages import messages_table

PLAIN = [
    {"role": "user", "content": "fix it"},
    {"role": "tool", "content": 'é ✓ \u2028 \\ " \n\t 😀' * 3},
    {"role": "system", "content": ""},
    {"role": "assistant", "content": "fixed"},
    {"role": "assistant", "content": ""},  # an empty last turn is not the answer
]


def _written(tmp_path: Path, text: str | bytes, name: str = "output.json") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "document",
    [
        {"output": PLAIN},
        {"output": PLAIN, "token_usage": {"input": 7, "output": 3, "cached": 1}},
        {"text": "ignored", "output": PLAIN, "cost_usd": 0.1234567890123456789},
        {"output": PLAIN, "duration_ms": 1e3, "other": {"n": [1, 2.5, None]}},
        {"output": [{"content": "no answer", "role": "user"}]},  # keys in another order
        {"output": PLAIN, "cost_usd": 123456789012345678901234567890},  # past int64: a float
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_plain_output_in_arrow_is_what_the_python_parse_gives(
    tmp_path: Path, document: dict[str, Any], indent: int | None
) -> None:
    path = _written(tmp_path, json.dumps(document, indent=indent))
    in_arrow = read_plain_output(path)
    assert in_arrow is not None and isinstance(in_arrow.messages, ArrowMessages)
    parsed = parse_output_document(path.read_text(errors="replace"))
    assert isinstance(parsed.messages, PlainMessages)
    arrow, plain = in_arrow.messages, parsed.messages
    for field in ("token_usage", "cost_usd", "duration_ms", "warnings"):
        assert getattr(in_arrow, field) == getattr(parsed, field)
    # Every question asked of plain messages, answered from the columns without rows.
    assert len(arrow) == len(plain)
    assert arrow.assistant_turns() == plain.assistant_turns()
    assert arrow.text_chars() == plain.text_chars()
    assert final_answer(arrow) == final_answer(plain)
    assert arrow.has_role("user", "system") == plain.has_role("user", "system")
    assert arrow.first() == plain.first()
    before = [{"role": "user", "content": "Say hello."}]
    assert arrow.after(before).rows == plain.after(before).rows
    assert arrow._rows is None and arrow._models is None
    # The stored table, its preview in the footer included, is the one the rows make.
    table, as_is = messages_table(arrow)
    assert as_is and table.equals(messages_table(plain)[0])
    assert arrow.rows == plain.rows and list(arrow) == list(plain)


@pytest.mark.parametrize(
    "text",
    [
        b'\xef\xbb\xbf{"output": []}',  # a BOM: json.loads refuses it, so it is graded as text
        b'{"output": [{"role": "user", "content": "cut \\ud83d here"}]}',  # a lone surrogate
        b'{"output": [{"role": "user", "content": "bad \xff byte"}]}',  # invalid UTF-8
        b'{"output": [{"role": "user", "content": "a", "content": "b"}]}',  # a key twice
        b'{"output": [{"role": "robot", "content": "hi"}]}',  # an unknown role
        b'{"output": []}',  # no messages: a list, as the Python parse makes it
        b'{"output": [{"role": "user", "content": null}]}',
        b'{"output": [{"role": "user"}]}',
        b'{"output": [null]}',
        b'{"output": [{"role": "user", "content": "a"}, {"role": "user", "content": ["b"]}]}',
        b'{"output": [{"role": "user", "content": "a", "name": "n"}]}',
        b'{"output": [{"role": "user", "content": "a"}], "token_usage": {"input": true}}',
        b'{"output": [{"role": "user", "content": "a"}], "cost_usd": -1}',
        b'{"output": []}\n{"output": []}',  # two documents
        b'{"output": [{"role": "user", "content": "a"}]',  # truncated
        b'{"output": "a string"}',
        b'{"text": "no output"}',
        b"[]",
        b"",
        b"plain text",
    ],
)
def test_anything_else_is_left_to_the_python_parse(tmp_path: Path, text: bytes) -> None:
    assert read_plain_output(_written(tmp_path, text)) is None


def test_a_first_message_that_is_not_plain_is_not_parsed_in_arrow(tmp_path: Path) -> None:
    """The file's head shows it: a session of tool calls is not parsed twice."""
    calls = [{"tool": "Bash", "input": {"command": "ls"}}]
    messages = [{"role": "assistant", "content": "x", "tool_calls": calls}, *PLAIN]
    path = _written(tmp_path, json.dumps({"output": messages}))
    assert read_plain_output(path) is None


def _run(tmp_path: Path, path: Path) -> AgentRun:
    return AgentRun(case_key="c", agent="a", start_ms=0, end_ms=1, output_file_path=str(path))


def test_a_long_plain_session_is_built_without_a_python_copy_of_its_transcript(
    tmp_path: Path,
) -> None:
    """A 4 MB transcript: the Python parse held it about three times over (the text, a string
    and dict per message, the column joined and encoded for Arrow); now none of it is in Python
    objects, only in Arrow's buffers, and the messages handed to graders are those buffers."""
    steps = [{"role": "assistant", "content": f"step {i}: " + "x" * 1000} for i in range(4000)]
    document = {"output": [{"role": "user", "content": "go"}, *steps]}
    path = _written(tmp_path, json.dumps(document))
    size = path.stat().st_size
    warm = _written(tmp_path, json.dumps({"output": PLAIN}), "warm.json")
    enriched_run(_run(tmp_path, warm), tmp_path / "warm")  # modules loaded, caches filled
    tracemalloc.start()
    try:
        made = enriched_run(_run(tmp_path, path), tmp_path / "session")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The Python parse peaked at ~3.3x the file's size.
    assert peak < size / 4, f"{peak:,} bytes of Python objects for a {size:,}-byte transcript"
    messages = made.messages
    assert isinstance(messages, ArrowMessages) and messages._rows is None
    assert made.session.message_count == 4001
    assert made.session.output == steps[-1]["content"]
    assert made.session.trace_summary.llm_call_count == 4000
    stored = pq.read_table(made.session.messages_path)
    assert stored.column("content").to_pylist() == [m["content"] for m in document["output"]]


# --- through `evals-pipeline run` -----------------------------------------------------------

AGENT = """\
import json, sys
steps = [{"role": "assistant", "content": f"step {i}: " + "é✓ \\u2028" * 2000} for i in range(40)]
rest = [*steps, {"role": "tool", "content": "ok"}, {"role": "assistant", "content": "done"},
        {"role": "assistant", "content": ""}]
first = json.dumps("read the task")
if sys.argv[2] == "twice":  # a key twice: Arrow's reader refuses it, json.loads keeps the last
    head = '{"role": "assistant", "content": "dropped", "content": ' + first + '}'
else:
    head = '{"role": "assistant", "content": ' + first + '}'
text = '{"output": [' + ", ".join([head, *map(json.dumps, rest)]) + '], "cost_usd": 0.25}'
open(sys.argv[1], "w", encoding="utf-8").write(text)
"""

GRADER = """\
import json, sys
payload = json.load(sys.stdin)
same = {k: v for k, v in payload.items()
        if k not in ("agent", "workspace_path", "duration_ms") and not k.endswith("_path")}
sys.stderr.write(json.dumps(same, sort_keys=True))
print(json.dumps({"score": 1.0 if payload["output"] == "done" else 0.0}))
"""

SUITE = """\
name: plain
execution:
  targets: [once, twice]
targets:
  - name: once
    provider: cli
    command: python3 {EVAL_DIR}/agent.py {OUTPUT_FILE} once
  - name: twice
    provider: cli
    command: python3 {EVAL_DIR}/agent.py {OUTPUT_FILE} twice
tests:
  - id: long
    input: Work through it.
    assertions:
      - name: payload
        type: code-grader
        command: [python3, grader.py]
      - type: contains
        value: done
"""


def test_a_run_grades_a_session_read_in_arrow_as_one_read_by_json_loads(tmp_path: Path) -> None:
    """Two agents write the same 480 KB transcript, one so Arrow's reader takes it, one so it
    does not (a key twice in its first message): the same messages file, preview and figures,
    and their code grader gets the same payload."""
    from evals_pipeline.storage.preview import PREVIEW_KEY
    from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write

    project = tmp_path / "project"
    agent = write(project, "agent.py", AGENT)
    write(project, "grader.py", GRADER)
    for kind, in_arrow in (("once", True), ("twice", False)):  # the two paths are taken
        subprocess.run(["python3", str(agent), str(tmp_path / kind), kind], check=True)
        assert (read_plain_output(tmp_path / kind) is not None) is in_arrow
    done = cli("run", str(write(project, "plain.eval.yaml", SUITE)), home=tmp_path)
    assert done.code == 0, done.explain()
    assert {agent: row["passed"] for agent, row in table_rows(done.stdout).items()} == {
        "once": "1",
        "twice": "1",
    }, done.explain()
    graders = pq.read_table(printed_report_folder(done.stdout) / "graders.parquet").to_pylist()
    seen = {row["agent"]: row["stderr"] for row in graders if row["grader"] == "payload"}
    assert seen["once"] and seen["once"] == seen["twice"]
    assert json.loads(seen["once"])["cost_usd"] == 0.25
    files = {
        path.parent: pq.ParquetFile(path)
        for path in (tmp_path / "storage").rglob("messages.parquet")
    }
    assert len(files) == 2
    once, twice = files.values()
    assert once.read().equals(twice.read()) and once.read().num_rows == 44
    assert once.metadata.metadata[PREVIEW_KEY] == twice.metadata.metadata[PREVIEW_KEY]

"""evals_pipeline.grader, the helper grader authors import: run(), GraderInput, @grader."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.grader import GraderInput, Score, grader, run
from evals_pipeline.models.grade import AssertionOutcome, GraderResult
from evals_pipeline.models.messages import Message, ToolCall
from evals_pipeline.storage.messages import write_messages


def _run(fn: Any, payload: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = run(fn, io.StringIO(json.dumps(payload)), stdout, stderr)
    return code, json.loads(stdout.getvalue()) if stdout.getvalue() else None, stderr.getvalue()


PAYLOAD = {"output": "Hello", "criteria": "greets", "config": {"word": "Hello"}}


def test_bool_result() -> None:
    def greets(inp: GraderInput) -> bool:
        return inp.config["word"] in (inp.output or "")

    assert _run(greets, PAYLOAD) == (
        0,
        {"score": 1.0, "assertions": [{"text": "greets", "passed": True}], "details": None},
        "",
    )
    code, result, _ = _run(greets, {**PAYLOAD, "output": "Bye"})
    assert code == 0 and result is not None and result["score"] == 0.0


def test_number_score_dict_and_model_results() -> None:
    assert _run(lambda inp: 0.25, PAYLOAD)[1] == {"score": 0.25, "assertions": [], "details": None}
    score = Score(0.5, [("a", True), ("b", False, "why")], {"k": 1})
    assert _run(lambda inp: score, PAYLOAD)[1] == {
        "score": 0.5,
        "assertions": [
            {"text": "a", "passed": True},
            {"text": "b", "passed": False, "evidence": "why"},
        ],
        "details": {"k": 1},
    }
    as_dict = {"score": 1, "assertions": [{"text": "x", "passed": True}], "extra": "dropped"}
    assert _run(lambda inp: as_dict, PAYLOAD)[1] == {
        "score": 1,
        "assertions": [{"text": "x", "passed": True}],
    }
    model = GraderResult(
        name="n",
        type="t",
        score=0.9,
        verdict="pass",
        assertions=[AssertionOutcome(text="ok", passed=True)],
    )
    code, result, _ = _run(lambda inp: model, PAYLOAD)
    assert code == 0 and result is not None
    assert (result["score"], result["assertions"][0]["text"]) == (0.9, "ok")


def test_exception_exits_1_with_traceback() -> None:
    def broken(inp: GraderInput) -> float:
        raise RuntimeError("grader bug")

    code, result, stderr = _run(broken, PAYLOAD)
    assert (code, result) == (1, None)
    assert "Traceback" in stderr and "RuntimeError: grader bug" in stderr
    code, result, stderr = _run(lambda inp: "not a score", PAYLOAD)
    assert code == 1 and "TypeError" in stderr


def test_fields_as_attributes() -> None:
    inp = GraderInput({**PAYLOAD, "workspace_path": "/tmp/ws", "custom": 7})
    assert (inp.criteria, inp.custom, inp.test_id) == ("greets", 7, None)
    assert inp.workspace_path == Path("/tmp/ws")
    assert GraderInput({}).workspace_path is None
    assert GraderInput({}).config == {}
    assert inp.raw["custom"] == 7
    with pytest.raises(AttributeError):
        _ = inp.no_such_field


def test_output_loads_lazily_from_output_path_and_caches(tmp_path: Path) -> None:
    answer = "y" * 70_000
    path = tmp_path / "output.json"
    path.write_text(json.dumps(answer))
    inp = GraderInput({"output": None, "output_path": str(path)})
    assert inp.output == answer
    path.unlink()
    assert inp.output == answer


def test_messages_load_lazily_from_parquet_and_cache(tmp_path: Path) -> None:
    messages = [
        Message(role="user", content="go"),
        Message(
            role="assistant",
            content="listing",
            tool_calls=[ToolCall(tool="Bash", input={"command": "ls"})],
        ),
        Message(role="assistant", content={"answer": 42}),
    ]
    path = write_messages(messages, tmp_path / "m.parquet")
    inp = GraderInput({"messages": None, "messages_path": str(path)})
    assert inp.messages == messages
    path.unlink()
    assert inp.messages == messages
    agentv_style = GraderInput({"messages": [{"role": "user", "content": "inline"}]})
    assert agentv_style.messages == [Message(role="user", content="inline")]


def test_non_main_function_is_returned_unchanged() -> None:
    def check(inp: GraderInput) -> float:
        return 1.0

    assert grader(check) is check


def test_decorated_script_grades_and_exits(tmp_path: Path) -> None:
    script = tmp_path / "grader.py"
    script.write_text(
        "from evals_pipeline.grader import grader\n"
        "@grader\n"
        "def check(inp):\n"
        "    return 'Hello' in inp.output\n"
        "raise SystemExit('not reached: the decorator exits')\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)],
        input=json.dumps(PAYLOAD),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["score"] == 1.0


def test_import_is_light() -> None:
    code = (
        "import sys, evals_pipeline.grader\n"
        "print(sorted(m for m in ('dagster', 'pandas', 'pyarrow', 'pydantic') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]"

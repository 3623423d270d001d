"""The grader examples in docs/grader-contract.md run as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.models.messages import Message, ToolCall
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory

DOC = Path(__file__).resolve().parents[2] / "docs" / "grader-contract.md"


def _example(first_line: str) -> str:
    """The fenced code block of the doc that starts with `first_line`."""
    blocks = re.findall(r"```(?:python|bash)\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    matching = [b for b in blocks if first_line in b.splitlines()[:2]]
    assert len(matching) == 1, f"{first_line!r} in {DOC}"
    return matching[0]


@pytest.mark.parametrize(
    ("script", "command"),
    [
        ("check_hello.py", [sys.executable]),
        ("check_hello.sh", ["bash"]),
    ],
)
@pytest.mark.parametrize("agent_did_it", [True, False])
def test_doc_examples(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    script: str,
    command: list[str],
    agent_did_it: bool,
) -> None:
    graders = tmp_path / "graders"
    graders.mkdir(exist_ok=True)
    (graders / script).write_text(_example(f"# graders/{script}"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    answer = "I created hello.py; it prints Hello." if agent_did_it else "Done."
    if agent_did_it:
        (workspace / "hello.py").write_text("print('Hello')\n")
    messages = [
        Message(role="user", content="Create hello.py and run it."),
        Message(
            role="assistant",
            content="Running it.",
            tool_calls=[ToolCall(tool="Bash", input={"command": "python hello.py"})],
        ),
        Message(role="assistant", content=answer),
    ]
    case = make_case([{"type": "code-grader", "command": [*command, f"graders/{script}"]}])
    trial = grade_trial(case, make_session(messages, workspace_path=str(workspace)))
    grade = trial.graders[0]
    assert grade.verdict != "error", (grade.error, grade.stderr)
    if agent_did_it:
        assert (grade.score, trial.verdict) == (1.0, "pass")
    else:
        assert grade.score is not None and grade.score < 0.8

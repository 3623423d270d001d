"""Code graders as real subprocesses: the stdout / exit-code contract and every way to fail."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.grading import run_code_grader
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import GraderResult
from evals_pipeline.sandbox.detection import SANDBOX_VAR
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, python_grader


@pytest.fixture
def sandbox_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests that watch a grader through a file it writes beside the suite (or through the
    host pids it lists), which the sandbox forbids (or hides); test_sandbox.py covers it."""
    monkeypatch.setenv(SANDBOX_VAR, "off")


def _run(
    make_case: CaseFactory,
    make_session: SessionFactory,
    command: str | list[str],
    **spec: Any,
) -> GraderResult:
    assertion = {"type": "code-grader", "command": command, **spec}
    case = make_case([assertion])
    session = make_session(**spec.pop("session", {}))
    assert isinstance(case.assertions[0], CodeGraderAssertion)
    return run_code_grader(case.assertions[0], case, session)


def test_json_result(make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path) -> None:
    command = python_grader(
        tmp_path,
        "grade.py",
        """
import json, sys
payload = json.load(sys.stdin)
ok = "Hello" in payload["output"]
print(json.dumps({
    "score": 0.75,
    "assertions": [
        {"text": "greets", "passed": ok, "evidence": payload["output"]},
        {"text": "structured evidence", "passed": False, "evidence": {"n": 1}},
        {"passed": True},
        "not an object",
    ],
    "details": {"criteria": payload["criteria"]},
}))
""",
    )
    grade = _run(make_case, make_session, command, name="greeting", weight=2)
    assert (grade.name, grade.type, grade.weight) == ("greeting", "code-grader", 2)
    assert (grade.score, grade.verdict) == (0.75, "fail")
    assert [(a.text, a.passed, a.evidence) for a in grade.assertions] == [
        ("greets", True, "Hello, world!"),
        ("structured evidence", False, '{"n": 1}'),
    ]
    assert grade.details == {"criteria": "Greets the user."}
    assert grade.error is None
    assert grade.start_ms is not None and grade.duration_ms >= 0


@pytest.mark.parametrize(
    ("stdout", "score"),
    [
        ('{"assertions": [{"text": "a", "passed": true}, {"text": "b", "passed": false}]}', 0.5),
        ("{}", 0.0),
        ('{"score": 1.7}', 1.0),
        ('{"score": -2}', 0.0),
        ('{"score": NaN}', 0.0),
        ('{"score": Infinity}', 0.0),
    ],
)
def test_score_is_derived_and_clamped(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    stdout: str,
    score: float,
) -> None:
    command = python_grader(tmp_path, "g.py", f"print({stdout!r})")
    assert _run(make_case, make_session, command).score == score


def test_plain_text_exit_0_passes(make_case: CaseFactory, make_session: SessionFactory) -> None:
    grade = _run(make_case, make_session, "echo '  all good  '")
    assert (grade.score, grade.verdict) == (1.0, "pass")
    assert grade.assertions[0].text == "all good"
    silent = _run(make_case, make_session, ["true"])
    assert silent.assertions[0].text == "exit 0"


def test_plain_text_exit_1_fails(make_case: CaseFactory, make_session: SessionFactory) -> None:
    grade = _run(make_case, make_session, "echo 'hello.py missing'; exit 1")
    assert (grade.score, grade.verdict) == (0.0, "fail")
    assert grade.assertions[0].text == "hello.py missing"
    silent = _run(make_case, make_session, "exit 3")
    assert silent.assertions[0].text == "exit 3"


def test_crash_with_stderr_is_an_error(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    command = python_grader(tmp_path, "crash.py", "raise ValueError('grader bug')")
    grade = _run(make_case, make_session, command)
    assert grade.verdict == "error"
    assert grade.score is None
    assert message_of(grade.error) == "exited with code 1: ValueError: grader bug"
    assert "Traceback" in (grade.stderr or "")


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ("print('{not json')", "stdout is not valid JSON"),
        ("print('[1, 2]')", "stdout is JSON but not an object"),
        ('print(\'{"score": "high"}\')', "score is not a number"),
        ("print('{\"score\": true}')", "score is not a number"),
        ("print('{\"score\": 1}'); raise SystemExit(2)", "exited with code 2"),
    ],
)
def test_garbage_output_is_an_error(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    script: str,
    reason: str,
) -> None:
    grade = _run(make_case, make_session, python_grader(tmp_path, "g.py", script))
    assert grade.verdict == "error"
    assert grade.score is None
    assert (message_of(grade.error) or "").startswith(reason), message_of(grade.error)
    assert grade.error is not None
    assert (grade.error.stage, grade.error.kind) == (
        "grade",
        "exit_code" if reason.startswith("exited") else "parse",
    )


def test_spawn_error(make_case: CaseFactory, make_session: SessionFactory) -> None:
    grade = _run(make_case, make_session, ["/nonexistent/grader"])
    assert grade.verdict == "error"
    assert "cannot start" in (message_of(grade.error) or "")
    assert grade.error is not None and grade.error.kind == "crashed"


def _gone(pid: int) -> bool:
    """True when no live process has this pid (an unreaped zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.usefixtures("sandbox_off")
def test_hang_past_timeout_kills_the_grader_and_its_children(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    script = tmp_path / "hang.sh"
    script.write_text(f"echo $$ > {pids}\nsleep 300 &\necho $! >> {pids}\nsleep 300\n")
    started = time.monotonic()
    grade = _run(make_case, make_session, ["bash", str(script)], timeout_seconds=1)
    assert time.monotonic() - started < 10
    assert grade.verdict == "error"
    assert message_of(grade.error) == "timed out after 1 s"
    assert grade.error is not None and grade.error.kind == "timeout"
    recorded = [int(line) for line in pids.read_text().split()]
    assert len(recorded) == 2
    deadline = time.monotonic() + 5
    while not all(_gone(pid) for pid in recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(pid) for pid in recorded)


@pytest.mark.usefixtures("sandbox_off")
def test_grader_env_has_no_secrets(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret-value")
    seen = tmp_path / "env.json"
    command = python_grader(
        tmp_path,
        "env.py",
        f"import json, os\nopen({str(seen)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
        "print('ok')",
    )
    workspace = tmp_path / "ws"
    workspace.mkdir()
    grade = _run(make_case, make_session, command, session={"workspace_path": str(workspace)})
    assert grade.verdict == "pass"
    env = json.loads(seen.read_text())
    assert "OPENAI_API_KEY" not in env and "ANTHROPIC_API_KEY" not in env
    assert not any("secret-value" in value for value in env.values())
    assert env["AGENTV_WORKSPACE_PATH"] == str(workspace)
    assert env["PATH"].split(os.pathsep)[0] == str(Path(sys.executable).parent)


def test_cwd_is_the_eval_folder_or_the_given_one(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    (tmp_path / "graders").mkdir()
    assert _run(make_case, make_session, "pwd").assertions[0].text == str(tmp_path)
    nested = _run(make_case, make_session, "pwd", cwd="graders")
    assert nested.assertions[0].text == str(tmp_path / "graders")


@pytest.mark.usefixtures("sandbox_off")
def test_stdin_is_pretty_printed_json_with_config(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    captured = tmp_path / "stdin.json"
    grade = _run(make_case, make_session, f"cat > {captured}; echo ok", expect_file="hello.py")
    assert grade.verdict == "pass"
    text = captured.read_text()
    assert text.startswith('{\n  "criteria": ')
    assert json.loads(text)["config"] == {"expect_file": "hello.py"}


def test_negated_code_grader(make_case: CaseFactory, make_session: SessionFactory) -> None:
    grade = _run(
        make_case,
        make_session,
        """echo '{"score": 0.9, "assertions": [{"text": "t", "passed": true, "evidence": "e"}]}'""",
        negate=True,
    )
    assert grade.score == pytest.approx(0.1)
    assert grade.verdict == "fail"
    assert (grade.assertions[0].passed, grade.assertions[0].evidence) == (False, "[Negated] e")


def test_a_grader_of_a_docker_workspace_is_an_error(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case(
        [{"type": "code-grader", "command": ["true"]}],
        workspace={"docker_image": "python:3.12"},
    )
    assert isinstance(case.assertions[0], CodeGraderAssertion)
    grade = run_code_grader(case.assertions[0], case, make_session())
    assert grade.verdict == "error"
    assert grade.error is not None and "workspace.docker (python:3.12)" in message_of(grade.error)


def test_a_missing_grader_script_is_the_case_error_with_stderr(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    grade = _run(make_case, make_session, [sys.executable, "graders/missing.py"])
    assert grade.verdict == "error"
    assert grade.error is not None and "missing.py" in (
        message_of(grade.error) + (grade.stderr or "")
    )


@pytest.mark.parametrize("sandbox", ["on", "off"])
def test_a_grader_gets_a_private_home_removed_after(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    if sandbox == "off":
        monkeypatch.setenv(SANDBOX_VAR, "off")
    command = python_grader(
        tmp_path,
        "grade.py",
        """
import json, os
home = os.environ["HOME"]
open(os.path.join(home, "left-by-grader"), "w").write("x")
print(json.dumps({"score": 1, "details": {"home": home, "entries": os.listdir(home)}}))
""",
    )
    case = make_case([{"type": "code-grader", "command": command}])
    spec = case.assertions[0]
    assert isinstance(spec, CodeGraderAssertion)
    grade = run_code_grader(spec, case, make_session())
    assert grade.error is None and grade.score == 1
    assert grade.details is not None
    home = grade.details["home"]
    assert home != os.environ["HOME"]
    assert grade.details["entries"] == ["left-by-grader"]  # fresh and empty before
    assert not Path(home).exists()

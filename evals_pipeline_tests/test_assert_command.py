"""`evals-pipeline assert`: one grader without an agent, beside the real `agentv eval assert`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NODE_BIN = REPO / "conformance" / "node_modules" / ".bin"
EVALS_PIPELINE = Path(sys.executable).with_name("evals-pipeline")
needs_agentv = pytest.mark.skipif(not (NODE_BIN / "agentv").exists(), reason="needs make agentv")

# A grader as AgentV's docs write one for `agentv eval assert`: plain JS run by `bun run`.
DUMP_GRADER = """
import { readFileSync, writeFileSync } from 'node:fs';
const raw = readFileSync(0, 'utf8');
writeFileSync(process.env.HOME + '/stdin.json', raw);
const p = JSON.parse(raw);
const ok = p.output.includes('42');
console.log(JSON.stringify({ score: ok ? 1 : 0.25, assertions: [{ text: 'says 42', passed: ok }] }));
"""

PY_GRADER = """
from evals_pipeline.grader import GraderInput, Score, grader


@grader
def check(inp: GraderInput) -> Score:
    words = len(inp.output.split())
    said = "42" in inp.answer
    return Score(0.5 * said + 0.5 * (words <= 5), [("says 42", said), ("at most 5 words", words <= 5)],
                 {"words": words, "asked": inp.input[0]["content"]})
"""

SUITE = """
name: assert-check
execution:
  targets: [echo]
tests:
  - id: answer
    criteria: says 42
    input: What is six times seven?
    assertions:
      - type: contains
        value: "42"
      - name: exact
        type: equals
        value: "42"
"""


def _run(command: list[str], cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.pathsep.join([str(NODE_BIN), str(EVALS_PIPELINE.parent), os.environ["PATH"]]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "DAGSTER_HOME": str(home / "dagster"),
    }
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with graders in .agentv/graders/, worked in from a subfolder."""
    graders = tmp_path / ".agentv" / "graders"
    graders.mkdir(parents=True)
    (graders / "dump.mjs").write_text(DUMP_GRADER)
    (graders / "brief.py").write_text(PY_GRADER)
    (tmp_path / "home").mkdir()
    (tmp_path / "work" / "deep").mkdir(parents=True)
    return tmp_path


def _ours(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([str(EVALS_PIPELINE), "assert", *args], project / "work" / "deep", project / "home")


@needs_agentv
@pytest.mark.parametrize(("answer", "exit_code"), [("The answer is 42", 0), ("No idea", 1)])
def test_named_grader_gets_agentvs_stdin_and_exit_code(
    project: Path, answer: str, exit_code: int
) -> None:
    args = ["dump", "--agent-output", answer, "--agent-input", "What is six times seven?"]
    theirs = _run(
        [str(NODE_BIN / "agentv"), "eval", "assert", *args],
        project / "work" / "deep",
        project / "home",
    )
    dumped = project / "home" / "stdin.json"
    their_stdin = json.loads(dumped.read_text())
    dumped.unlink()
    ours = _ours(project, *args, "--json")
    our_stdin = json.loads(dumped.read_text())
    assert our_stdin == their_stdin
    assert (theirs.returncode, ours.returncode) == (exit_code, exit_code), ours.stderr
    assert json.loads(ours.stdout) == json.loads(theirs.stdout)


def test_python_grader_report_and_exit_codes(project: Path) -> None:
    done = _ours(project, "brief", "--agent-output", "42.", "--agent-input", "Six times seven?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "brief: pass (score 1; pass at >= 0.5)",
        "hits:",
        "  ✓ says 42",
        "  ✓ at most 5 words",
        'details: {"words": 1, "asked": "Six times seven?"}',
    ]
    result = project / "result.json"
    result.write_text(json.dumps({"output": "I would rather not say what it is", "input": "?"}))
    done = _ours(project, "brief", "--file", str(result))
    assert done.returncode == 1
    assert done.stdout.splitlines()[:4] == [
        "brief: fail (score 0; pass at >= 0.5)",
        "misses:",
        "  ✗ says 42",
        "  ✗ at most 5 words",
    ]


def test_bad_input_exits_2(project: Path) -> None:
    missing = _ours(project, "nope", "--agent-output", "x")
    assert missing.returncode == 2 and "grader 'nope' not found" in missing.stderr
    assert _ours(project, "../x", "--agent-output", "x").returncode == 2
    assert _ours(project, "brief").returncode == 2  # no answer given
    broken = project / "broken.json"
    broken.write_text("{oops")
    done = _ours(project, "brief", "--file", str(broken))
    assert done.returncode == 2 and f"{broken}:1:2" in done.stderr


@needs_agentv
def test_suite_assertion_scores_as_agentv_eval(project: Path) -> None:
    """A deterministic assertion of a suite, on a given answer, scores what `agentv eval` gives
    the same answer from an agent."""
    suite = project / "assert-check.eval.yaml"
    suite.write_text(SUITE)
    (project / "echo.py").write_text(
        "import sys\nopen(sys.argv[1], 'w').write('It is 42, I think')\n"
    )
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: echo\n    provider: cli\n    command: python3 echo.py {OUTPUT_FILE}\n"
    )
    out = project / "agentv-out"
    _run(
        [str(NODE_BIN / "agentv"), "eval", str(suite), "--output", str(out)],
        project,
        project / "home",
    )
    row = json.loads((out / "index.jsonl").read_text().splitlines()[0])
    theirs = {s["name"]: s["score"] for s in row["scores"]}
    ours = {}
    for which in ("contains", "exact"):
        done = _ours(
            project, which, "--suite", str(suite), "--test", "answer",
            "--agent-output", "It is 42, I think", "--json",
        )  # fmt: skip
        assert done.returncode == (0 if which == "contains" else 1), done.stderr
        ours[which] = json.loads(done.stdout)["score"]
    assert list(theirs.values()) == list(ours.values()) == [1, 0]
    several = _ours(project, "--suite", str(suite), "--test", "answer", "--agent-output", "42")
    assert several.returncode == 2 and "has 2 assertions" in several.stderr


SESSION_GRADER = """
from evals_pipeline.grader import GraderInput, Score, grader


@grader
def check(inp: GraderInput) -> Score:
    tools = [call.tool for message in inp.messages for call in message.tool_calls]
    return Score(1.0 if "Bash" in tools else 0.0, [("ran Bash", "Bash" in tools)], {"tools": tools})
"""


def test_recorded_session(project: Path) -> None:
    """A claude stream-json recording graded by name, with the payload `run` sends."""
    (project / ".agentv" / "graders" / "ran_bash.py").write_text(SESSION_GRADER)
    stream = REPO / "evals_pipeline_tests" / "fixtures" / "transcripts" / "claude.jsonl"
    done = _ours(project, "ran_bash", "--session", str(stream), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["details"] == {"tools": ["Write", "Bash"]}

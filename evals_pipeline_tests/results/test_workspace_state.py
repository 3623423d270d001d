"""A grader that reads the workspace is re-graded from the workspace's kept final state after
clean-up deleted it, through the real `evals-pipeline run`: a grader edit, a new assertion and a
new threshold run no agent and give a fresh run's verdict; a state over the size cap is not
kept, and the agent runs again with a line saying why. The agent counts its own invocations."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write

# Each invocation appends a line to log/invocations.log and writes answer.txt ("done"), a
# symlink to it and a file holding a secret in its workspace (its working folder).
AGENT = """\
import fcntl, json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "log", "invocations.log"), "a") as log:
    fcntl.flock(log, fcntl.LOCK_EX)
    log.write("ran\\n")
open("answer.txt", "w").write("done")
open("secret.txt", "w").write("key s3cr3t-value-xyz")
os.symlink("answer.txt", "link.txt")
open(args["--output"], "w").write(json.dumps({"text": "ok"}))
"""

# Scores 1 when the workspace's file (named by argv[1]) holds what argv[2] says, else 0.
CHECK = """\
import json, os, sys
ws = json.load(sys.stdin)["workspace_path"]
path = os.path.join(ws, sys.argv[1])
text = open(path).read() if os.path.exists(path) else None
print(json.dumps({"score": 1 if text == sys.argv[2] else 0}))
"""

SUITE = """\
name: kept
workspace: {template: ./template, cleanup: always}
execution:
  workers: 1
  targets: [a]
targets:
  - name: a
    provider: cli
    command: python3 {EVAL_DIR}/agent.py --output {OUTPUT_FILE}
tests:
  - id: only
    input: write the answer
    assertions:
      - {type: code-grader, command: python3 check.py answer.txt done}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The suite, its agent and grader; the agent's log folder is writable in the sandbox, and
    the value it writes to secret.txt is a secret of the runner's environment."""
    monkeypatch.setenv("STATE_TEST_TOKEN", "s3cr3t-value-xyz")
    folder = tmp_path / "project"
    (folder / "log").mkdir(parents=True)
    monkeypatch.setenv(WRITABLE_VAR, str(folder / "log"))
    (folder / "agent.py").write_text(AGENT)
    (folder / "check.py").write_text(CHECK)
    (folder / "template").mkdir()
    (folder / "template" / "readme.txt").write_text("the task\n" * 200)
    write(folder, "kept.eval.yaml", SUITE)
    return folder


def invocations(project: Path) -> int:
    log = project / "log" / "invocations.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def run(project: Path, *args: str) -> tuple[float, bool, str]:
    """The one case's score and whether it passed, and the run's output."""
    done = cli("run", str(project / "kept.eval.yaml"), *args, home=project.parent)
    assert done.code in (0, 1), done.explain()
    lines = (printed_report_folder(done.stdout) / "results.jsonl").read_text().splitlines()
    (row,) = map(json.loads, lines)
    passed = table_rows(done.stdout)["a"]["passed"] == "1"
    return row["score"], passed, done.stdout + done.stderr


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def states(project: Path) -> list[Path]:
    return sorted((project.parent / "storage").rglob("workspace-*.tar.gz"))


def test_grader_changes_re_grade_a_deleted_workspace_from_its_kept_state(project: Path) -> None:
    suite = project / "kept.eval.yaml"
    assert run(project)[:2] == (1.0, True)
    assert invocations(project) == 1
    assert not list((project.parent / "storage").rglob("answer.txt")), "workspace not deleted"
    # A grader edit: the workspace's answer is not "nope".
    edit(suite, "answer.txt done}", "answer.txt nope}")
    score, passed, output = run(project)
    assert (score, passed) == (0.0, False), output
    assert invocations(project) == 1, "a grader edit ran the agent"
    (state,) = states(project)
    assert state.stat().st_mode & 0o077 == 0, "the kept state is readable by others"
    with tarfile.open(state) as tar:  # scrubbed as every stored file is
        assert ".git" not in tar.getnames()  # the pointer into the deleted baseline
        assert tar.getmember("link.txt").issym()
        secret = tar.extractfile("secret.txt")
        assert secret is not None and secret.read() == b"key [REDACTED:STATE_TEST_TOKEN]"
    assert run(project, "--no-cache")[:2] == (0.0, False)
    assert invocations(project) == 2

    # A new assertion reading the symlink the agent left (kept as a symlink).
    edit(
        suite,
        "answer.txt nope}\n",
        "answer.txt nope}\n      - {type: code-grader, command: python3 check.py link.txt done}\n",
    )
    score, passed, output = run(project)
    assert (score, passed) == (0.5, False), output
    assert invocations(project) == 2, "a new assertion ran the agent"
    assert run(project, "--no-cache")[:2] == (0.5, False)
    assert invocations(project) == 3

    # A new threshold.
    edit(
        suite, "input: write the answer", "input: write the answer\n    execution: {threshold: 0.5}"
    )
    score, passed, output = run(project)
    assert (score, passed) == (0.5, True), output
    assert invocations(project) == 3, "a new threshold ran the agent"
    assert run(project, "--no-cache")[:2] == (0.5, True)
    assert invocations(project) == 4
    # Restored workspaces are deleted after grading, as the live ones are.
    assert not list((project.parent / "storage").rglob("answer.txt"))


def test_a_state_over_the_cap_is_not_kept_and_the_agent_runs_again_saying_why(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB", "0.001"
    )  # about 1 KB: the template's readme is 1.8 KB
    assert run(project)[:2] == (1.0, True)
    assert invocations(project) == 1
    assert states(project) == []

    edit(project / "kept.eval.yaml", "answer.txt done}", "answer.txt nope}")
    score, passed, output = run(project)
    assert (score, passed) == (0.0, False)
    assert invocations(project) == 2
    assert (
        "ran again: a grader reads its deleted workspace, whose final state was not kept: "
        "its files take 1.8 KB, over the 1.0 KB cap (EVALS_PIPELINE_WORKSPACE_STATE_MAX_MB)"
    ) in output, output

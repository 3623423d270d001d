"""The result cache never serves a stale verdict, through the real `evals-pipeline run`: a change
to how trials add up re-aggregates the stored trials, a grader or threshold change re-grades the
stored sessions, a change to what the agent sees runs it again; the agent counts its own
invocations, so "ran no agent" is observed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline_tests.test_cli import cli, printed_report_folder, table_rows, write

# Each invocation appends a line to log/invocations.log and answers "done" on odd invocations,
# "nope" on even ones, at a cost of $1: with one worker, trial 0 passes and trial 1 fails.
AGENT = """\
import fcntl, json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "log", "invocations.log"), "a+") as log:
    fcntl.flock(log, fcntl.LOCK_EX)
    log.seek(0)
    n = len(log.read().splitlines()) + 1
    log.write(f"{n}\\n")
answer = {"text": "done" if n % 2 else "nope", "cost_usd": 1.0}
open(args["--output"], "w").write(json.dumps(answer))
"""


@pytest.fixture(autouse=True)
def _agents_may_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's log folder is writable in the sandbox (the suite's own folder is not)."""
    (tmp_path / "project" / "log").mkdir(parents=True)
    monkeypatch.setenv(WRITABLE_VAR, str(tmp_path / "project" / "log"))


SUITE = """\
name: stale
execution:
  workers: 1
  targets: [a]
  trials: {count: 2, strategy: pass_at_k}
targets:
  - name: a
    provider: cli
    command: python3 {EVAL_DIR}/agent.py --output {OUTPUT_FILE}
tests:
  - id: only
    input: say done
    assertions: [{type: contains, value: done}]
"""


def invocations(project: Path) -> int:
    log = project / "log" / "invocations.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def scores(stdout: str) -> dict[str, float]:
    """Each case's score in the run's results.jsonl, by test id."""
    lines = (printed_report_folder(stdout) / "results.jsonl").read_text().splitlines()
    return {row["test_id"]: row["score"] for row in map(json.loads, lines)}


def run(path: Path, home: Path, *args: str) -> dict[str, float]:
    done = cli("run", str(path), *args, home=home)
    assert done.code in (0, 1), done.explain()
    return scores(done.stdout)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_a_changed_trials_strategy_gives_a_fresh_runs_verdict_without_running_an_agent(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "agent.py").write_text(AGENT)
    path = write(project, "stale.eval.yaml", SUITE)

    assert run(path, tmp_path) == {"only": 1.0}  # pass_at_k: the best of "done" and "nope"
    assert invocations(project) == 2

    edit(path, "strategy: pass_at_k", "strategy: mean")
    done = cli("run", str(path), home=tmp_path)
    assert done.code == 0, done.explain()
    assert scores(done.stdout) == {"only": 0.5}
    assert invocations(project) == 2, "a change of strategy ran the agent"
    # Its trials' grades were the stored ones: no grader ran either.
    assert "1 of 1 results reused" in done.stdout, done.explain()

    # A fresh run (the cache off) agrees with the re-aggregated verdict.
    assert run(path, tmp_path, "--no-cache") == {"only": 0.5}
    assert invocations(project) == 4


def test_a_cost_limit_re_aggregates_the_stored_trials(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "agent.py").write_text(AGENT)
    path = write(project, "stale.eval.yaml", SUITE.replace("strategy: pass_at_k", "strategy: mean"))
    assert run(path, tmp_path) == {"only": 0.5}
    assert invocations(project) == 2

    # Each trial costs $1: a limit of $0.50 counts trial 0 alone, as AgentV stops there.
    edit(path, "strategy: mean}", "strategy: mean, cost_limit_usd: 0.5}")
    assert run(path, tmp_path) == {"only": 1.0}
    assert invocations(project) == 2, "a cost limit ran the agent"
    assert run(path, tmp_path, "--no-cache") == {"only": 1.0}
    assert invocations(project) == 4


def outcome(stdout: str) -> tuple[float, str]:
    """The one case's score, and "pass" or "fail" as the run's table counts it."""
    passed = table_rows(stdout)["a"]["passed"] == "1"
    return scores(stdout)["only"], "pass" if passed else "fail"


def test_grading_changes_re_grade_the_stored_sessions_and_agent_changes_run_it(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "agent.py").write_text(AGENT)
    path = write(project, "stale.eval.yaml", SUITE.replace("strategy: pass_at_k", "strategy: mean"))

    def graded(*args: str) -> tuple[float, str]:
        done = cli("run", str(path), *args, home=tmp_path)
        assert done.code in (0, 1), done.explain()
        return outcome(done.stdout)

    assert graded() == (0.5, "fail")  # trial 0 "done", trial 1 "nope"; 0.5 < 0.8
    assert invocations(project) == 2

    # A run's --threshold and a test's own threshold: re-graded, no agent.
    assert graded("--threshold", "0.4") == (0.5, "pass")
    assert invocations(project) == 2, "--threshold ran the agent"
    edit(path, "input: say done", "input: say done\n    execution: {threshold: 0.5}")
    assert graded() == (0.5, "pass")
    assert invocations(project) == 2, "a test's threshold ran the agent"

    # A grader edited: both answers hold an "o".
    edit(path, "value: done}", "value: o}")
    assert graded() == (1.0, "pass")
    assert invocations(project) == 2, "a grader edit ran the agent"

    # A new assertion: trial 1's "nope" fails it (scores 1.0 and 0.5: mean 0.75).
    edit(path, "value: o}]", "value: o}, {type: regex, value: '^d'}]")
    assert graded() == (0.75, "pass")
    assert invocations(project) == 2, "a new assertion ran the agent"

    # The environment the agent sees: it runs again (invocations 3 and 4: "done", "nope").
    edit(path, "provider: cli\n", "provider: cli\n    env: {MODE: fast}\n")
    assert graded() == (0.75, "pass")
    assert invocations(project) == 4

    # A code grader reads the workspace, which a passing run's clean-up removed: it is
    # re-graded from the workspace's kept final state (test_workspace_state.py), no agent.
    (project / "check.py").write_text("print('{\"score\": 1}')\n")
    edit(path, "value: '^d'}]", "value: '^d'}, {type: code-grader, command: python3 check.py}]")
    assert graded()[0] == pytest.approx(5 / 6)  # (1 + 1 + 1) / 3 and (1 + 0 + 1) / 3
    assert invocations(project) == 4, "a code grader over a deleted workspace ran the agent"
    # Kept workspaces are re-graded where they lie.
    (project / "check.py").write_text("print('{\"score\": 0}')\n")
    # (1 + 1 + 0) / 3 and (1 + 0 + 0) / 3
    assert graded("--keep-workspaces", "--no-cache")[0] == pytest.approx(0.5)
    assert invocations(project) == 6
    (project / "check.py").write_text("print('{\"score\": 1}')\n")
    assert graded()[0] == pytest.approx(5 / 6)
    assert invocations(project) == 6, "a kept workspace's code grader edit ran the agent"

"""Hooks of `execution.targets[]` entries run inside the workspace's, in AgentV's order (§7.1)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.suites import load_suite, resolve_cases


def test_target_hooks_run_inside_the_workspace_hooks(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "ws").mkdir()
    (root / "ws/README.md").write_text("workspace\n")
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        "targets: [{name: agent, provider: cli, command: 'cat order.log > /dev/null; echo done'}]\n"
    )
    log = root / "order.log"

    def hook(label: str) -> str:
        return f"{{command: [sh, -c, 'echo {label} >> {log}']}}"

    suite = root / "s.eval.yaml"
    suite.write_text(
        dedent(
            f"""\
            workspace:
              template: ws
              hooks:
                before_all: {hook("before_all")}
                before_each: {hook("before_each")}
                after_each: {hook("after_each")}
                after_all: {hook("after_all")}
            execution:
              targets:
                - name: agent
                  hooks:
                    before_all: {hook("target-before_all")}
                    before_each: {hook("target-before_each")}
                    after_each: {hook("target-after_each")}
                    after_all: {hook("target-after_all")}
            tests: [{{id: t, input: hi, assertions: [{{type: contains, value: done}}]}}]
            """
        )
    )
    cases = resolve_cases(load_suite(suite))
    sessions = enrich_runs(run_agents(cases, tmp_path / "r", workers=1), tmp_path / "s")
    [grade] = grade_cases(cases, sessions, workers=1)
    assert grade.score == 1.0
    assert log.read_text().split() == [
        "before_all",
        "target-before_all",
        "before_each",
        "target-before_each",
        "target-after_each",
        "after_each",
        "target-after_all",
        "after_all",
    ]


def test_a_failing_target_hook_is_a_setup_error(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        "targets: [{name: agent, provider: cli, command: 'echo done'}]\n"
    )
    suite = root / "s.eval.yaml"
    suite.write_text(
        dedent(
            """\
            execution:
              targets:
                - name: agent
                  hooks: {before_each: {command: [sh, -c, 'echo nope >&2; exit 3']}}
            tests: [{id: t, input: hi, assertions: [{type: contains, value: done}]}]
            """
        )
    )
    cases = resolve_cases(load_suite(suite))
    sessions = enrich_runs(run_agents(cases, tmp_path / "r", workers=1), tmp_path / "s")
    [grade] = grade_cases(cases, sessions, workers=1)
    assert (grade.execution_status, grade.failure_stage) == ("execution_error", "setup")
    assert "target before_each" in (grade.error or "") and "nope" in (grade.error or "")


def test_a_failing_target_is_served_by_its_fallback_in_the_same_workspace(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "ws").mkdir()
    (root / "ws/seed.txt").write_text("seeded\n")
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        dedent(
            """\
            targets:
              - {name: flaky, provider: cli, command: 'touch tried; exit 1',
                 fallback_targets: [nowhere, steady]}
              - {name: steady, provider: cli, command: 'ls tried seed.txt && echo steady'}
              - {name: broken, provider: cli, command: 'exit 2', fallback_targets: [flaky]}
            """
        )
    )
    suite = root / "s.eval.yaml"
    suite.write_text(
        "workspace: {template: ws}\nexecution: {targets: [flaky, broken]}\n"
        "tests: [{id: t, input: hi, assertions: [{type: contains, value: steady}]}]\n"
    )
    cases = resolve_cases(load_suite(suite))
    runs = run_agents(cases, tmp_path / "r", workers=1)
    served = {run.agent: run for run in runs}
    assert served["flaky"].served_by == "steady" and served["flaky"].error is None
    sessions = enrich_runs(runs, tmp_path / "s")
    grades = {g.agent: g for g in grade_cases(cases, sessions, workers=1)}
    assert (grades["flaky"].score, grades["flaky"].execution_status) == (1.0, "ok")
    # A fallback's own fallbacks are not followed, and the last error is the run's.
    assert grades["broken"].execution_status == "execution_error"
    assert "exited with code 1" in (grades["broken"].error or "")

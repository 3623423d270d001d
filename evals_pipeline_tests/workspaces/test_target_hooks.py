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

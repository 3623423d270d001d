"""Hooks of `execution.targets[]` entries run inside the workspace's, in AgentV's order (§7.1)."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.errors import message_of
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
    assert "target before_each" in (message_of(grade.error) or "") and "nope" in (
        message_of(grade.error) or ""
    )


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
    assert "exited with code 1" in (message_of(grades["broken"].error) or "")


def test_a_skill_installed_by_a_target_hook_lands_only_in_its_variants_workspaces(
    tmp_path: Path,
) -> None:
    # Seed 004's lanes: one target run twice, once with a hook installing a skill into the
    # workspace's .claude/skills/ and once bare; the two are two agents on the same cases.
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "ws").mkdir()
    (root / "ws/README.md").write_text("workspace\n")
    (root / "skills/money").mkdir(parents=True)
    (root / "skills/money/SKILL.md").write_text("---\nname: money\n---\nUse cents.\n")
    (root / ".agentv").mkdir()
    (root / ".agentv/targets.yaml").write_text(
        "targets: [{name: agent, provider: cli, "
        "command: 'ls .claude/skills 2>/dev/null || echo no skills'}]\n"
    )
    install = (
        '[sh, -c, \'mkdir -p "$1/.claude/skills" && cp -R skills/money "$1/.claude/skills/"\', '
        'sh, "{{workspace_path}}"]'
    )
    suite = root / "s.eval.yaml"
    suite.write_text(
        dedent(
            f"""\
            workspace: {{template: ws, cleanup: never}}
            execution:
              targets:
                - agent
                - name: with-skill
                  use_target: agent
                  hooks: {{before_each: {{command: {install}}}}}
            tests:
              - {{id: t1, input: hi, assertions: [{{type: contains, value: money}}]}}
              - {{id: t2, input: hi, assertions: [{{type: contains, value: money}}]}}
            """
        )
    )
    cases = resolve_cases(load_suite(suite))
    assert sorted({c.agent for c in cases}) == ["agent", "with-skill"]
    runs = run_agents(cases, tmp_path / "r", workers=2)
    skill_files = {
        (run.agent, run.case_key): (
            Path(run.workspace_path or "") / ".claude/skills/money/SKILL.md"
        )
        for run in runs
    }
    assert len(skill_files) == 4
    for (agent, _), skill in skill_files.items():
        assert skill.is_file() == (agent == "with-skill"), skill
    # The hook ran before the git baseline: the skill is the starting point, not a change.
    assert all(run.file_changes is None for run in runs)
    grades = grade_cases(cases, enrich_runs(runs, tmp_path / "s"), workers=1)
    assert {(g.agent, g.test_id): g.verdict for g in grades} == {
        ("agent", "t1"): "fail",
        ("agent", "t2"): "fail",
        ("with-skill", "t1"): "pass",
        ("with-skill", "t2"): "pass",
    }

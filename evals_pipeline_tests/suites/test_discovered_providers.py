"""A provider AgentV does not know runs as AgentV runs it: a cli target whose command is the one
written, else `bun run .agentv/providers/<name>.ts {PROMPT}` (conformance/custom-provider runs
both beside the real agentv)."""

from __future__ import annotations

from evals_pipeline.models.targets import CliTarget
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only


def test_a_provider_without_a_command_runs_its_script_by_convention(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: mine\n    provider: my-llm\n")
    loaded = load_suite(
        project.write("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    target = loaded.targets["mine"]
    assert isinstance(target, CliTarget)
    assert target.command == "bun run .agentv/providers/my-llm.ts {PROMPT}"
    assert target.cwd is None  # the eval file's folder (or the workspace), as AgentV


def test_a_provider_with_a_command_runs_that_command(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: mine
            provider: file-output
            command: bun run .agentv/providers/file-output.ts {OUTPUT_FILE}
            timeout_seconds: 30
            some_setting_agentv_does_not_read: 1
        """,
    )
    loaded = load_suite(
        project.write("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n")
    )
    target = loaded.targets["mine"]
    assert isinstance(target, CliTarget)
    assert target.command == "bun run .agentv/providers/file-output.ts {OUTPUT_FILE}"
    assert target.timeout_seconds == 30


def test_a_near_miss_of_a_known_provider_is_a_typo(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: a\n    provider: antropic\n")
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n"))
    assert issue.fix.startswith("did you mean 'anthropic'?")

"""Unknown target providers list the valid ones and suggest a replacement."""

from __future__ import annotations

from evals_pipeline_tests.suites.conftest import Project, only


def test_unknown_provider_lists_valid_ones(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            targets:
              - name: agent
                provider: clii
                command: run
            tests: [{id: a, input: hi, assertions: []}]
            """,
        )
    )
    assert (issue.line, issue.column) == (3, 15)
    assert issue.message.startswith(
        "target 'agent' cannot run: provider 'clii' is not a provider evals-pipeline knows"
    )
    assert issue.fix.startswith("did you mean 'cli'? (providers: cli, mock, replay,")


def test_agentv_agent_provider_suggests_a_cli_target(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: cc\n    provider: copilot\n")
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n"))
    assert issue.file == str(project.root / ".agentv/targets.yaml")
    assert (issue.line, issue.column) == (3, 15)
    assert issue.message.startswith(
        "target 'cc' cannot run: provider 'copilot' is not supported here: it drives GitHub "
        "Copilot's CLI"
    )
    assert issue.fix.startswith("run 'copilot' through provider: cli with a command")

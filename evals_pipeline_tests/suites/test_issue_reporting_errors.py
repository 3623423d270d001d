"""How load errors are reported: the issue format, and issues from several files together."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.suites import SuiteError, SuiteIssue
from evals_pipeline_tests.suites.conftest import Project


def test_issue_format() -> None:
    issue = SuiteIssue("a.eval.yaml", 3, 5, "unknown key 'critera'", "did you mean 'criteria'?")
    assert str(issue) == "a.eval.yaml:3:5: unknown key 'critera'\n    fix: did you mean 'criteria'?"
    error = SuiteError([issue, issue])
    assert error.issues == [issue]  # the same issue reached twice is reported once
    assert str(error) == str(issue)


def test_issues_from_suite_and_targets_file_are_collected_together(project: Project) -> None:
    # An entry without a provider is a file AgentV cannot read: an error whatever the suite runs.
    project.write(".agentv/targets.yaml", "targets:\n  - name: x\n")
    issues = project.issues(
        "s.eval.yaml",
        """\
        tests:
          - id: a
            input: hi
            criteria: [x]
          - id: b
            input: 3
        """,
    )
    files = {Path(i.file).name for i in issues}
    assert files == {"s.eval.yaml", "targets.yaml"}
    assert len(issues) == 3

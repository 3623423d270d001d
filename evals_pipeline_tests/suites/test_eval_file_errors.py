"""An eval file that cannot be read: missing, empty, or invalid YAML (also in the targets file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError, load_suite
from evals_pipeline_tests.suites.conftest import Project, only


def test_empty_file(project: Project) -> None:
    issue = only(project.issues("s.eval.yaml", ""))
    assert (issue.line, issue.message) == (1, "the eval file is empty")


def test_missing_eval_file(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "nope.eval.yaml")
    issue = only(caught.value.issues)
    assert issue.file == str(tmp_path / "nope.eval.yaml")
    assert issue.message == "file not found"


def test_yaml_syntax_error(project: Project) -> None:
    path = project.write("s.eval.yaml", "tests:\n  - id: a\n\tinput: hi\n")
    issue = only(project.issues("s.eval.yaml"))
    assert issue.file == str(path)
    assert (issue.line, issue.column) == (3, 1)
    assert issue.message.startswith("invalid YAML: found character '\\t'")
    assert issue.fix == "indent with spaces; YAML does not allow tabs for indentation"


def test_yaml_syntax_error_in_targets_file(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets:\n  - name: [a\n")
    issue = only(project.issues("s.eval.yaml", "tests: [{id: a, input: hi, assertions: []}]\n"))
    assert issue.file == str(project.root / ".agentv/targets.yaml")
    assert issue.message.startswith("invalid YAML")

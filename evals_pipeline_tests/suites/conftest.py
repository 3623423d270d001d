"""A throwaway project folder to write suites into, and helpers to read back their issues."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import pytest

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.suites import SuiteError, SuiteIssue, load_suite, resolve_cases

MOCK_TARGETS = """\
targets:
  - name: mock
    provider: mock
    response: hello
"""


@dataclass
class Project:
    """A folder with `.git` (so upward file searches stop here), the working folder, and by
    default a mock target."""

    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")
        return path

    def issues(self, relative: str, text: str | None = None) -> list[SuiteIssue]:
        """The issues load_suite raises for a suite (written first when `text` is given), or
        else the run issues it defers to when the suite runs (its targets' resolution)."""
        path = self.write(relative, text) if text is not None else self.root / relative
        with pytest.raises(SuiteError) as caught:
            loaded = load_suite(path)
            resolve_cases(loaded)
        assert str(caught.value) == "\n".join(str(i) for i in caught.value.issues)
        return caught.value.issues


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    # Run from the project, as `agentv eval` is: its repository root bounds file searches.
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    made = Project(tmp_path)
    made.write(".agentv/targets.yaml", MOCK_TARGETS)
    return made


def only(issues: list[SuiteIssue]) -> SuiteIssue:
    """The single issue of a list, failing with all of them shown otherwise."""
    assert len(issues) == 1, "\n".join(str(i) for i in issues)
    return issues[0]


def at_line(issues: list[SuiteIssue], line: int) -> SuiteIssue:
    """The single issue reported at `line`."""
    return only([i for i in issues if i.line == line])


def cases_of(project: Project, text: str, **kwargs: list[str]) -> list[ResolvedCase]:
    """The cases of a suite written to evals/s.eval.yaml in `project`."""
    return resolve_cases(load_suite(project.write("evals/s.eval.yaml", text)), **kwargs)


def one_case(project: Project, text: str) -> ResolvedCase:
    """The single case of such a suite."""
    cases = cases_of(project, text)
    assert len(cases) == 1
    return cases[0]

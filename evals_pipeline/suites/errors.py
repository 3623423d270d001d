"""Suite problems as the user sees them: file, line, column, what is wrong and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass

from evals_pipeline.errors import EvalsPipelineError


@dataclass(frozen=True)
class SuiteIssue:
    """One problem (or warning) in a suite or targets file; lines and columns are 1-based."""

    file: str
    line: int
    column: int
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}\n    fix: {self.fix}"


class SuiteError(EvalsPipelineError):
    """A suite that cannot be run, with every issue found (not just the first)."""

    def __init__(self, issues: list[SuiteIssue]) -> None:
        # The same node reached twice (YAML aliases) must not report its problem twice.
        unique = list(dict.fromkeys(issues))
        self.issues = sorted(unique, key=lambda i: (i.file, i.line, i.column))
        super().__init__("\n".join(str(issue) for issue in self.issues))

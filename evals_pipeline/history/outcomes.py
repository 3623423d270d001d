"""Per-case verdicts of one report, as the comparison pairs them (from cases.parquet)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import CaseGrade, Verdict

if TYPE_CHECKING:
    import pyarrow as pa

CASES_FILE = "cases.parquet"
_COLUMNS = ["case_key", "test_id", "agent", "score", "verdict", "error"]


@dataclass(frozen=True)
class CaseOutcome:
    """One (case, agent) of a report: `passed` is verdict `pass` (an error is not passed)."""

    agent: str
    case_key: str
    test_id: str
    verdict: Verdict
    score: float | None
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def success(self) -> float:
        """The score the bootstrap compares: an error scores 0 (it did not pass)."""
        return 0.0 if self.verdict == "error" or self.score is None else self.score


def outcomes_from_grades(grades: Iterable[CaseGrade]) -> list[CaseOutcome]:
    """The outcomes of a report being written: the same fields its cases.parquet will hold."""
    return [
        CaseOutcome(
            agent=g.agent,
            case_key=g.case_key,
            test_id=g.test_id,
            verdict=g.verdict,
            score=g.score,
            error=message_of(g.error),
        )
        for g in grades
    ]


def _from_table(table: pa.Table) -> list[CaseOutcome]:
    """The outcomes in a cases table (cases.parquet)."""
    return [
        CaseOutcome(
            agent=row["agent"],
            case_key=row["case_key"],
            test_id=row["test_id"],
            verdict=row["verdict"],
            score=row["score"],
            error=row["error"],
        )
        for row in table.select(_COLUMNS).to_pylist()
    ]


def read_outcomes(folder: Path) -> list[CaseOutcome]:
    """The outcomes of the report in `folder`; none when it has no cases.parquet."""
    path = folder / CASES_FILE
    if not path.exists():
        return []
    # pyarrow loads when a report is read, not with the run's estimate of a first run.
    from evals_pipeline.storage.parquet import read_parquet

    return _from_table(read_parquet(path, columns=_COLUMNS))

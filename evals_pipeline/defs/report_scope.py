"""What the report step holds its grades against, without resolving the suite again in its body
(~2 s for 10,000 cases): the (case, agent) pairs of the suite's matrix and its required tests, as
the definitions resolved them, joined with the cases' own records (the case step re-reads the
suite file on every run, so a test added since the definitions loaded is in them once it ran)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from evals_pipeline.history import required_test_ids
from evals_pipeline.models.case import ResolvedCase


@dataclass(frozen=True)
class ReportScope:
    """The suite's matrix (a test naming its own targets leaves pairs out) and required tests."""

    pairs: frozenset[tuple[str, str]]
    required: frozenset[str]

    @classmethod
    def of(cls, resolved: Iterable[ResolvedCase]) -> ReportScope:
        cases = list(resolved)
        return cls(
            frozenset((c.case_key, c.agent) for c in cases), frozenset(required_test_ids(cases))
        )

    def expected(
        self, cases: Iterable[ResolvedCase], registered: Collection[str], agents: Collection[str]
    ) -> int:
        """How many pairs of the matrix (and of the cases' records) are registered cases of the
        report's agents: those without a grade are not run."""
        pairs = self.pairs | {(c.case_key, c.agent) for c in cases}
        return sum(1 for case_key, agent in pairs if case_key in registered and agent in agents)

    def required_tests(self, cases: Iterable[ResolvedCase]) -> set[str]:
        """The tests marked required in the suite or in the records their cases ran with."""
        return set(self.required) | required_test_ids(cases)

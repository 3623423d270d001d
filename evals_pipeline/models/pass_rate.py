"""The pass rate, defined once: passed / cases that ran. An errored case ran and did not pass, so
it is in the denominator; an agent with an error never reads 100% (docs/report.md, "Pass rate").

Every surface (run table, summary.md, report.json, report.html, `runs`, `compare`, JUnit, the
PR summary, Dagster metadata, failure attribution) reads its rate from here. The rate over graded
cases only (errors left out, AgentV's `pass_rate`) is kept beside it, always labelled "graded".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, computed_field, model_validator

PASS_RATE = "passed / cases: an errored case counts as not passed"
PASS_RATE_GRADED = "passed / (passed + failed): over graded cases only, errors left out"


def pass_rate(passed: int, ran: int) -> float | None:
    """passed / ran, where `ran` counts every case (or trial) that ran, errored ones included;
    None when nothing ran."""
    return passed / ran if ran else None


def graded_pass_rate(passed: int, failed: int) -> float | None:
    """passed / (passed + failed): the rate over graded cases, errors left out; None when no
    case was graded. Shown only beside `pass_rate`, labelled "graded"."""
    return pass_rate(passed, passed + failed)


def counts_text(passed: int, cases: int, errors: int) -> str:
    """The counts behind a pass rate, for people: `9/10 passed · 1 error`."""
    text = f"{passed}/{cases} passed"
    if errors:
        text += f" · {errors} error{'s' if errors > 1 else ''}"
    return text


class PassCounts(BaseModel):
    """An agent's case counts and the rates derived from them. The rates are computed, never
    read back: a report.json written before this definition stored passed / (passed + failed)
    as `pass_rate`, and history reads those files."""

    cases: int
    passed: int
    failed: int
    errors: int

    @model_validator(mode="before")
    @classmethod
    def _drop_stored_rates(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("pass_rate" in data or "pass_rate_graded" in data):
            return {k: v for k, v in data.items() if k not in ("pass_rate", "pass_rate_graded")}
        return data

    @computed_field(description=PASS_RATE)  # type: ignore[prop-decorator]
    @property
    def pass_rate(self) -> float | None:
        return pass_rate(self.passed, self.cases)

    @computed_field(description=PASS_RATE_GRADED)  # type: ignore[prop-decorator]
    @property
    def pass_rate_graded(self) -> float | None:
        return graded_pass_rate(self.passed, self.failed)

    @property
    def counts_text(self) -> str:
        """`9/10 passed · 1 error`."""
        return counts_text(self.passed, self.cases, self.errors)

"""Stored records read back: resolved cases share their validated target and graders, and read
back equal to what was stored, for every suite of the examples and conformance folders."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.record_reader import RecordReader
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases

REPO = Path(__file__).resolve().parents[2]


def _stored_cases() -> list[ResolvedCase]:
    """The resolved cases of every example and conformance suite that loads as it is."""
    cases: list[ResolvedCase] = []
    for folder in ("examples", "conformance"):
        for path in sorted((REPO / folder).rglob("*.eval.yaml")):
            try:
                cases += resolve_cases(load_suite(path))
            except SuiteError:  # a fixture of a load error, or one needing a variable
                continue
    return cases


def test_cases_read_back_equal_to_what_was_stored() -> None:
    cases = _stored_cases()
    assert len(cases) > 200
    providers = {c.target.provider for c in cases}
    assert {"cli", "mock", "replay", "claude-code", "codex", "pi-agent"} <= providers
    assert len({a.type for c in cases for a in c.assertions}) > 15
    reader = RecordReader(ResolvedCase)
    for case in cases:
        text = case.model_dump_json()
        assert reader.read(text) == case == ResolvedCase.model_validate_json(text)


def test_cases_share_their_target_and_graders_once_validated() -> None:
    case = next(c for c in _stored_cases() if len(c.assertions) >= 2)
    reader = RecordReader(ResolvedCase)
    first, second = (reader.read(case.model_dump_json()) for _ in range(2))
    assert first.target is second.target
    assert all(a is b for a, b in zip(first.assertions, second.assertions, strict=True))
    other = case.model_copy(update={"target": case.target.model_copy(update={"name": "other"})})
    assert reader.read(other.model_dump_json()).target.name == "other"


def test_what_orjson_refuses_is_read_by_pydantic() -> None:
    case = _stored_cases()[0].model_copy(update={"metadata": {"big": 2**70}})
    text = case.model_dump_json()
    assert RecordReader(ResolvedCase).read(text) == case


def test_other_records_are_validated_as_they_are() -> None:
    run = AgentRun(case_key="c", agent="a", trial=0, start_ms=1, end_ms=2, error="boom")
    assert RecordReader(AgentRun).read(run.model_dump_json()) == run

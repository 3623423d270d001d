"""The records a step loads carry the digest of each one's stored JSON, for the report's page
keys, and which of them hold no secret; other sequences carry neither."""

from __future__ import annotations

from evals_pipeline.defs.io_manager import LoadedRecords, clean_records, stored_digests
from evals_pipeline.models.run import AgentRun
from evals_pipeline.reporting.record_digest import record_digest


def test_loaded_records_keep_the_digest_of_their_stored_text() -> None:
    text = '{"case_key": "t1", "agent": "bot", "start_ms": 1, "end_ms": 2}'
    loaded = LoadedRecords()
    loaded.add(AgentRun.model_validate_json(text), text)
    other = AgentRun(case_key="t2", agent="bot", start_ms=1, end_ms=2)
    assert loaded == [AgentRun(case_key="t1", agent="bot", start_ms=1, end_ms=2)]
    assert stored_digests(loaded, [other]) == {id(loaded[0]): record_digest(text)}


def test_only_records_loaded_clean_are_known_clean() -> None:
    loaded = LoadedRecords()
    for key, clean in (("t1", True), ("t2", False)):
        text = f'{{"case_key": "{key}", "agent": "bot", "start_ms": 1, "end_ms": 2}}'
        loaded.add(AgentRun.model_validate_json(text), text, clean=clean)
    other = AgentRun(case_key="t3", agent="bot", start_ms=1, end_ms=2)
    assert clean_records(loaded, [other]) == {id(loaded[0])}

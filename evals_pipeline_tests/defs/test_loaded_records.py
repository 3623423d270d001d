"""The records a step loads carry the digest of each one's stored JSON, for the report's page
keys; other sequences carry none."""

from __future__ import annotations

from evals_pipeline.defs.io_manager import LoadedRecords, stored_digests
from evals_pipeline.models.run import AgentRun
from evals_pipeline.reporting.record_digest import record_digest


def test_loaded_records_keep_the_digest_of_their_stored_text() -> None:
    text = '{"case_key": "t1", "agent": "bot", "start_ms": 1, "end_ms": 2}'
    loaded = LoadedRecords()
    loaded.add(AgentRun.model_validate_json(text), text)
    other = AgentRun(case_key="t2", agent="bot", start_ms=1, end_ms=2)
    assert loaded == [AgentRun(case_key="t1", agent="bot", start_ms=1, end_ms=2)]
    assert stored_digests(loaded, [other]) == {id(loaded[0]): record_digest(text)}

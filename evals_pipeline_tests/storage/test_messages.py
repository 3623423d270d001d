"""Session messages round-trip exactly through Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evals_pipeline.models.messages import Message, TokenUsage, ToolCall
from evals_pipeline.storage.messages import read_messages, write_messages


def test_messages_round_trip_exactly(tmp_path: Path) -> None:
    messages = [
        Message(role="system", content="be brief"),
        Message(
            role="user",
            content=[{"type": "text", "value": "hi"}, {"type": "file", "value": "a.py"}],
        ),
        Message(role="user", content={"task": "structured", "n": [1, 2.5, None]}),
        Message(
            role="assistant",
            content=None,
            tool_calls=[
                ToolCall(
                    tool="Bash",
                    input={"command": "pytest -q"},
                    output="2 passed",
                    id="t1",
                    status="ok",
                    start_time_ms=1_700_000_000_000,
                    end_time_ms=1_700_000_002_000,
                    duration_ms=2000,
                ),
                ToolCall(tool="Write", input={"file_path": "x.py"}, output=None, status="error"),
            ],
            token_usage=TokenUsage(input=10, output=5, cached=2),
            metadata={"model": "m1"},
        ),
        Message(role="assistant", content="done ✓", start_time_ms=1, end_time_ms=3, duration_ms=2),
    ]
    path = write_messages(messages, tmp_path / "s" / "messages.parquet")
    assert read_messages(path) == messages


def test_messages_file_is_plain_parquet_for_pandas(tmp_path: Path) -> None:
    path = write_messages([Message(role="assistant", content="x")] * 3, tmp_path / "m.parquet")
    frame = pd.read_parquet(path)
    assert list(frame["role"]) == ["assistant"] * 3
    assert list(frame["index"]) == [0, 1, 2]

"""Which earlier report a report is compared with, and the reports its trend shows."""

from __future__ import annotations

from collections.abc import Sequence

from evals_pipeline.models.history import RunEntry, Trigger

TREND_LENGTH = 20


def previous_entry(
    entries: Sequence[RunEntry], current: RunEntry, *, trigger: Trigger | None = None
) -> RunEntry | None:
    """The newest entry older than `current` (another folder); a nightly report's previous is
    the previous nightly, so a daytime run in between does not hide last night's change."""
    wanted = trigger if trigger is not None else current.trigger
    older = [
        e
        for e in entries
        if e.folder != current.folder
        and e.created_ms <= current.created_ms
        and (wanted != "nightly" or e.trigger == "nightly")
    ]
    return max(older, key=lambda e: (e.created_ms, e.folder), default=None)


def trend(
    entries: Sequence[RunEntry], current: RunEntry, *, length: int = TREND_LENGTH
) -> list[RunEntry]:
    """The last `length` entries up to and including `current`, oldest first."""
    older = [
        e for e in entries if e.folder != current.folder and e.created_ms <= current.created_ms
    ]
    ordered = sorted(older, key=lambda e: (e.created_ms, e.folder))
    return [*ordered, current][-length:]

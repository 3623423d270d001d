"""Where a reused result came from: the result cache's mark on records it did not recompute."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Reuse(BaseModel):
    """A record taken from the result store instead of recomputed (nothing it depends on changed)."""

    run_id: str | None = Field(default=None, description="The Dagster run that produced it.")
    stored_ms: int = Field(description="When it was stored, epoch milliseconds.")


def age_text(elapsed_ms: int) -> str:
    """An age in its largest whole unit: `45 s`, `12 min`, `3 h`, `2 d`."""
    seconds = max(0, elapsed_ms // 1000)
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"

"""What one workload measured: its parts (each command's wall time and peak memory), the figure
it is judged by and that figure's ratio to its reference (the floor, a target, the CLI)."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.measure import Measured


@dataclass(frozen=True)
class Outcome:
    parts: dict[str, Measured]
    seconds: float
    peak_mb: float
    ratio: float
    reference: str  # what `ratio` divides by, as printed: "the floor", "the 10 s target"
    figures: dict[str, float] = field(default_factory=dict)  # more, e.g. a part's split

    def line(self) -> str:
        """The figures on one line: each part, then the ratio."""
        parts = [f"{n} {m.seconds:.2f} s {m.peak_mb:.0f} MB" for n, m in self.parts.items()]
        more = [f"{n} {v:.2f}" for n, v in self.figures.items()]
        return " | ".join([*parts, *more, f"{self.ratio:.2f}x {self.reference}"])

    def row(self) -> dict[str, object]:
        """The JSONL fields: the judged figure and ratio, and every part's time and memory."""
        row: dict[str, object] = {
            "seconds": round(self.seconds, 3),
            "peak_mb": round(self.peak_mb, 1),
            "ratio": round(self.ratio, 3),
            "reference": self.reference,
        }
        for name, measured in self.parts.items():
            row[f"{name}_seconds"] = round(measured.seconds, 3)
            row[f"{name}_peak_mb"] = round(measured.peak_mb, 1)
        row.update({name: round(value, 3) for name, value in self.figures.items()})
        return row

"""What the corpus test did with each of AgentV's eval files, and the counts pytest prints.

Tests run in several worker processes, so each file's outcome is a JSON file in one folder; the
controlling process clears it when the session starts and sums it in the session summary.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

OUTCOMES = Path(__file__).resolve().parents[2] / ".evals" / "corpus-outcomes"


@dataclass
class Outcome:
    """One eval file of the corpus: accepted by agentv, loaded here, and compared test by test."""

    file: str
    accepted: bool = False
    loaded: bool = False
    agentv_ran: bool = False
    why_not_run: str = ""
    tests: int = 0
    equal: int = 0
    deliberate: list[str] = field(default_factory=list)

    def save(self, folder: Path = OUTCOMES) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / (self.file.replace("/", "__") + ".json")).write_text(json.dumps(asdict(self)))


def summary(folder: Path = OUTCOMES) -> list[str]:
    """The counts of this session's corpus test, as lines for pytest's summary; none if it did
    not run."""
    outcomes = [Outcome(**json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]
    if not outcomes:
        return []
    compared = [o for o in outcomes if o.agentv_ran]
    return [
        f"AgentV 4.42.4 corpus: {len(outcomes)} eval files, "
        f"{sum(o.accepted for o in outcomes)} accepted by agentv validate, "
        f"{sum(o.loaded for o in outcomes)} loaded here; "
        f"{len(compared)} suites agentv runs offline compared: "
        f"{sum(o.equal for o in compared)} of {sum(o.tests for o in compared)} tests equal, "
        f"{sum(len(o.deliberate) for o in compared)} listed deliberate differences",
        *(f"  deliberate: {o.file}: {d}" for o in compared for d in o.deliberate),
    ]


def reset(folder: Path = OUTCOMES) -> None:
    """Forget an earlier session's outcomes."""
    shutil.rmtree(folder, ignore_errors=True)

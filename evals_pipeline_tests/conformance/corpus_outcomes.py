"""What the corpus test did with each of AgentV's eval files, and the counts pytest prints.

Tests run in several worker processes, so each file's outcome is a JSON file in a folder of the
session's own: the controlling process makes it (and names it to the workers in the
environment), sums it in the session summary and removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV_VAR = "EVALS_PIPELINE_CORPUS_OUTCOMES"


def open_session() -> None:
    """Make this session's outcome folder; worker processes inherit its name."""
    os.environ[ENV_VAR] = tempfile.mkdtemp(prefix="evals-pipeline-corpus-")


def close_session() -> list[str]:
    """The summary of this session's outcomes; the folder is removed."""
    folder = os.environ.pop(ENV_VAR, None)
    if folder is None:
        return []
    try:
        return summary(Path(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _folder() -> Path:
    folder = os.environ.get(ENV_VAR)
    if folder is None:  # a worker of a session that did not open one
        open_session()
        folder = os.environ[ENV_VAR]
    return Path(folder)


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

    def save(self) -> None:
        (_folder() / (self.file.replace("/", "__") + ".json")).write_text(json.dumps(asdict(self)))


def summary(folder: Path) -> list[str]:
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

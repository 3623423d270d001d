"""What the corpus test did with each of AgentV's eval files, and the counts pytest prints.

Tests run in several worker processes, so each file's outcome is a JSON file in a folder of the
session's own: the controlling process makes it, names it to each xdist worker, sums it in the
session summary and removes it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

FOLDER = pytest.StashKey[Path]()
"""The session's outcome folder, in the controlling process's config stash."""
WORKER_KEY = "corpus_outcomes"
"""Its name in each xdist worker's `workerinput`."""


def open_session(config: pytest.Config) -> None:
    """Make this session's outcome folder (the controlling process, once)."""
    config.stash[FOLDER] = Path(tempfile.mkdtemp(prefix="evals-pipeline-corpus-"))


def hand_to_worker(config: pytest.Config, workerinput: dict[str, Any]) -> None:
    """Name the folder to an xdist worker."""
    workerinput[WORKER_KEY] = str(config.stash[FOLDER])


def folder_of(config: pytest.Config) -> Path:
    """The session's outcome folder, in the controlling process or a worker."""
    workerinput = getattr(config, "workerinput", None)
    return Path(workerinput[WORKER_KEY]) if workerinput else config.stash[FOLDER]


def close_session(config: pytest.Config) -> list[str]:
    """The summary of this session's outcomes; the folder is removed."""
    folder = config.stash.get(FOLDER, None)
    if folder is None:
        return []
    try:
        return summary(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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

    def save(self, folder: Path) -> None:
        (folder / (self.file.replace("/", "__") + ".json")).write_text(json.dumps(asdict(self)))


def summary(folder: Path) -> list[str]:
    """The counts of this session's corpus test, as lines for pytest's summary; none if it did
    not run."""
    outcomes = [Outcome(**json.loads(p.read_text())) for p in sorted(folder.glob("*.json"))]
    if not outcomes:
        return []
    compared = [o for o in outcomes if o.agentv_ran]
    reasons = [d.partition(" (because: ")[2][:-1] for o in compared for d in o.deliberate]
    return [
        f"AgentV 4.42.4 corpus: {len(outcomes)} eval files, "
        f"{sum(o.accepted for o in outcomes)} accepted by agentv validate, "
        f"{sum(o.loaded for o in outcomes)} loaded here; "
        f"{len(compared)} suites agentv runs offline compared: "
        f"{sum(o.equal for o in compared)} of {sum(o.tests for o in compared)} tests equal, the "
        f"others only as listed ({len(reasons)} deliberate differences):",
        *(f"  {n} x {reason}" for reason, n in Counter(reasons).most_common()),
        "accepted, but agentv runs no test of them offline:",
        *(f"  {o.file}: {o.why_not_run}" for o in outcomes if o.loaded and not o.agentv_ran),
    ]

"""A suite's resolved cases kept with what they were resolved from: the loaded suite and the
facts of the file system the resolution read (probes.py). The code location resolves each suite
when it loads and its cases sensor resolves it again on every tick; while the suite loads the
same and every probe holds, a tick takes the kept cases' content hashes instead (1-2 s for
10,000 cases).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.suites.loader import LoadedSuite
from evals_pipeline.suites.probes import Probes, recording
from evals_pipeline.suites.resolve import resolve_cases

Hashes = dict[str, dict[str, str]]
"""Case key -> agent -> the case's content hash."""


@dataclass
class Resolution:
    """The cases of `loaded` (every agent's) and the probes their resolution made."""

    loaded: LoadedSuite
    cases: list[ResolvedCase]
    probes: Probes
    _hashes: Hashes | None = field(default=None, repr=False)

    def content_hashes(self) -> Hashes:
        """Each case's content hash, made once; the cases are then let go (only the hashes are
        asked for again)."""
        if self._hashes is None:
            hashes: Hashes = {}
            for case in self.cases:
                hashes.setdefault(case.case_key, {})[case.agent] = case.content_hash
            self._hashes = hashes
            self.cases = []
        return self._hashes

    def holds_for(self, loaded: LoadedSuite) -> bool:
        """Whether resolving `loaded` now would give these cases: it is the same suite (as
        loaded: its file, targets and environment) and the file system answers as it did."""
        return loaded == self.loaded and self.probes.hold()


def resolve_recorded(loaded: LoadedSuite) -> Resolution:
    """resolve_cases(loaded) (every agent), with the probes it made."""
    with recording() as done:
        cases = resolve_cases(loaded)
    return Resolution(loaded, cases, done[0])

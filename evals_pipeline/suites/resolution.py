"""A suite's resolved cases kept with what they were resolved from: the loaded suite and the
facts of the file system the resolution read (probes.py). The code location resolves each suite
when it loads and its cases sensor resolves it again on every tick; while the suite loads the
same and every probe holds, a tick takes the kept cases' content hashes instead (1-2 s for
10,000 cases).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evals_pipeline.models.case import ResolvedCase, content_digest
from evals_pipeline.models.case_files import NamedFiles, grade_files, run_files
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
        hashes = self._hashes if self._hashes is not None else self.contents()[0]
        self.cases = []
        return hashes

    def contents(self) -> tuple[Hashes, NamedFiles]:
        """Each case's content hash, and the files the cases name as files (models/
        case_files.py; never paths in their text). The hashes are kept for content_hashes; so
        are the cases, until it is called."""
        hashes: Hashes = {}
        paths: dict[str, None] = {}
        commands: dict[str, None] = {}
        for case in self.cases:
            hashes.setdefault(case.case_key, {})[case.agent] = content_digest(case.content_json())
            for named in (run_files(case), grade_files(case)):
                paths.update(dict.fromkeys(named.paths))
                commands.update(dict.fromkeys(named.commands))
        self._hashes = hashes
        return hashes, NamedFiles(list(paths), list(commands))

    def holds_for(self, loaded: LoadedSuite) -> bool:
        """Whether resolving `loaded` now would give these cases: it is the same suite (as
        loaded: its file, targets and environment) and the file system answers as it did."""
        return (loaded is self.loaded or loaded == self.loaded) and self.probes.hold()


def resolve_recorded(loaded: LoadedSuite) -> Resolution:
    """resolve_cases(loaded) (every agent), with the probes it made."""
    with recording() as done:
        cases = resolve_cases(loaded)
    return Resolution(loaded, cases, done[0])

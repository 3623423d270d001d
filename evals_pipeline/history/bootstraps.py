"""The paired bootstraps a report's comparison drew, kept beside it by a digest of their inputs:
`evals-pipeline compare` of the same two reports reads them back instead of drawing 10,000
resamples of every paired case again (a second for 10,000 cases). The bootstrap is a pure
function of its inputs (scores, seed, resamples), so a hit is the result it would compute."""

from __future__ import annotations

import array
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from evals_pipeline.statistics import BootstrapResult, paired_bootstrap

BOOTSTRAPS_FILE = "bootstraps.json"


class Bootstraps:
    """Paired bootstraps by the digest of their inputs: those read from a report folder, and
    those drawn since."""

    def __init__(self, known: dict[str, BootstrapResult] | None = None) -> None:
        self.known = dict(known or {})

    def paired(
        self, scores_a: Sequence[float], scores_b: Sequence[float], *, seed: int, n_resamples: int
    ) -> BootstrapResult:
        """`paired_bootstrap` of these inputs, drawn only when not known yet."""
        key = _digest(scores_a, scores_b, seed, n_resamples)
        if key not in self.known:
            self.known[key] = paired_bootstrap(
                scores_a, scores_b, seed=seed, n_resamples=n_resamples
            )
        return self.known[key]

    @classmethod
    def read(cls, folder: Path) -> Bootstraps:
        """Those kept in a report `folder`; none when it has no readable file."""
        try:
            stored = json.loads((folder / BOOTSTRAPS_FILE).read_text(encoding="utf-8"))
            return cls({k: BootstrapResult.model_validate(v) for k, v in stored.items()})
        except (OSError, ValueError, AttributeError):
            return cls()

    def write(self, folder: Path) -> None:
        """Keep them in a report `folder` (made if missing)."""
        folder.mkdir(parents=True, exist_ok=True)
        stored = {k: v.model_dump() for k, v in self.known.items()}
        (folder / BOOTSTRAPS_FILE).write_text(json.dumps(stored), encoding="utf-8")


def _digest(a: Sequence[float], b: Sequence[float], seed: int, n_resamples: int) -> str:
    digest = hashlib.sha256(f"{seed}:{n_resamples}:{len(a)}:".encode())
    # The samples' float64 bytes (as numpy's would be), without importing numpy.
    digest.update(array.array("d", a).tobytes())
    digest.update(array.array("d", b).tobytes())
    return digest.hexdigest()

"""Finding eval files under the paths a user gives."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from evals_pipeline.suites.errors import SuiteError, SuiteIssue

_SKIPPED_DIRS = frozenset({".agentv", "node_modules", ".venv", "__pycache__"})


def is_eval_file(path: Path) -> bool:
    """`*.eval.yaml`, `*.eval.yml` or `EVAL.yaml`: the names a folder scan picks up."""
    return path.name == "EVAL.yaml" or path.name.endswith((".eval.yaml", ".eval.yml"))


def discover_suites(paths: Iterable[str | Path]) -> list[Path]:
    """Eval files: each file given as is, each folder searched recursively; sorted, absolute.

    Hidden folders, `.agentv`, `node_modules` and `.venv` are skipped: they hold targets,
    dependencies and caches, never suites. A path that does not exist is a SuiteError.
    """
    found: set[Path] = set()
    missing: list[SuiteIssue] = []
    for given in paths:
        path = Path(given).expanduser().resolve()
        if path.is_file():
            found.add(path)
        elif path.is_dir():
            found.update(_scan(path))
        else:
            missing.append(SuiteIssue(str(path), 1, 1, "no such file or folder", "check the path"))
    if missing:
        raise SuiteError(missing)
    return sorted(found)


def _scan(folder: Path) -> list[Path]:
    files: list[Path] = []
    for entry in folder.iterdir():
        if entry.is_dir():
            if not entry.name.startswith(".") and entry.name not in _SKIPPED_DIRS:
                files.extend(_scan(entry))
        elif is_eval_file(entry):
            files.append(entry)
    return files

"""How relative paths in a suite resolve: from the eval file's folder, as in AgentV."""

from __future__ import annotations

import os
from pathlib import Path

from evals_pipeline.models.assertions import PreprocessorSpec


def absolute(value: str, base_dir: Path) -> Path:
    """`value` as an absolute, normalised path; relative paths resolve against `base_dir`."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return Path(os.path.normpath(path))


def search_dirs(base_dir: Path) -> list[Path]:
    """The eval file's folder, then each parent up to the repository root (the folder holding
    `.git`), or up to the filesystem root outside a repository: where AgentV looks for files."""
    dirs: list[Path] = []
    for folder in (base_dir, *base_dir.parents):
        dirs.append(folder)
        if (folder / ".git").exists():
            break
    return dirs


def find_input_file(value: str, base_dir: Path) -> Path | None:
    """Resolve an input file or `{type: file}` block path the way AgentV does; None if absent."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path if path.is_file() else None
    for folder in search_dirs(base_dir):
        candidate = absolute(value, folder)
        if candidate.is_file():
            return candidate
    return None


def resolve_preprocessor(spec: PreprocessorSpec, base_dir: Path) -> PreprocessorSpec:
    """A preprocessor whose script (the command's last item) is an absolute path, found like an
    input file; unchanged when the script is not found (the loader reports that)."""
    script = find_input_file(spec.command[-1], base_dir)
    if script is None:
        return spec
    return spec.model_copy(update={"command": [*spec.command[:-1], str(script)]})

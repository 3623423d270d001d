"""How relative paths in a suite resolve: from the eval file's folder, as in AgentV."""

from __future__ import annotations

import os
from pathlib import Path

from evals_pipeline.models.assertions import PreprocessorSpec
from evals_pipeline.models.workspace import repo_source
from evals_pipeline.suites.probes import probed, resolved, working_folder


def absolute(value: str, base_dir: Path) -> Path:
    """`value` as an absolute, normalised path; relative paths resolve against `base_dir`."""
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return Path(os.path.normpath(path))


@probed  # it depends on the working folder and where `.git` is
def repo_root(cwd: Path | None = None) -> Path:
    """AgentV's repository root: the nearest folder holding `.git` from the working folder up,
    else the working folder itself (apps/cli eval/shared.ts `findRepoRoot`)."""
    start = (cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def search_dirs(base_dir: Path, cwd: Path | None = None) -> list[Path]:
    """Where AgentV looks for a file a suite names (loaders/file-resolver.ts
    `buildSearchRoots`): the eval file's folder and each parent up to the repository root (up
    to `/` when the file is outside it), then the repository root, then the working folder."""
    root = repo_root(cwd)
    dirs: list[Path] = []
    for folder in (base_dir, *base_dir.parents):
        dirs.append(folder)
        if folder == root:
            break
    dirs += [root, resolved(cwd or Path(working_folder()))]
    return list(dict.fromkeys(dirs))


@probed  # a resolution's cases depend on where (and whether) each file was found
def find_in_search_dirs(value: str, base_dir: Path, *, folder: bool = False) -> Path | None:
    """`value` resolved the way AgentV resolves a file (or a grader's cwd folder); None if
    absent. A leading `/` that names no existing path is read as relative, as AgentV does."""
    path = Path(value).expanduser()
    wanted = Path.is_dir if folder else Path.is_file
    if path.is_absolute() and wanted(path):
        return Path(os.path.normpath(path))
    relative = value.lstrip("/\\") or value
    for base in search_dirs(base_dir):
        candidate = absolute(relative, base)
        if wanted(candidate):
            return candidate
    return None


@probed  # whether a local folder exists decides the source
def find_repo_source(repo: str, base_dir: Path) -> str:
    """Where a `repo` value is fetched from (models/workspace.py `repo_source`)."""
    return repo_source(repo, base_dir)


def find_input_file(value: str, base_dir: Path) -> Path | None:
    """Resolve an input file or `{type: file}` block path the way AgentV does; None if absent."""
    return find_in_search_dirs(value, base_dir)


def resolve_preprocessor(spec: PreprocessorSpec, base_dir: Path) -> PreprocessorSpec:
    """A preprocessor whose script (the command's last item) is an absolute path, found like an
    input file; unchanged when the script is not found (the loader reports that)."""
    script = find_input_file(spec.command[-1], base_dir)
    if script is None:
        return spec
    return spec.model_copy(update={"command": [*spec.command[:-1], str(script)]})

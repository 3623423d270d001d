"""A fresh workspace folder: empty, or a copy of the suite's template."""

from __future__ import annotations

import shutil
from pathlib import Path

# A template's own git history and installed dependencies are not part of the task, and a
# nested `.git` would make the copy a repository of its own in the baseline.
IGNORED_IN_TEMPLATES = shutil.ignore_patterns(".git", "node_modules", "__pycache__", ".venv")


def copy_template(template: Path, dest: Path) -> None:
    """Copy `template` to `dest` (which must not exist), symlinks kept as links."""
    if not template.is_dir():
        raise FileNotFoundError(f"workspace template folder {template} not found")
    shutil.copytree(template, dest, ignore=IGNORED_IN_TEMPLATES, symlinks=True)


def create_workspace(path: Path, template: str | None) -> Path:
    """Create `path` as a fresh workspace, copying `template` into it when given."""
    if path.exists():
        shutil.rmtree(path)
    if template:
        copy_template(Path(template), path)
    else:
        path.mkdir(parents=True)
    return path

"""A fresh workspace per run: an empty folder, or a copy of the suite's template."""

from __future__ import annotations

import shutil
from pathlib import Path

IGNORED_IN_TEMPLATES = shutil.ignore_patterns(".git", "node_modules", "__pycache__", ".venv")


def create_workspace(path: Path, template: str | None) -> Path:
    """Create `path` as a fresh workspace, copying `template` into it when given."""
    if path.exists():
        shutil.rmtree(path)
    if template:
        shutil.copytree(template, path, ignore=IGNORED_IN_TEMPLATES, symlinks=True)
    else:
        path.mkdir(parents=True)
    return path

"""A fresh workspace folder: empty, or a copy of the suite's template.

A template's symlinks are copied as links, but only those that stay inside the template: a
link out of it (`data -> /home/me`, `up -> ../..`) would let the agent read and write outside
its workspace through the copy, so the copy is refused (the suite's load already says so at
the template's line). A link inside that is written as an absolute path is made relative, so
the copy points into the workspace, not back into the template."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError

# A template's own git history and installed dependencies are not part of the task, and a
# nested `.git` would make the copy a repository of its own in the baseline.
IGNORED_NAMES = frozenset({".git", "node_modules", "__pycache__", ".venv"})
IGNORED_IN_TEMPLATES = shutil.ignore_patterns(*IGNORED_NAMES)


class TemplateLinkError(OSError, EvalsPipelineError):
    """A template holds a symlink that points outside it."""


def links_leaving(template: Path) -> list[tuple[Path, str]]:
    """Each symlink of `template` (the folders a copy skips left out) whose target, symlinks
    followed, is outside the template, with the target as written; dangling links count by
    where they point."""
    root = Path(os.path.realpath(template))
    leaving: list[tuple[Path, str]] = []
    for folder, dirs, names in os.walk(template):
        dirs[:] = [d for d in dirs if d not in IGNORED_NAMES]
        for name in [*dirs, *names]:
            link = Path(folder, name)
            if link.is_symlink() and not _inside(Path(os.path.realpath(link)), root):
                leaving.append((link, os.readlink(link)))
    return leaving


def copy_template(template: Path, dest: Path) -> None:
    """Copy `template` to `dest` (which must not exist), symlinks kept as links that point
    inside the copy; TemplateLinkError when one points outside the template."""
    if not template.is_dir():
        raise FileNotFoundError(f"workspace template folder {template} not found")
    leaving = links_leaving(template)
    if leaving:
        link, target = leaving[0]
        raise TemplateLinkError(
            f"the workspace template's symlink {link} points outside the template (to "
            f"{target}); replace it with a copy of what it points to, or point it inside the "
            "template"
        )
    shutil.copytree(template, dest, ignore=IGNORED_IN_TEMPLATES, symlinks=True)
    _relative_links(dest, Path(os.path.realpath(template)))


def _relative_links(copy: Path, template: Path) -> None:
    """Rewrite the copy's absolute links into the template as links relative to the copy."""
    for folder, dirs, names in os.walk(copy):
        for name in [*dirs, *names]:
            link = Path(folder, name)
            if not link.is_symlink() or not os.path.isabs(target := os.readlink(link)):
                continue
            real = Path(os.path.realpath(target))
            if _inside(real, template):
                link.unlink()
                link.symlink_to(os.path.relpath(copy / real.relative_to(template), folder))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def create_workspace(path: Path, template: str | None) -> Path:
    """Create `path` as a fresh workspace, copying `template` into it when given."""
    if path.exists():
        shutil.rmtree(path)
    if template:
        copy_template(Path(template), path)
    else:
        path.mkdir(parents=True)
    return path

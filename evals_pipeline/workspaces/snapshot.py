"""The fallback file-change diff when git cannot be used: snapshots of text files, diffed.

As in AgentV: text files up to 512 KB, skipping `.git`, `node_modules`, `.agentv` and
`__pycache__`; binary and larger files are not seen. Coarser than git, but never nothing.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path, PurePosixPath

MAX_FILE_BYTES = 512 * 1024
SKIPPED_DIRS = frozenset({".git", "node_modules", ".agentv", "__pycache__"})

Snapshot = dict[str, str]
"""Relative '/'-separated path → file text."""


def is_snapshotted(relative: str) -> bool:
    """Whether a relative path lies outside the skipped folders."""
    return not any(part in SKIPPED_DIRS for part in PurePosixPath(relative).parts[:-1])


def as_text(data: bytes) -> str | None:
    """File bytes as text, or None for what the snapshot skips (binary or too large)."""
    if len(data) > MAX_FILE_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def take_snapshot(root: Path) -> Snapshot:
    """The text files under `root` (regular files only: symlinks and FIFOs are not followed)."""
    snapshot: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name == ".git":
                continue  # a worktree's pointer to its repository, not content
            path = Path(folder, name)
            try:
                if not path.is_file() or path.is_symlink():
                    continue
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = as_text(path.read_bytes())
            except OSError:
                continue
            if text is not None:
                snapshot[path.relative_to(root).as_posix()] = text
    return snapshot


def save_snapshot(snapshot: Snapshot, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(snapshot), encoding="utf-8")


def load_snapshot(path: Path) -> Snapshot:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items()}


def snapshot_diff(before: Snapshot, after: Snapshot) -> str | None:
    """A git-style unified diff from `before` to `after`; None when nothing changed."""
    parts = [
        _file_diff(path, before.get(path), after.get(path))
        for path in sorted(before.keys() | after.keys())
        if before.get(path) != after.get(path)
    ]
    return "".join(parts) or None


def _file_diff(path: str, old: str | None, new: str | None) -> str:
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header.append("new file mode 100644\n")
    elif new is None:
        header.append("deleted file mode 100644\n")
    lines = difflib.unified_diff(
        _lines(old or ""),
        _lines(new or ""),
        fromfile="/dev/null" if old is None else f"a/{path}",
        tofile="/dev/null" if new is None else f"b/{path}",
    )
    return "".join(header) + "".join(lines)


def _lines(text: str) -> list[str]:
    # Split on "\n" only, as git does; a last line without one gets git's marker.
    lines = [line + "\n" for line in text.split("\n")]
    if lines[-1] == "\n":
        lines.pop()
    else:
        lines[-1] = lines[-1][:-1] + "\n\\ No newline at end of file\n"
    return lines

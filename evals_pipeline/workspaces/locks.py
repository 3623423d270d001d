"""One lock per source repository, held across threads and processes.

Concurrent `git worktree add` (and `remove`/`prune`) on one repository race on `.git/config.lock`
and the worktree admin folders, so every change to a repository's worktrees goes through here.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE_NAME = "evals-pipeline-worktrees.lock"

_registry_guard = threading.Lock()
_thread_locks: dict[str, threading.Lock] = {}


@contextmanager
def file_lock(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock named by `lock_file` (created if missing) for the block."""
    key = str(lock_file.absolute())
    with _registry_guard:
        thread_lock = _thread_locks.setdefault(key, threading.Lock())
    # flock serialises processes; the thread lock makes the in-process order explicit and keeps
    # waiting threads off the file descriptor table (one open lock file per process at a time).
    with thread_lock:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_file, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def repository_lock(git_common_dir: Path) -> Path:
    """The lock file guarding the worktrees of the repository whose git dir is given."""
    return git_common_dir / LOCK_FILE_NAME

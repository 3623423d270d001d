"""Who may read what the runner writes: its owner only (umask 077, files 0600, folders 0700),
unless EVALS_PIPELINE_UMASK opens it for a shared deployment (e.g. 022: readable by all).

Transcripts, kept workspaces, outputs and case records hold a suite's inputs and whatever an agent
wrote, so they are private by default. The umask is set once where a process of the runner starts
(the CLI, the code location, which run workers load); copies keep their source's mode whatever
the umask, so `clamp_tree` takes the umask's bits off what the runner copies.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.settings import Settings

UMASK_ENV = "EVALS_PIPELINE_UMASK"
DEFAULT_UMASK = 0o077


class UmaskSettingError(ValueError, EvalsPipelineError):
    """EVALS_PIPELINE_UMASK is not an octal umask."""


def configured_umask(settings: Settings | None = None) -> int:
    """The umask EVALS_PIPELINE_UMASK names (octal, e.g. 022), else 077."""
    text = ((settings or Settings.current()).umask or "").strip()
    if not text:
        return DEFAULT_UMASK
    try:
        value = int(text, 8)
    except ValueError:
        value = -1
    if not 0 <= value <= 0o777:
        raise UmaskSettingError(
            f"{UMASK_ENV}={text!r} is not an octal umask: use e.g. 077 (the default, private "
            "to the runner's user) or 022 (readable by every user of the machine)"
        )
    return value


def apply_umask(settings: Settings | None = None) -> int:
    """Set this process's umask to the one `settings` (default: this process's) configure (its
    children inherit it); the umask."""
    value = configured_umask(settings)
    os.umask(value)
    return value


def current_umask() -> int:
    """This process's umask, read without changing it (os.umask would clear it for a moment,
    under any thread writing a file then)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    value = os.umask(0o077)
    os.umask(value)
    return value


def clamp_tree(root: Path) -> None:
    """Take the umask's bits off `root` and everything under it, as if the runner had made them
    rather than copied them (symlinks are neither changed nor followed)."""
    mask = current_umask()
    if not mask:
        return
    _clamp(str(root), mask)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            _clamp(os.path.join(folder, name), mask)


def _clamp(path: str, mask: int) -> None:
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if not stat.S_ISLNK(st.st_mode) and mode & mask:
        os.chmod(path, mode & ~mask)

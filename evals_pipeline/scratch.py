"""A child's scratch folders (a grader's or an agent's private HOME): removed with one rmdir in
the usual case, where the child left nothing there, and walked only when it did."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any


def remove_scratch(folder: str | Path) -> None:
    """Delete `folder` and what is in it, if it exists; never raises. An empty folder, most
    children's HOME, costs one syscall, where shutil.rmtree's walk costs ~10 and a Python frame
    per entry (and a TemporaryDirectory a finalizer besides)."""
    try:
        os.rmdir(folder)
    except FileNotFoundError:
        return
    except OSError:  # not empty: the full walk
        with contextlib.suppress(OSError):
            shutil.rmtree(folder, onerror=make_writable_and_retry)


def make_writable_and_retry(function: Callable[..., Any], name: str, _: object) -> None:
    """Children leave read-only files and folders (a package cache): make them writable."""
    parent = os.path.dirname(name)
    with contextlib.suppress(OSError):
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        os.chmod(name, os.stat(name).st_mode | stat.S_IWUSR)
    with contextlib.suppress(FileNotFoundError):
        function(name)

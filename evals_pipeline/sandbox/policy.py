"""What one sandboxed child may touch: the folders it writes, the folders it reads that a
private /tmp would hide, its HOME, and its network."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.models.targets import SandboxNetwork


@dataclass(frozen=True)
class SandboxPolicy:
    """The sandbox of one child. The whole host filesystem is readable (read-only): the venv,
    the agents' node_modules and the suite's folder need no listing, except what lies under
    /tmp, which the private /tmp hides: `readable` binds those back read-only."""

    writable: tuple[Path, ...]
    readable: tuple[Path, ...] = ()
    home: Path | None = None
    """The child's HOME, bound writable; None leaves HOME as the environment says, read-only."""
    network: SandboxNetwork = "host"
    hidden: tuple[Path, ...] = ()
    """Files and folders made empty in the sandbox (credential stores, `.env` files: hidden.py),
    wherever they lie, inside a readable or writable folder included."""

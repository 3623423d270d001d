"""Where a suite's input files may live: inside the eval file's repository.

An input file's or file block's contents reach the agent, the graders and the report, so a
suite (or a dataset spliced into it) naming `../../home/me/.ssh/id_rsa` would publish it. A file
that resolves, after symlinks, outside the eval file's git repository (the nearest folder from
the eval file's folder up that holds `.git`; the eval file's folder itself when there is none)
is refused, unless the suite sets `allow_outside_files: true`. AgentV 4.42.4 reads such files;
this is a deliberate difference (docs/suite-format.md).
"""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.suites.probes import exists, resolved

ALLOW_KEY = "allow_outside_files"
"""The top-level suite setting that lets input files resolve anywhere."""

FIX = (
    "move the file into the repository (or link it from a folder inside, pointing inside), or "
    f"set `{ALLOW_KEY}: true` at the top of the eval file if the suite may read it: its "
    "contents reach the agent, the graders and the report"
)


def file_boundary(base_dir: Path) -> Path:
    """The folder every input file of an eval file in `base_dir` must resolve into."""
    start = resolved(base_dir)
    for folder in (start, *start.parents):
        if exists(folder / ".git"):
            return folder
    return start


def outside(path: Path, boundary: Path) -> Path | None:
    """Where `path` really is (symlinks followed) when that is outside `boundary`, else None."""
    real = resolved(path)
    return None if real == boundary or boundary in real.parents else real


def outside_message(what: str, value: str, real: Path, boundary: Path) -> str:
    """The error for `value` (an input file, a file block) that resolved to `real`, outside
    `boundary`."""
    return (
        f"{what} '{value}' resolves to {real}, outside the eval file's repository {boundary} "
        f"(`{ALLOW_KEY}` is not set)"
    )

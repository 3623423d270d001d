"""Custom assertion types: `type: <name>` runs the grader file named after it.

AgentV 4.42.4 looks, from the eval file's folder up to the filesystem root, in
`.agentv/assertions/` first, then in `.agentv/graders/` and the legacy `.agentv/judges/`, for
`<name>.ts`, `.js`, `.mts` or `.mjs`, and runs it with `bun run`. Here `.py` files are found too
(run with python3), and JavaScript runs under node when bun is not installed.
"""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.suites.probes import probed, which

ASSERTION_DIRS: tuple[str, ...] = (".agentv/assertions",)
GRADER_DIRS: tuple[str, ...] = (".agentv/graders", ".agentv/judges")
SCRIPT_SUFFIXES: tuple[str, ...] = (".ts", ".js", ".mts", ".mjs", ".py")
_TYPESCRIPT = (".ts", ".mts")


class RunnerMissing(ValueError, EvalsPipelineError):
    """The grader file exists but nothing here can run it."""


@probed  # a grader file made nearer later is the one found
def find_custom_grader(kind: str, base_dir: Path) -> Path | None:
    """The grader file for a custom type, nearest first, assertions before graders."""
    folders = [base_dir, *base_dir.parents]
    for group in (ASSERTION_DIRS, GRADER_DIRS):
        for folder in folders:
            for sub in group:
                for suffix in SCRIPT_SUFFIXES:
                    file = folder / sub / f"{kind}{suffix}"
                    if file.is_file():
                        return file
    return None


@probed  # bun installed later is the one used
def find_bun(base_dir: Path) -> str | None:
    """bun on PATH, else a project-local node_modules/.bin/bun above the eval file."""
    found = which("bun")
    if found:
        return found
    for folder in (base_dir, *base_dir.parents):
        for candidate in (
            folder / "node_modules" / ".bin" / "bun",
            folder / "conformance" / "node_modules" / ".bin" / "bun",
        ):
            if candidate.is_file():
                return str(candidate)
    return None


def grader_command(file: Path, base_dir: Path) -> list[str]:
    """How to run a custom grader file: bun (as AgentV does), node for JavaScript, python3."""
    if file.suffix == ".py":
        return [which("python3") or "python3", str(file)]
    bun = find_bun(base_dir)
    if bun is not None:
        return [bun, "run", str(file)]
    node = which("node")
    if node is not None and file.suffix not in _TYPESCRIPT:
        return [node, str(file)]
    raise RunnerMissing(
        f"the custom grader {file} needs bun"
        + ("" if file.suffix in _TYPESCRIPT else " or node")
        + " to run, and neither is installed"
    )

"""Whether a command can start: its program found (on PATH, or as a file with its run bit) and
the script it hands an interpreter present. Only what is certain is judged: a command whose
program the shell computes (`$TOOL`, `cd x && y`, a builtin) is left to the run."""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evals_pipeline.suites.paths import absolute
from evals_pipeline.suites.probes import exists, is_dir, is_executable, is_file, which

_INTERPRETER = re.compile(
    r"(python(\d+(\.\d+)?)?|node|nodejs|bun|deno|tsx|ts-node|uv|sh|bash|zsh|dash|ruby|perl|php"
    r"|Rscript)"
)
"""Programs whose first file argument is the script they run (`python3 grade.py`)."""
_SUBCOMMANDS = frozenset({"run"})
"""`bun run x.ts`, `uv run grade.py`, `deno run x.ts`: the word before the script."""
_NO_SCRIPT = frozenset({"-m", "-c", "-e", "--eval", "-p", "--print", "-"})
"""Arguments after which an interpreter runs no script file (`python3 -m pkg`, `node -e ...`)."""
_SCRIPT_SUFFIX = re.compile(r"\.([cm]?[jt]sx?|py|sh|bash|rb|go|rs)$", re.IGNORECASE)
_SHELL_WORDS = frozenset(
    {
        ".", ":", "source", "cd", "exec", "eval", "export", "set", "unset", "alias", "command",
        "builtin", "if", "for", "while", "until", "case", "function", "{", "(", "!", "time",
        "[", "[[", "test", "echo", "printf", "true", "false", "read", "trap", "ulimit", "umask",
    }
)  # fmt: skip
"""Shell builtins and keywords: not looked for on PATH."""
_INTERPRETER_OF = {".py": "python3", ".js": "node", ".mjs": "node", ".cjs": "node", ".ts": "bun"}
"""The interpreter to suggest for a script without its run bit (else bash)."""
_COMPUTED = re.compile(r"[$`*?\[\]{}~]")
"""A word the shell expands: what it runs is known only then."""


@dataclass(frozen=True)
class StartProblem:
    """Why a command cannot start, and the fix."""

    message: str
    fix: str


def child_path(env: Mapping[str, str] | None = None) -> str:
    """The PATH a grader or agent command is looked up on: this Python's folder first, as
    process.child_env sets it, over `env`'s PATH (a target's own) or this process's."""
    path = (env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
    return os.pathsep.join([str(Path(sys.executable).parent), path])


def start_problem(
    command: str | list[str], cwd: Path | None, path: str | None = None
) -> StartProblem | None:
    """Why `command` (argv, or a line for the shell) cannot start in `cwd`, or None when it can
    or that is not certain. `cwd` None: it runs in a folder made later (a workspace), so paths
    relative to it are not judged."""
    words = list(command) if isinstance(command, list) else _first_simple_command(command)
    if not words:
        return None
    program = words[0]
    if "/" in program:
        problem = _file_problem(program, cwd, program=True)
    elif isinstance(command, str) and (program in _SHELL_WORDS or _COMPUTED.search(program)):
        return None
    elif which(program, path or child_path()) is None:
        here = cwd / program if cwd is not None else None
        hint = f"; to run {here} write ./{program}" if here is not None and is_file(here) else ""
        problem = StartProblem(
            f"'{program}' is not found on PATH",
            f"install it or put its folder on PATH, or give its path{hint}",
        )
    else:
        problem = None
    if problem is not None:
        return problem
    script = _script_of(words)
    return _file_problem(script, cwd, program=False) if script is not None else None


def _first_simple_command(line: str) -> list[str]:
    """The words of the first command a shell line runs, assignments (`A=1 cmd`) skipped;
    [] when its program is not plain text."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= set("();<>|&"):
                break
            words.append(token)
    except ValueError:  # an unclosed quote: the shell says what is wrong
        return []
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    if words and _COMPUTED.search(words[0]):
        return []
    return words


def _script_of(words: list[str]) -> str | None:
    """The script file an interpreter command runs (`python3 -u grade.py` → grade.py), or None."""
    if not _INTERPRETER.fullmatch(Path(words[0]).name):
        return None
    for index, word in enumerate(words[1:], start=1):
        if word in _NO_SCRIPT:
            return None
        if index == 1 and word in _SUBCOMMANDS:
            continue
        if word.startswith("-") or _COMPUTED.search(word):
            continue
        if word.startswith(".") or "/" in word or _SCRIPT_SUFFIX.search(word):
            return word  # AgentV's test of a file path (grader-parser.ts looksLikeFilePath)
    return None


def _file_problem(written: str, cwd: Path | None, *, program: bool) -> StartProblem | None:
    if cwd is None and not Path(written).expanduser().is_absolute():
        return None
    file = absolute(written, cwd or Path("/"))
    what = "program" if program else "script"
    if not exists(file):
        return StartProblem(
            f"{what} '{written}' is not found (looked for {file})",
            f"create it or correct the path (relative to the folder the command runs in, {cwd})"
            if cwd is not None
            else "create it or correct the path",
        )
    if is_dir(file):
        return StartProblem(f"{what} '{written}' is a folder ({file})", "name the file to run")
    if program and not is_executable(file):
        return StartProblem(
            f"program '{written}' lacks its run bit ({file})",
            f"chmod +x {shlex.quote(str(file))}, or run it through its interpreter: "
            f"[{_INTERPRETER_OF.get(file.suffix.lower(), 'bash')}, {written}]",
        )
    return None

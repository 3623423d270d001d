"""Result-cache keys: a hash of everything a result depends on, so an unchanged case is reused
and a changed one re-runs.

A run's key covers what the agent sees and how it is run: the test's input, the target's
resolved config (provider, model, flags), the agent CLI's version, the workspace spec and the
content of every file or folder the case names as a file (input files, file blocks, templates,
local repositories, and the files named in the target's and hooks' commands), and the trial. A
grade's key adds what grading reads: assertions, criteria, expected output, threshold, grader
targets, the graders' own files (scripts, commands, prompt files), and its trials' run keys; a
trial's grade key the same with that one trial's run key. Changing a grader re-grades without
re-running the agent. How trials add up (`trials.strategy`, `cost_limit_usd`) is in no key: a
case's grade is aggregated again from its stored trial grades on every run. Which fields name files is decided
by the case's structure (models/case_files.py): a path written in a prompt is never opened.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shlex
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.case_files import NamedFiles, grade_files, run_files
from evals_pipeline.models.suite import JudgingSpec
from evals_pipeline.models.targets import LlmTargetSpec

# Bump when a stored record's meaning changes: every earlier result is then a miss.
KEY_VERSION = 1

# Fields that shape grading only, or the run's scheduling: left out of the run key.
_GRADING_FIELDS = frozenset(
    {
        "assertions",
        "criteria",
        "expected_output",
        "threshold",
        "grader_target",
        "llm_targets",
        "metadata",
        "agentv_scoring",
    }
)
_SCHEDULING_FIELDS = frozenset(
    {
        "suite_path",
        "trials",
        "depends_on",
        "on_dependency_failure",
        "budget_usd",
        "fail_on_error",
        "cache",
        "run_budget_usd",
        "keep_workspaces",
        "cannot_run",
    }
)
_NOT_RUN_FIELDS = _GRADING_FIELDS | _SCHEDULING_FIELDS
# Never part of a folder's content: version control, dependency installs and caches.
_SKIPPED_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".evals"})

Identity = Callable[[ResolvedCase], str | None]
"""The agent CLI's version (or any other identity) of a case's target; None when unknown."""


def agent_identity(case: ResolvedCase) -> str | None:
    """The version the case's agent CLI reports, probed once per process and command."""
    # Imported here: the adapters (~0.4 s) are not needed by the code version of a suite,
    # which every code location load computes with these keys.
    from evals_pipeline.adapters.identity import agent_version

    return agent_version(case.target, case.base_dir)


@dataclass(frozen=True)
class CaseKeys:
    """The keys of one (case, agent): one per trial's run, one per trial's grade, and the
    grade's over all trials."""

    runs: tuple[str, ...]
    grade: str
    trial_grades: tuple[str, ...] = ()

    def run(self, trial: int) -> str:
        return self.runs[trial]

    def trial_grade(self, trial: int) -> str:
        return self.trial_grades[trial]


class FileLookups:
    """The files named by a pass over many cases, each looked up and hashed once: the cases of
    a suite name the same graders and scripts. A file changed later is seen by the next pass."""

    def __init__(self) -> None:
        self._named: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._in_text: dict[str, dict[str, list[tuple[str, str]]]] = {}  # by base, by text
        self._folders: dict[str, Path] = {}

    def folder(self, name: str) -> Path:
        """`Path(name)`, made once per pass: every case of a suite has the same base folder."""
        path = self._folders.get(name)
        if path is None:
            path = self._folders[name] = Path(name)
        return path

    def in_text(self, text: str, base: Path, base_text: str) -> list[tuple[str, str]]:
        """The (path, content hash) of each file or folder a string names, in order: the
        cases' commands, names and paths repeat, so each string is split and looked up once."""
        known = self._in_text.setdefault(base_text, {})
        found = known.get(text)
        if found is None:
            tokens = _tokens(text.replace("{EVAL_DIR}", base_text))
            named = (self.named(token, base, base_text) for token in tokens)
            found = known[text] = [n for n in named if n is not None]
        return found

    def in_texts(self, texts: list[str], base: Path, base_text: str) -> dict[str, str]:
        """The content hash of each file or folder any of `texts` names, by path (the first
        found for a path), with a dictionary look-up per string already seen: a suite's cases
        hold hundreds of thousands of strings, nearly all of them seen before."""
        known = self._in_text.setdefault(base_text, {})
        found: dict[str, str] = {}
        for text in texts:
            named = known.get(text)
            if named is None:
                named = self.in_text(text, base, base_text)
            for path, digest in named:
                found.setdefault(path, digest)
        return found

    def named(self, token: str, base: Path, base_text: str) -> tuple[str, str] | None:
        """The path and content hash of the file or folder `token` names, if it exists and is
        neither `base` (whose text is `base_text`) nor one of its ancestors."""
        key = (token, base_text)
        if key not in self._named:
            path = _existing(token, base_text)
            keep = path is not None and path != base and path not in base.parents
            self._named[key] = (str(path), content_hash(path)) if keep and path else None
        return self._named[key]


def case_keys(
    case: ResolvedCase, identity: Identity = agent_identity, files: FileLookups | None = None
) -> CaseKeys:
    """The run keys (one per trial) and the grade key of `case`; `files` shares the lookups of
    the files cases name across a pass over many cases."""
    files = files or FileLookups()
    # Off, the run option leaves the keys as they were before it existed.
    exclude = {"suite_path"} if case.agentv_scoring else {"suite_path", "agentv_scoring"}
    spec = case.model_dump(mode="json", exclude=exclude)
    base = files.folder(case.base_dir)
    run_spec = {k: v for k, v in spec.items() if k not in _NOT_RUN_FIELDS}
    if isinstance(run_spec.get("workspace"), dict):  # when a workspace is deleted is not an input
        run_spec["workspace"] = {k: v for k, v in run_spec["workspace"].items() if k != "cleanup"}
    run_hashes = referenced_files(run_files(case), base, files)
    run_finite = _finite(run_spec)
    run_base = {
        "version": KEY_VERSION,
        "spec": run_spec,
        "files": run_hashes,
        "identity": identity(case),
    }
    runs = tuple(
        _digest({**run_base, "trial": t}, finite=run_finite) for t in range(case.trials.count)
    )
    grading = {k: v for k, v in spec.items() if k in _GRADING_FIELDS}
    grade_hashes = referenced_files(grade_files(case), base, files)
    grade_base = {"version": KEY_VERSION, "grading": grading, "files": grade_hashes}
    grading_finite = _finite(grading)
    grade = _digest({**grade_base, "runs": runs}, finite=grading_finite)
    trial_grades = tuple(
        _digest({**grade_base, "trial_run": run}, finite=grading_finite) for run in runs
    )
    return CaseKeys(runs=runs, grade=grade, trial_grades=trial_grades)


def votes_key(
    grade_key: str, trial: int, judging: JudgingSpec, judges: Mapping[str, LlmTargetSpec]
) -> str:
    """The key of some judges' votes on one trial: its grade's key (which covers the runs), the
    panel's spec and the judges' targets (their keys left out: a key never shapes a vote)."""
    return _digest(
        {
            "version": KEY_VERSION,
            "grade": grade_key,
            "trial": trial,
            "judging": judging.model_dump(mode="json"),
            "judges": {
                name: target.model_dump(mode="json", exclude={"api_key"})
                for name, target in judges.items()
            },
        }
    )


def _digest(value: Any, *, finite: bool = False) -> str:
    """The key of `value`: a hash of `json.dumps(value, sort_keys=True, separators=(",", ":"),
    default=str)`. `finite`: the caller walked `value` and found no NaN or infinite float (which
    orjson writes as null), so the faster canonical_json may write it."""
    if finite:
        return hashlib.sha256(canonical_json(value)).hexdigest()[:32]
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


_PLAIN_ONLY = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_DIGITS = frozenset(b"0123456789")


def canonical_json(value: Any) -> bytes:
    """`json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)`, byte for byte
    (the keys stored with every result are hashes of it), for JSON data without NaN or infinite
    floats. orjson writes the same bytes ~2x faster when they are ASCII; json.dumps writes
    whatever orjson might write otherwise."""
    try:
        text = orjson.dumps(value, default=_not_plain, option=_PLAIN_ONLY)
    except TypeError:  # orjson.JSONEncodeError: not JSON data (or an int over 64 bits)
        text = b"\x7f"
    if text.isascii() and not _may_differ(text):
        return text
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def _may_differ(text: bytes) -> bool:
    """Whether json.dumps may write ASCII `text` otherwise: DEL (which only it escapes), a float
    it writes with an exponent (orjson writes 1e-05 as 0.00001, so any "0.0000"), or one of its
    exponents (orjson writes them alike, but either way they are rare). Substring searches:
    a regular expression over every case's text costs more than the encoding."""
    if b"\x7f" in text or b"0.0000" in text:
        return True
    for sign in (b"e+", b"e-"):
        at = text.find(sign)
        while at > 0:
            if text[at - 1] in _DIGITS:
                return True
            at = text.find(sign, at + 2)
    return False


def _not_plain(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to json.dumps")


def referenced_files(named: NamedFiles, base: Path, files: FileLookups) -> dict[str, str]:
    """The content hash of every existing file or folder `named` names, by path.

    A command is split like a shell command line, so `python3 graders/check.py` names
    `graders/check.py`; relative names and `{EVAL_DIR}` resolve to the eval file's folder. The
    eval file's own folder and its ancestors are left out: they hold everything, the storage
    root included.
    """
    base_text = str(base)
    found = files.in_texts(named.commands, base, base_text)
    for path in named.paths:
        hit = files.named(path.replace("{EVAL_DIR}", base_text), base, base_text)
        if hit is not None:
            found.setdefault(*hit)
    return found


def _finite(value: Any) -> bool:
    """Whether every float in `value` is finite (_digest's `finite`): a call per container,
    not per value, as a suite's cases hold millions of values."""
    if not isinstance(value, dict | list):
        return not (value.__class__ is float and value - value != 0.0)
    finite = True
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, dict | list):
            finite = _finite(item) and finite
        elif item.__class__ is float and item - item != 0.0:  # NaN or infinite
            finite = False
    return finite


_QUOTING = re.compile(r"[\"'\\]")
_BLANKS = re.compile(r"[ \t\r\n]+")  # shlex's whitespace: str.split() would split on more


@functools.lru_cache(maxsize=4096)  # cases repeat the same commands and paths
def _tokens(text: str) -> tuple[str, ...]:
    if "\n" in text or len(text) > 4096:  # prose (a prompt), not a command or a path
        return ()
    if not _QUOTING.search(text):  # shlex.split's words, without its char-by-char lexer
        return tuple(word for word in _BLANKS.split(text) if word)
    try:
        return tuple(shlex.split(text))
    except ValueError:
        return tuple(text.split())


def _existing(token: str, base: str) -> Path | None:
    if not token or token.startswith("-") or ("/" not in token and "." not in token):
        return None
    # os.path, not pathlib: most tokens are words of a prompt that name nothing
    path = token if os.path.isabs(token) else os.path.join(base, token)
    try:
        return Path(path).resolve() if os.path.exists(path) else None
    except (OSError, ValueError):  # a token too long to be a file name, or with a NUL
        return None


_hash_lock = threading.Lock()
_hashes: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


def content_hash(path: Path) -> str:
    """A hash of a file's bytes, or of a folder's file names and bytes; files are read again only
    when their size or modification time changed since the last hash in this process."""
    files = [path] if path.is_file() else sorted(_files(path))
    signature = tuple(_stat(f, path) for f in files)
    memo_key = (str(path), signature)
    with _hash_lock:
        known = _hashes.get(memo_key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    for file, (name, _, _) in zip(files, signature, strict=True):
        digest.update(name.encode() + b"\0")
        try:
            with file.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
        except OSError as exc:  # unreadable: its error is its content
            digest.update(str(exc).encode())
    value = digest.hexdigest()[:32]
    with _hash_lock:
        _hashes[memo_key] = value
    return value


def _files(folder: Path) -> Iterator[Path]:
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        for name in names:
            yield Path(root, name)


def _stat(file: Path, top: Path) -> tuple[str, int, int]:
    name = file.name if file == top else str(file.relative_to(top))
    try:
        info = file.stat()
    except OSError:
        return (name, -1, -1)
    return (name, info.st_size, info.st_mtime_ns)

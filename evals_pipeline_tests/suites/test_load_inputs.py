"""A loaded suite knows what its load read (`inputs_hold`): every file, folder, program and
setting, so a cases sensor can take it again instead of loading it on each tick."""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

import pytest

from evals_pipeline.suites import LoadedSuite, SuiteError, discover_suites, load_suite, probes
from evals_pipeline_tests.conformance.corpus import corpus_root

REPO = Path(__file__).resolve().parents[2]
SUITE_FOLDERS = [
    REPO / "conformance",
    REPO / "examples",
    REPO / "evals_pipeline_tests/fixtures",
    corpus_root() / "examples",
    corpus_root() / "evals",
]
_PROBE_CODE: CodeType = probes.probed(lambda: None).__code__
"""The code of every probed function's wrapper: a call under one of them is recorded."""
_OS_CALLS = ("stat", "lstat", "listdir", "scandir", "access", "readlink", "getcwd")


def _unprobed_site() -> str | None:
    """Where the loader touched the file system outside a probe; None when inside one (or in
    the parse cache, whose kept parses are keyed by the text read)."""
    frame = sys._getframe(2)
    site = None
    while frame is not None:
        code = frame.f_code
        if code is _PROBE_CODE or code.co_filename.endswith("parse_cache.py"):
            return None
        if site is None and "/evals_pipeline/suites/" in code.co_filename:
            site = f"{code.co_filename.split('/evals_pipeline/')[-1]}:{frame.f_lineno}"
        frame = frame.f_back
    return site or "?"


@pytest.fixture
def unprobed(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """The file-system calls (and processes) made outside a probe while it is open."""
    found: set[str] = set()

    def traced(name: str, real: object) -> object:
        def call(*args: object, **kwargs: object) -> object:
            site = _unprobed_site()
            if site is not None:
                found.add(f"{name}({args[0] if args else ''}) at {site}")
            return real(*args, **kwargs)  # type: ignore[operator]

        return call

    for name in _OS_CALLS:
        monkeypatch.setattr(os, name, traced(f"os.{name}", getattr(os, name)))
    monkeypatch.setattr(io, "open", traced("open", io.open))
    monkeypatch.setattr(builtins, "open", traced("open", builtins.open))
    monkeypatch.setattr(subprocess, "Popen", traced("subprocess", subprocess.Popen))
    yield found


def test_every_file_a_load_reads_is_recorded(unprobed: set[str]) -> None:
    """Every suite of the repository (the conformance suites, the examples and the broken
    fixtures) and of AgentV's corpus loads with each file-system call made under a probe: a loader
    change that reads a file directly fails here, naming the line."""
    suites = list(discover_suites([str(folder) for folder in SUITE_FOLDERS]))
    assert len(suites) > 100
    unprobed_calls = set(unprobed)  # discovery is not the load
    unprobed.clear()
    for suite in suites:
        with contextlib.suppress(SuiteError):  # a broken suite's load reads its files too
            load_suite(suite)
    assert not unprobed, sorted(unprobed)
    assert unprobed_calls, "the tracing sees calls outside a probe"


SUITE = """\
name: inputs
tests: ./cases.yaml
"""
CASES = """\
- id: greets
  input: Say hi.
  assertions: [{type: contains, value: hi}]
"""
TARGETS = """\
targets:
  - {name: default, provider: mock, response: hi}
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """An eval file in project/evals whose tests are in another file and whose targets are in
    the project's .agentv/targets.yaml."""
    evals = tmp_path / "project" / "evals"
    evals.mkdir(parents=True)
    (tmp_path / "project" / ".agentv").mkdir()
    (tmp_path / "project" / ".agentv" / "targets.yaml").write_text(TARGETS)
    (evals / "cases.yaml").write_text(CASES)
    path = evals / "inputs.eval.yaml"
    path.write_text(SUITE)
    return path


def test_an_unchanged_suite_holds(suite: Path) -> None:
    loaded = load_suite(suite)
    assert loaded.inputs_hold()
    assert load_suite(suite) == loaded


def test_an_edited_tests_file_does_not_hold(suite: Path) -> None:
    loaded = load_suite(suite)
    (suite.parent / "cases.yaml").write_text(CASES.replace("Say hi.", "Say hello."))
    assert not loaded.inputs_hold()


def test_a_nearer_targets_file_does_not_hold(suite: Path) -> None:
    loaded = load_suite(suite)
    (suite.parent / ".agentv").mkdir()
    (suite.parent / ".agentv" / "targets.yaml").write_text(TARGETS.replace("hi}", "hello}"))
    assert not loaded.inputs_hold()
    assert load_suite(suite).targets != loaded.targets


def test_a_new_env_file_does_not_hold(suite: Path) -> None:
    loaded = load_suite(suite)
    (suite.parent / ".env").write_text("SOME_SETTING=1\n")
    assert not loaded.inputs_hold()


def test_another_working_folder_does_not_hold(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_suite(suite)
    monkeypatch.chdir(tmp_path)
    assert not loaded.inputs_hold()


def test_a_missing_file_that_stays_missing_holds(suite: Path) -> None:
    # A load that looked for a file and found none holds until the file is made.
    suite.write_text(SUITE + "workspace: ./workspace.yaml\n")
    with pytest.raises(SuiteError, match="workspace file"):
        load_suite(suite)
    suite.write_text(SUITE)
    loaded = load_suite(suite)
    (suite.parent / "unrelated.txt").write_text("not read by the load")
    assert loaded.inputs_hold()


def test_a_suite_made_otherwise_does_not_claim_to_hold(suite: Path) -> None:
    loaded = load_suite(suite)
    made = LoadedSuite(**{name: getattr(loaded, name) for name in LoadedSuite.model_fields})
    assert not made.inputs_hold()


def test_a_loaded_suite_pickles_with_what_it_read(suite: Path) -> None:
    copy = pickle.loads(pickle.dumps(load_suite(suite)))
    assert copy.inputs_hold()
    (suite.parent / "cases.yaml").write_text(CASES.replace("Say hi.", "Say hello."))
    assert not copy.inputs_hold()

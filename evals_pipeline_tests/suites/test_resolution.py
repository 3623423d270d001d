"""A resolution kept with its probes: reused only while the suite loads the same and the files
it read and looked for are as they were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.resolution import resolve_recorded

SUITE = """\
name: probed
execution: {targets: [one, two]}
targets:
  - {name: one, provider: mock, response: hi}
  - {name: two, provider: mock, response: hello}
tests:
  - id: reads-notes
    input: Summarise.
    input_files: [notes.txt]
    assertions: [{type: contains, value: hi}]
  - id: grades-in-a-folder
    input: Say hi.
    assertions: [{type: code-grader, command: [python3, check.py], cwd: graders}]
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("the notes")
    path = tmp_path / "probed.eval.yaml"
    path.write_text(SUITE)
    return path


def test_its_hashes_are_the_cases_hashes(suite: Path) -> None:
    resolution = resolve_recorded(load_suite(suite))
    expected: dict[str, dict[str, str]] = {}
    for case in resolve_cases(load_suite(suite)):
        expected.setdefault(case.case_key, {})[case.agent] = case.content_hash
    assert resolution.content_hashes() == expected
    assert resolution.holds_for(load_suite(suite))


def test_an_edited_suite_file_does_not_hold(suite: Path) -> None:
    resolution = resolve_recorded(load_suite(suite))
    suite.write_text(SUITE.replace("Say hi.", "Say hi twice."))
    assert not resolution.holds_for(load_suite(suite))


def test_an_edited_input_file_does_not_hold(suite: Path) -> None:
    resolution = resolve_recorded(load_suite(suite))
    (suite.parent / "notes.txt").write_text("other notes")
    assert not resolution.holds_for(load_suite(suite))


def test_a_folder_made_where_one_was_looked_for_does_not_hold(suite: Path) -> None:
    resolution = resolve_recorded(load_suite(suite))
    (suite.parent / "graders").mkdir()
    assert not resolution.holds_for(load_suite(suite))


def test_another_working_folder_does_not_hold(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The grader's cwd, found nowhere, is taken relative to the working folder.
    resolution = resolve_recorded(load_suite(suite))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert os.getcwd() == str(elsewhere)
    assert not resolution.holds_for(load_suite(suite))


def test_its_contents_are_the_hashes_and_the_files_named_as_files(suite: Path) -> None:
    # A prompt naming a file is text: only the fields that name files are listed.
    (suite.parent / "secret.txt").write_text("not an input\n")
    suite.write_text(SUITE.replace("input: Say hi.", "input: Read secret.txt and say hi."))
    (suite.parent / "graders").mkdir()
    resolution = resolve_recorded(load_suite(suite))
    hashes, named = resolution.contents()
    expected: dict[str, dict[str, str]] = {}
    for case in resolve_cases(load_suite(suite)):
        expected.setdefault(case.case_key, {})[case.agent] = case.content_hash
    assert hashes == expected
    assert {"python3", "check.py"} <= set(named.paths)  # a grader's argv, word by word
    assert str(suite.parent / "graders") in named.paths  # the grader's cwd, made absolute
    assert not any("secret" in name for name in [*named.paths, *named.commands])
    assert resolution.cases, "the cases are kept until content_hashes is asked"
    assert resolution.content_hashes() == expected and not resolution.cases

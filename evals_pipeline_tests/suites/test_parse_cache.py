"""A large eval file's parse is kept under the Dagster instance's folder and read back while the
file is unchanged; an edited file is parsed again, errors keep their lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError, load_suite, parse_cache, resolve_cases
from evals_pipeline_tests.suites.conftest import Project

TESTS = 3_000  # ~300 KB: over parse_cache.MIN_CHARS


def large_suite(inputs: str = "Say hello") -> str:
    tests = "".join(
        f"  - id: case-{i}\n    input: {inputs} {i}\n    criteria: Greets case {i} politely\n"
        "    assertions:\n      - type: contains\n        value: hello\n"
        for i in range(TESTS)
    )
    return f"name: big\nexecution:\n  targets: [mock]\ntests:\n{tests}"


@pytest.fixture
def instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "dagster"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setattr(parse_cache, "_memory", type(parse_cache._memory)())
    return home


def kept_files(home: Path) -> list[Path]:
    return sorted((home / "parsed-suites").glob("*.marshal"))


def forget_in_memory() -> None:
    """As a new process: only the instance folder's files remain."""
    parse_cache._memory.clear()


def test_a_kept_parse_loads_the_same_suite(project: Project, instance: Path) -> None:
    path = project.write("big.eval.yaml", large_suite())
    fresh = resolve_cases(load_suite(path))
    assert len(kept_files(instance)) == 1
    forget_in_memory()
    again = resolve_cases(load_suite(path))  # from the instance folder's file
    assert [c.content_hash for c in again] == [c.content_hash for c in fresh]
    kept = resolve_cases(load_suite(path))  # from memory: the first load changed nothing kept
    assert [c.content_hash for c in kept] == [c.content_hash for c in fresh]


def test_an_edited_file_is_parsed_again_and_replaces_its_kept_parse(
    project: Project, instance: Path
) -> None:
    path = project.write("big.eval.yaml", large_suite())
    load_suite(path)
    path.write_text(large_suite("Say goodbye"), encoding="utf-8")
    for _ in range(2):  # from memory, then as a new process would
        cases = resolve_cases(load_suite(path))
        assert cases[7].prompt.endswith("Say goodbye 7")
        forget_in_memory()
    assert len(kept_files(instance)) == 1


def test_errors_keep_their_lines_when_the_parse_was_kept(project: Project, instance: Path) -> None:
    text = large_suite().replace("  - id: case-2999\n", "  - id: case-2999\n    depends_on: 1\n")
    path = project.write("big.eval.yaml", text)
    lines = []
    for _ in range(2):
        with pytest.raises(SuiteError) as caught:
            load_suite(path)
        [issue] = [i for i in caught.value.issues if "depends_on" in i.message]
        lines.append(issue.line)
        forget_in_memory()
    assert lines[0] == lines[1] == text.splitlines().index("    depends_on: 1") + 1


def test_without_an_instance_folder_nothing_is_written(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "not-made-yet"))
    path = project.write("big.eval.yaml", large_suite())
    assert len(resolve_cases(load_suite(path))) == TESTS
    assert not (tmp_path / "not-made-yet").exists()


def test_a_damaged_kept_parse_is_parsed_again(project: Project, instance: Path) -> None:
    path = project.write("big.eval.yaml", large_suite())
    load_suite(path)
    [kept] = kept_files(instance)
    header = kept.read_bytes().split(b"\n", 1)[0]
    kept.write_bytes(header + b"\nnot marshal data")
    forget_in_memory()
    assert len(resolve_cases(load_suite(path))) == TESTS


def test_duplicate_ids_name_both_lines_when_the_parse_was_kept(
    project: Project, instance: Path
) -> None:
    text = large_suite().replace("  - id: case-2999\n", "  - id: case-7\n")
    path = project.write("big.eval.yaml", text)
    lines = text.splitlines()
    first, second = (i + 1 for i, line in enumerate(lines) if line == "  - id: case-7")
    for _ in range(2):
        with pytest.raises(SuiteError) as caught:
            load_suite(path)
        [issue] = [i for i in caught.value.issues if "duplicate test id" in i.message]
        assert issue.line == second
        assert f"already used at line {first}" in issue.message
        forget_in_memory()

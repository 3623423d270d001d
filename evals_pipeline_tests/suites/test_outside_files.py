"""Input files and file blocks that resolve outside the eval file's repository are refused at
their line, unless the suite sets `allow_outside_files: true`: their contents reach the agent,
the graders and the report."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from evals_pipeline.suites import SuiteError, load_suite, resolve_cases

TARGETS = 'targets: [{name: t, provider: cli, command: "echo {PROMPT_FILE} {OUTPUT_FILE}"}]\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/outside.txt next to a repository tmp/repo with the eval file in tmp/repo/evals."""
    (tmp_path / "outside.txt").write_text("the runner's private notes\n")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "evals").mkdir()
    (tmp_path / "repo" / "inside.txt").write_text("shared notes\n")
    return tmp_path / "repo"


def write(repo: Path, tests: str, top: str = "") -> Path:
    path = repo / "evals" / "files.eval.yaml"
    path.write_text(f"name: files\n{top}{TARGETS}tests:\n" + dedent(tests))
    return path


def refused(path: Path) -> str:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    [issue] = [i for i in caught.value.issues if "outside the eval file's repository" in i.message]
    return f"{Path(issue.file).name}:{issue.line}:{issue.column}: {issue.message} / {issue.fix}"


def test_an_input_file_outside_the_git_root_is_refused_at_its_line(repo: Path) -> None:
    path = write(
        repo,
        """\
        - id: reads
          input: Summarise.
          input_files:
            - ../inside.txt
            - ../../outside.txt
        """,
    )
    said = refused(path)
    assert said.startswith("files.eval.yaml:8:")
    assert f"'../../outside.txt' resolves to {repo.parent / 'outside.txt'}" in said
    assert "allow_outside_files: true" in said


def test_a_file_block_outside_is_refused_and_a_link_out_is_followed(repo: Path) -> None:
    (repo / "link.txt").symlink_to(repo.parent / "outside.txt")
    path = write(
        repo,
        """\
        - id: block
          input:
            - role: user
              content:
                - {type: file, value: ../link.txt}
                - {type: text, value: Summarise.}
        """,
    )
    said = refused(path)
    assert said.startswith("files.eval.yaml:8:")
    assert f"file block '../link.txt' resolves to {repo.parent / 'outside.txt'}" in said


def test_the_setting_allows_them(repo: Path) -> None:
    path = write(
        repo,
        """\
        - id: reads
          criteria: Summarises.
          input:
            - role: user
              content: [{type: file, value: ../../outside.txt}, {type: text, value: Summarise.}]
          input_files: [../../outside.txt]
        """,
        top="allow_outside_files: true\n",
    )
    loaded = load_suite(path)
    assert not [w for w in loaded.warnings if "allow_outside_files" in w.message]
    [case] = resolve_cases(loaded)
    assert str(repo.parent / "outside.txt") in case.input_files
    assert "the runner's private notes" in case.model_dump_json()


def test_files_inside_the_repository_load(repo: Path) -> None:
    (repo / "evals" / "data").mkdir()
    (repo / "evals" / "data" / "a.txt").write_text("a\n")
    (repo / "evals" / "data" / "link.txt").symlink_to(repo / "inside.txt")
    path = write(
        repo,
        """\
        - id: reads
          input: Summarise.
          criteria: Summarises.
          input_files: [data/a.txt, data/link.txt, ../inside.txt]
        """,
    )
    [case] = resolve_cases(load_suite(path))
    assert len(case.input_files) == 3


def test_without_a_repository_the_eval_files_folder_is_the_boundary(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("x\n")
    (tmp_path / "evals").mkdir()
    path = tmp_path / "evals" / "files.eval.yaml"
    path.write_text(
        f"name: files\n{TARGETS}tests:\n  - id: a\n    input: hi\n"
        "    input_files: [../outside.txt]\n"
    )
    assert "'../outside.txt' resolves to" in refused(path)


def test_a_file_a_tests_vars_fill_in_is_refused_before_it_is_read(repo: Path) -> None:
    path = write(
        repo,
        """\
        - id: filled
          input: Summarise.
          criteria: Summarises.
          vars: {name: ../../outside.txt}
        """,
        top="input_files: ['{{name}}']\n",
    )
    with pytest.raises(SuiteError, match="outside the eval file's repository"):
        resolve_cases(load_suite(path))

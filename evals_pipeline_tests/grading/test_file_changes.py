"""file-changes: added, modified and deleted files read from a real git diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evals_pipeline.grading import grade_trial
from evals_pipeline.grading.assertions.file_changes import changed_files
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader


def git_diff(tmp_path: Path) -> str:
    """A real `git diff` with a new, an edited, a deleted and a renamed file."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    git("init", "-q")
    (repo / "edit.py").write_text("a = 1\n")
    (repo / "gone.py").write_text("b = 2\n")
    (repo / "old_name.py").write_text("c = 3\n" * 20)
    git("add", "-A")
    git("commit", "-qm", "base")
    (repo / "edit.py").write_text("a = 2\n")
    (repo / "gone.py").unlink()
    (repo / "src").mkdir()
    (repo / "src" / "new.py").write_text("print('hi')\n")
    (repo / "old_name.py").rename(repo / "new_name.py")
    git("add", "-A")
    return git("diff", "--cached", "-M", "HEAD")


def test_changed_files_reads_every_kind_of_change(tmp_path: Path) -> None:
    assert changed_files(git_diff(tmp_path)) == {
        "edit.py": "modified",
        "gone.py": "deleted",
        "src/new.py": "added",
        "old_name.py": "deleted",
        "new_name.py": "added",
    }
    assert changed_files(None) == {}


def test_expected_changes_pass_and_unexpected_ones_fail(
    tmp_path: Path, make_case: CaseFactory, make_session: SessionFactory
) -> None:
    diff = git_diff(tmp_path)
    good = make_case(
        [
            {
                "type": "file-changes",
                "added": ["src/*.py"],
                "modified": ["edit.py"],
                "deleted": ["gone.py"],
                "unchanged": ["README.md"],
            }
        ]
    )
    result = only_grader(grade_trial(good, make_session(file_changes=diff)))
    assert result.score == 1.0
    assert "added src/new.py" in (result.assertions[0].evidence or "")

    strict = make_case([{"type": "file-changes", "modified": ["edit.py"], "only": True}])
    result = only_grader(grade_trial(strict, make_session(file_changes=diff)))
    assert result.score == 0.5
    assert result.assertions[1].passed is False
    assert "gone.py" in (result.assertions[1].evidence or "")


def test_no_expectations_means_something_changed(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    case = make_case([{"type": "file-changes"}])
    assert only_grader(grade_trial(case, make_session(file_changes=None))).score == 0.0

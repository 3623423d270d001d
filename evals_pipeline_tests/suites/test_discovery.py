from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError, discover_suites


def touch(root: Path, *relatives: str) -> None:
    for relative in relatives:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("tests: []\n")


def test_folders_are_searched_recursively_and_sorted(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "b.eval.yaml",
        "a/z.eval.yml",
        "a/deep/EVAL.yaml",
        "notes.yaml",
        "a/eval.yaml",
        ".hidden/x.eval.yaml",
        ".agentv/y.eval.yaml",
        "node_modules/pkg/z.eval.yaml",
        ".venv/lib/w.eval.yaml",
    )
    assert discover_suites([tmp_path]) == [
        tmp_path / "a/deep/EVAL.yaml",
        tmp_path / "a/z.eval.yml",
        tmp_path / "b.eval.yaml",
    ]


def test_files_given_directly_are_kept_whatever_their_name(tmp_path: Path) -> None:
    touch(tmp_path, "suite.yaml", "x/a.eval.yaml")
    found = discover_suites([str(tmp_path / "suite.yaml"), tmp_path / "x", tmp_path / "x"])
    assert found == [tmp_path / "suite.yaml", tmp_path / "x/a.eval.yaml"]


def test_missing_paths_are_errors(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as caught:
        discover_suites([tmp_path / "nope"])
    assert caught.value.issues[0].file == str(tmp_path / "nope")
    assert caught.value.issues[0].message == "no such file or folder"

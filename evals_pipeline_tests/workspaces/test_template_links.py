"""Template symlinks: a link out of the template is refused (at the template's line when the
suite loads, and again when a workspace is copied); links inside are kept, pointing into the
copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError, load_suite
from evals_pipeline.workspaces.template import TemplateLinkError, copy_template


@pytest.fixture
def template(tmp_path: Path) -> Path:
    folder = tmp_path / "suite" / "template"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "main.py").write_text("print('hi')\n")
    (folder / "docs").mkdir()
    (folder / "docs" / "main.py").symlink_to("../src/main.py")  # relative, inside
    (folder / "abs").symlink_to(folder / "src")  # absolute, inside
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "notes.txt").write_text("private\n")
    return folder


def test_links_inside_are_kept_and_point_into_the_copy(template: Path, tmp_path: Path) -> None:
    copy = tmp_path / "workspace"
    copy_template(template, copy)
    assert os.readlink(copy / "docs" / "main.py") == "../src/main.py"
    assert not os.path.isabs(os.readlink(copy / "abs"))
    (copy / "abs" / "new.py").write_text("written through the link\n")
    assert (copy / "src" / "new.py").exists()
    assert not (template / "src" / "new.py").exists(), "the write reached the template"


@pytest.mark.parametrize("target", ["../../outside", "OUTSIDE_ABSOLUTE", "../.."])
def test_a_link_out_of_the_template_is_refused(template: Path, tmp_path: Path, target: str) -> None:
    target = target.replace("OUTSIDE_ABSOLUTE", str(tmp_path / "outside"))
    (template / "src" / "data").symlink_to(target)
    copy = tmp_path / "workspace"
    with pytest.raises(TemplateLinkError, match=r"symlink .*src/data points outside") as caught:
        copy_template(template, copy)
    assert target in str(caught.value)
    assert not copy.exists()


def test_a_link_through_an_inside_link_that_leaves_is_refused(
    template: Path, tmp_path: Path
) -> None:
    (template / "out").symlink_to(tmp_path / "outside")
    (template / "chain").symlink_to("out/notes.txt")
    with pytest.raises(TemplateLinkError):
        copy_template(template, tmp_path / "workspace")


def test_the_suite_is_refused_at_the_template_line(template: Path) -> None:
    (template / "up").symlink_to("../..")
    suite = template.parent / "links.eval.yaml"
    suite.write_text(
        "name: links\n"
        'targets: [{name: t, provider: cli, command: "echo {PROMPT_FILE} {OUTPUT_FILE}"}]\n'
        "workspace:\n"
        "  template: ./template\n"
        "tests:\n"
        "  - {id: a, input: hi, criteria: says hi}\n"
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(suite)
    [issue] = caught.value.issues
    assert (issue.line, issue.column) == (4, 13)
    assert "symlink up that points outside the template (to ../..)" in issue.message
    (template / "up").unlink()
    assert load_suite(suite).suite.workspace is not None

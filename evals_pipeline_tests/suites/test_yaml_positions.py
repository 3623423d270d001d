from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.suites import SuiteError
from evals_pipeline.suites.yaml_positions import Mark, parse_yaml, read_yaml_file

DOC = """\
name: demo
tests:
  - id: first
    input: hello
  - id: second
    metadata: {level: 2}
"""


def test_positions_of_keys_and_values_are_one_based() -> None:
    doc = parse_yaml(DOC, "suite.yaml")
    assert doc.data["tests"][1]["metadata"] == {"level": 2}
    assert doc.positions.key(("tests",)) == Mark(2, 1)
    assert doc.positions.key(("tests", 0, "id")) == Mark(3, 5)
    assert doc.positions.value(("tests", 0, "id")) == Mark(3, 9)
    assert doc.positions.value(("tests", 1, "metadata", "level")) == Mark(6, 23)
    # An unknown path falls back to the nearest enclosing node.
    assert doc.positions.value(("tests", 1, "nothing", "here")) == Mark(5, 5)


def test_scalars_follow_yaml_1_2() -> None:
    doc = parse_yaml(
        "a: yes\nb: on\nc: 2024-01-01\nd: true\ne: 012\nf: 1.5\ng: ~\nh: 0x1f\ni: '3'\n", "f"
    )
    assert doc.data == {
        "a": "yes",
        "b": "on",
        "c": "2024-01-01",
        "d": True,
        "e": 12,
        "f": 1.5,
        "g": None,
        "h": 31,
        "i": "3",
    }


def test_merge_keys_supply_defaults_that_keys_override() -> None:
    doc = parse_yaml("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n", "f")
    assert doc.data["m"] == {"x": 1, "y": 3}
    assert doc.positions.value(("m",)) == Mark(3, 3)


def test_duplicate_keys_are_errors_with_both_lines() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_yaml("tests: []\nname: a\ntests: []\n", "s.yaml")
    issue = caught.value.issues[0]
    assert (issue.file, issue.line, issue.column) == ("s.yaml", 3, 1)
    assert issue.message == "duplicate key 'tests' (first at line 1)"
    assert issue.fix == "keep one 'tests' in this mapping"


def test_syntax_error_position_comes_from_the_yaml_mark() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_yaml("tests:\n  - id: a\n    input: x: y\n", "s.yaml")
    issue = caught.value.issues[0]
    assert (issue.line, issue.column) == (3, 13)
    assert "mapping values are not allowed here" in issue.message
    assert issue.fix == "quote the value if it contains ': ', or fix the indentation of this key"


def test_unterminated_quote_names_where_the_string_started() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_yaml('tests:\n  - id: a\n    input: "x\n  - id: b\n', "s.yaml")
    issue = caught.value.issues[0]
    assert issue.line == 5
    assert "started at line 3" in issue.message


def test_unknown_tags_are_reported_at_their_node() -> None:
    with pytest.raises(SuiteError) as caught:
        parse_yaml("a: 1\nb: !include other.yaml\n", "s.yaml")
    issue = caught.value.issues[0]
    assert (issue.line, issue.column) == (2, 4)
    assert "!include" in issue.message


# A large file (over parse_cache.MIN_CHARS) is built without positions, found when first used.
PADDING = "".join(f"  - id: pad-{i}\n    input: say {i}\n" for i in range(10_000))
LARGE = f"""\
defaults: &grader {{type: code-grader, command: [python3, grade.py], weight: 0.5}}
mixed: [yes, on, 2024-01-01, true, 012, 1.5, ~, 0x1f, '3', .inf, -.inf]
nested: {{a: [1, [2, {{b: c}}]], same: *grader}}
tests:
{PADDING}  - id: last
    assertions: [*grader]
"""


def test_a_large_files_data_is_the_same_without_positions(tmp_path: Path) -> None:
    path = tmp_path / "large.eval.yaml"
    path.write_text(LARGE)
    read = read_yaml_file(path)
    assert read.data == parse_yaml(LARGE, str(path)).data
    assert read.data["tests"][-1]["assertions"][0]["weight"] == 0.5
    # Found when asked for: the last test's id, at its line.
    assert "values" not in vars(read.positions)
    assert read.positions.value(("tests", 10_000, "id")) == Mark(LARGE.count("\n") - 1, 9)


@pytest.mark.parametrize(
    ("extra", "data_or_issue"),
    [
        ("merged:\n  <<: *grader\n  weight: 2\n", {"weight": 2, "type": "code-grader"}),
        ("mixed: []\n", "duplicate key 'mixed' (first at line 2)"),
        ("odd: !!binary 'not base64?'\n", "cannot read the value"),
    ],
)
def test_a_large_file_with_merges_or_problems_is_built_with_positions(
    tmp_path: Path, extra: str, data_or_issue: dict[str, object] | str
) -> None:
    path = tmp_path / "large.eval.yaml"
    path.write_text(LARGE + extra)
    line = LARGE.count("\n") + 1
    if isinstance(data_or_issue, dict):
        merged = read_yaml_file(path).data["merged"]
        assert data_or_issue.items() <= merged.items()
        return
    with pytest.raises(SuiteError) as caught:
        read_yaml_file(path)
    [issue] = caught.value.issues
    assert (issue.line, issue.message.startswith(data_or_issue)) == (line, True), issue

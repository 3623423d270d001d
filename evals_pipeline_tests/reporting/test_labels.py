"""The calibration file: CSV, JSONL and YAML labels, and errors that name the file, line and fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evals_pipeline.reporting import HumanLabel, LabelFileError, load_labels

EXPECTED = [
    HumanLabel(
        test_id="t1", agent="Claude Code", dimension="correctness", human_verdict="PASS", trial=0
    ),
    HumanLabel(
        test_id="t1",
        agent="claude-code",
        dimension="codeQuality",
        human_verdict="FAIL",
        trial=1,
        split="test",
    ),
    HumanLabel(
        test_id="42", agent="codex", dimension="verification", human_verdict="PASS", split="dev"
    ),
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_with_a_header_row(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "labels.csv",
        "test_id,agent,dimension,human_verdict,trial,split,notes\n"
        "t1,Claude Code,correctness,pass,,,looks right\n"
        "\n"
        "t1,claude-code,code_quality,FAIL,1,Test,\n"
        "42,codex,Verification,true,0,dev,\n",
    )
    assert load_labels(path) == EXPECTED


def test_jsonl(tmp_path: Path) -> None:
    rows = [
        {
            "test_id": "t1",
            "agent": "Claude Code",
            "dimension": "correctness",
            "human_verdict": "PASS",
        },
        {
            "test_id": "t1",
            "agent": "claude-code",
            "dimension": "codeQuality",
            "human_verdict": False,
            "trial": 1,
            "split": "test",
        },
        {
            "test_id": 42,
            "agent": "codex",
            "dimension": "verification",
            "human_verdict": "pass",
            "split": "dev",
        },
    ]
    text = json.dumps(rows[0]) + "\n\n" + "\n".join(json.dumps(r) for r in rows[1:]) + "\n"
    assert load_labels(write(tmp_path, "labels.jsonl", text)) == EXPECTED


def test_yaml_list_of_mappings(tmp_path: Path) -> None:
    text = """\
- {test_id: t1, agent: Claude Code, dimension: correctness, human_verdict: PASS}
- test_id: t1
  agent: claude-code
  dimension: codeQuality
  human_verdict: fail
  trial: 1
  split: test
- {test_id: 42, agent: codex, dimension: verification, human_verdict: true, split: dev}
"""
    assert load_labels(write(tmp_path, "labels.yaml", text)) == EXPECTED


def error_of(path: Path) -> str:
    with pytest.raises(LabelFileError) as raised:
        load_labels(path)
    return str(raised.value)


HEADER = "test_id,agent,dimension,human_verdict,trial,split\n"


def test_an_unknown_dimension_names_file_line_and_the_valid_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.csv", HEADER + "t1,a,correctness,PASS,,\nt2,a,style,PASS,,\n")
    message = error_of(path)
    assert message.startswith(f"{path}, line 3: unknown dimension 'style'")
    assert "correctness, completeness, codeQuality, minimalDiff, verification" in message


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("t1,a,correctness,maybe,,", "human_verdict 'maybe' is not PASS or FAIL"),
        ("t1,,correctness,PASS,,", "missing agent; every label needs test_id, agent"),
        ("t1,a,correctness,PASS,first,", "trial 'first' is not a trial number"),
        ("t1,a,correctness,PASS,0,holdout", "split 'holdout' is not one of train, dev, test"),
        ("t1,a,correctness,PASS,0,test,extra", "more values than the 6 header columns"),
        ("t1,---,correctness,PASS,0,", "agent '---' has no letters or digits"),
    ],
)
def test_bad_csv_values_name_the_line(tmp_path: Path, row: str, expected: str) -> None:
    path = write(tmp_path, "labels.csv", HEADER + row + "\n")
    message = error_of(path)
    assert message.startswith(f"{path}, line 2: "), message
    assert expected in message


def test_an_unknown_column_lists_the_fields(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.csv", "test_id,agent,dimension,human_verdict,spilt\n")
    assert re.fullmatch(
        rf"{re.escape(str(path))}, line 1: unknown field 'spilt'; the fields are test_id, "
        r"agent, dimension, human_verdict, trial, split, notes",
        error_of(path),
    )


def test_the_same_trial_dimension_twice_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "labels.csv",
        HEADER + "t1,Claude Code,correctness,PASS,0,\nt2,x,correctness,PASS,0,\n"
        "t1,claude-code,correctness,FAIL,0,\n",
    )
    message = error_of(path)
    assert message.startswith(f"{path}, line 4: t1 / claude-code / trial 0 / correctness")
    assert "labelled twice (first on line 2)" in message


def test_jsonl_and_yaml_errors_name_the_line(tmp_path: Path) -> None:
    good = '{"test_id": "t", "agent": "a", "dimension": "correctness", "human_verdict": "PASS"}'
    jsonl = write(tmp_path, "l.jsonl", good + "\n{not json\n")
    assert error_of(jsonl).startswith(f"{jsonl}, line 2: not valid JSON")
    listed = write(tmp_path, "m.jsonl", good + "\n[1, 2]\n")
    assert error_of(listed).startswith(f"{listed}, line 2: a label is a mapping")
    yaml_file = write(
        tmp_path,
        "l.yml",
        "- {test_id: t, agent: a, dimension: correctness, human_verdict: PASS}\n"
        "- test_id: t\n  agent: a\n  dimension: correctness\n  human_verdict: nope\n",
    )
    assert error_of(yaml_file).startswith(f"{yaml_file}, line 2: human_verdict 'nope'")
    mapping = write(tmp_path, "m.yaml", "labels: []\n")
    assert error_of(mapping).startswith(f"{mapping}, line 1: expected a list of labels")


def test_file_level_errors(tmp_path: Path) -> None:
    assert "unknown calibration file type '.txt'" in error_of(write(tmp_path, "l.txt", ""))
    assert "cannot read" in error_of(tmp_path / "missing.csv")
    empty = write(tmp_path, "e.csv", HEADER)
    assert error_of(empty) == f"{empty}: no labels; add one row per labelled trial dimension"
    assert "no header row" in error_of(write(tmp_path, "h.csv", ""))

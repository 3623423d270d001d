"""The calibration file: human PASS/FAIL labels of single trial dimensions (judging.md §7).

One label says what a trusted human decided about one dimension of one trial of one agent on one
test. The report matches labels to this run's own blended decisions to measure TPR and TNR, which
correct the observed rates (§8). The file is CSV (with a header row), JSONL, or YAML (a list of
mappings); docs/report.md shows an example of each.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.models.judging import DIMENSIONS, Dimension, Verdict
from evals_pipeline.suites.slugs import slugify

Split = Literal["train", "dev", "test"]
REQUIRED_FIELDS = ("test_id", "agent", "dimension", "human_verdict")
OPTIONAL_FIELDS = ("trial", "split", "notes")
_VERDICTS: dict[str, Verdict] = {"pass": "PASS", "true": "PASS", "fail": "FAIL", "false": "FAIL"}
_SPLITS: tuple[Split, ...] = ("train", "dev", "test")
# "code_quality", "Code Quality" and "codequality" all name codeQuality.
_DIMENSION_KEYS: dict[str, Dimension] = {re.sub(r"[\W_]", "", d.lower()): d for d in DIMENSIONS}
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".yaml": "yaml", ".yml": "yaml"}


class LabelFileError(ValueError, EvalsPipelineError):
    """A calibration file that cannot be read; the message names the file, the line and the fix."""


class HumanLabel(BaseModel):
    """A human's verdict on one dimension of one trial (trial 0 unless given)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: str = Field(min_length=1)
    agent: str = Field(min_length=1, description="The agent's target name or its slug.")
    dimension: Dimension
    human_verdict: Verdict
    trial: int = Field(default=0, ge=0)
    split: Split | None = None

    @property
    def key(self) -> tuple[str, str, int, Dimension]:
        """What the label is about: (test id, agent slug, trial, dimension)."""
        return self.test_id, slugify(self.agent), self.trial, self.dimension


def load_labels(path: str | Path) -> list[HumanLabel]:
    """Read the labels of a CSV, JSONL or YAML calibration file, in file order.

    Raises LabelFileError naming the file, the line and what to change for an unknown format,
    a missing or unknown field, a bad value, or the same trial dimension labelled twice.
    """
    path = Path(path)
    kind = _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise LabelFileError(
            f"{path}: unknown calibration file type {path.suffix!r}; "
            "name it .csv (with a header row), .jsonl or .yaml"
        )
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise LabelFileError(f"{path}: cannot read the calibration file ({exc})") from exc
    rows = {"csv": _csv_rows, "jsonl": _jsonl_rows, "yaml": _yaml_rows}[kind](path, text)
    labels: list[HumanLabel] = []
    seen: dict[tuple[str, str, int, Dimension], int] = {}
    for line, row in rows:
        label = _label(path, line, row)
        first = seen.setdefault(label.key, line)
        if first != line:
            raise LabelFileError(
                f"{path}, line {line}: {label.test_id} / {label.agent} / trial {label.trial} / "
                f"{label.dimension} is labelled twice (first on line {first}); keep one label"
            )
        labels.append(label)
    if not labels:
        raise LabelFileError(f"{path}: no labels; add one row per labelled trial dimension")
    return labels


def _csv_rows(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    if not header:
        raise LabelFileError(
            f"{path}, line 1: no header row; start with `{','.join(REQUIRED_FIELDS)},trial,split`"
        )
    _check_fields(path, 1, header)
    reader.fieldnames = header
    for row in reader:
        if None in row:
            raise LabelFileError(
                f"{path}, line {reader.line_num}: more values than the {len(header)} header "
                "columns; quote values that contain commas"
            )
        values = {k: v.strip() if isinstance(v, str) else v for k, v in row.items()}
        if all(v in ("", None) for v in values.values()):
            continue
        yield reader.line_num, {k: v for k, v in values.items() if v not in ("", None)}


def _jsonl_rows(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelFileError(
                f"{path}, line {number}: not valid JSON ({exc.msg}); write one JSON object per line"
            ) from exc
        yield number, _mapping(path, number, row)


def _yaml_rows(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark is not None else ""
        raise LabelFileError(f"{path}{where}: not valid YAML ({exc})") from exc
    if data is None:
        return
    if not isinstance(data, list) or not isinstance(node, yaml.SequenceNode):
        raise LabelFileError(
            f"{path}, line 1: expected a list of labels (`- test_id: ...`), "
            f"got a {type(data).__name__}"
        )
    for item, row in zip(node.value, data, strict=True):
        line = item.start_mark.line + 1
        yield line, _mapping(path, line, row)


def _mapping(path: Path, line: int, row: object) -> Mapping[str, Any]:
    if not isinstance(row, dict):
        raise LabelFileError(
            f"{path}, line {line}: a label is a mapping of {', '.join(REQUIRED_FIELDS)}, "
            f"got {type(row).__name__}"
        )
    _check_fields(path, line, [str(k) for k in row])
    return {str(k): v for k, v in row.items() if v is not None}


def _check_fields(path: Path, line: int, fields: list[str]) -> None:
    known = REQUIRED_FIELDS + OPTIONAL_FIELDS
    unknown = [f for f in fields if f not in known]
    if unknown:
        raise LabelFileError(
            f"{path}, line {line}: unknown field {', '.join(map(repr, unknown))}; "
            f"the fields are {', '.join(known)}"
        )


def _label(path: Path, line: int, row: Mapping[str, Any]) -> HumanLabel:
    def fail(problem: str) -> LabelFileError:
        return LabelFileError(f"{path}, line {line}: {problem}")

    missing = [f for f in REQUIRED_FIELDS if f not in row or str(row[f]).strip() == ""]
    if missing:
        raise fail(f"missing {', '.join(missing)}; every label needs {', '.join(REQUIRED_FIELDS)}")
    agent = str(row["agent"]).strip()
    try:
        slugify(agent)
    except ValueError as exc:
        raise fail(
            f"agent {agent!r} has no letters or digits; use the agent's target name"
        ) from exc
    raw_dimension = str(row["dimension"]).strip()
    dimension = _DIMENSION_KEYS.get(re.sub(r"[\W_]", "", raw_dimension.lower()))
    if dimension is None:
        raise fail(f"unknown dimension {raw_dimension!r}; use one of {', '.join(DIMENSIONS)}")
    raw_verdict = row["human_verdict"]
    verdict = _VERDICTS.get(str(raw_verdict).strip().lower())
    if verdict is None:
        raise fail(f"human_verdict {raw_verdict!r} is not PASS or FAIL (true/false also work)")
    return HumanLabel(
        test_id=str(row["test_id"]).strip(),
        agent=agent,
        dimension=dimension,
        human_verdict=verdict,
        trial=_trial(row.get("trial", 0), fail),
        split=_split(row.get("split"), fail),
    )


def _trial(value: object, fail: Callable[[str], LabelFileError]) -> int:
    if isinstance(value, bool):
        raise fail(f"trial {value!r} is not a trial number; use 0 for the first trial")
    text = str(value).strip()
    if not text.isdigit():
        raise fail(f"trial {value!r} is not a trial number; use 0 for the first trial")
    return int(text)


def _split(value: object, fail: Callable[[str], LabelFileError]) -> Split | None:
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().lower()
    for split in _SPLITS:
        if text == split:
            return split
    raise fail(f"split {value!r} is not one of {', '.join(_SPLITS)}; leave it empty for no split")

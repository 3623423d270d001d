"""Run one conformance folder through the real `agentv` and through evals-pipeline, and diff them.

A conformance folder (`conformance/<feature>/`) holds one eval file, its `.agentv/targets.yaml` and
the agents and graders it needs, all offline. Both tools run it from the same fresh copy; their
result rows (AgentV's index.jsonl, our results.jsonl) are compared per (test id, target): the
score, the execution status, and each grader's score and verdict. Differences AgentV is known to
get wrong are listed, with the reason, in the folder's `differences.yaml` and asserted exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evals_pipeline.defs.executor import BROKER_ENV, EXECUTOR_ENV
from evals_pipeline.model_server import ModelServer, load_script
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.suites.slugs import slugify
from evals_pipeline_tests.conformance.corpus import corpus_root
from evals_pipeline_tests.executor_passes import workers_with

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO / "conformance"
NODE_BIN = CONFORMANCE / "node_modules" / ".bin"
AGENTV = NODE_BIN / "agentv"
EVALS_PIPELINE = Path(sys.executable).with_name("evals-pipeline")
MODEL_SCRIPT = "model-server.yaml"
DIFFERENCES = "differences.yaml"
CORPUS_FILES = "corpus-files.yaml"
"""A folder's files taken from AgentV's corpus into each copy: name in the copy → corpus path."""
SCORE_TOLERANCE = 1e-9
RUN_TIMEOUT_SECONDS = 300

Row = dict[str, Any]
Key = tuple[str, str]


@dataclass(frozen=True)
class Difference:
    """One field on which the two tools disagree for one (test id, target)."""

    test_id: str
    target: str
    field: str
    agentv: Any
    ours: Any

    def describe(self) -> str:
        return (
            f"{self.test_id} / {self.target}: {self.field}: agentv {self.agentv!r}, "
            f"evals-pipeline {self.ours!r}"
        )


@dataclass(frozen=True)
class ToolRun:
    """One tool's run of a folder: its result rows by (test id, target slug) and its console."""

    rows: dict[Key, Row]
    exit_code: int
    console: str


def conformance_folders() -> list[Path]:
    """Every conformance folder: a child of conformance/ holding an eval file."""
    return sorted(
        folder
        for folder in CONFORMANCE.iterdir()
        if folder.is_dir() and folder.name != "node_modules" and _eval_files(folder)
    )


def _eval_files(folder: Path) -> list[Path]:
    """A folder's eval files: AgentV's YAML names, or an Agent Skills `evals.json`."""
    yaml_files = sorted(folder.glob("*.eval.yaml")) + sorted(folder.glob("EVAL.yaml"))
    return yaml_files + sorted(folder.glob("evals.json"))  # an Agent Skills suite


def eval_file(folder: Path) -> Path:
    files = _eval_files(folder)
    if len(files) != 1:
        raise ValueError(
            f"{folder}: a conformance folder holds exactly one eval file, found {files}"
        )
    return files[0]


def expected_differences(folder: Path) -> list[Difference]:
    """The folder's known differences (`differences.yaml`), each with its reason."""
    path = folder / DIFFERENCES
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text()) or []
    for entry in entries:
        if not entry.get("reason"):
            raise ValueError(f"{path}: every difference needs a reason: {entry}")
    return [
        Difference(e["test_id"], e["target"], e["field"], e["agentv"], e["ours"]) for e in entries
    ]


@contextmanager
def model_server_env(folder: Path) -> Iterator[dict[str, str]]:
    """MODEL_SERVER_URL for a folder that scripts a model (`model-server.yaml`), else nothing."""
    script = folder / MODEL_SCRIPT
    if not script.exists():
        yield {}
        return
    with ModelServer(load_script(script)) as server:
        yield {"MODEL_SERVER_URL": server.base_url}


def base_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """A clean environment: no keys or user config of the developer's reach either tool. Our
    command imports this checkout's code, whichever checkout the venv was installed from."""
    path = os.pathsep.join([str(NODE_BIN), str(EVALS_PIPELINE.parent), os.environ["PATH"]])
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "NO_COLOR": "1",
        "PYTHONPATH": str(REPO),
        # The executor pass's (executor_passes.py): our runs' steps run on its executor.
        **{name: os.environ[name] for name in (EXECUTOR_ENV, BROKER_ENV) if name in os.environ},
        **extra,
    }


def run_agentv(suite: Path, out: Path, env: dict[str, str]) -> ToolRun:
    command = [
        str(AGENTV),
        "eval",
        str(suite),
        "--output",
        str(out),
        "--workers",
        "1",
        "--max-retries",
        "0",
    ]
    console = _run(command, suite.parent, env)
    rows = _rows(out / "index.jsonl")
    return ToolRun(rows, console[0], console[1])


def run_ours(
    suite: Path,
    out: Path,
    state: Path,
    env: dict[str, str],
    args: tuple[str, ...] = (),
    *,
    suite_writable: bool = True,
) -> ToolRun:
    """`evals-pipeline run` on `suite` with `args` (run options such as --agentv-scoring).

    With `suite_writable`, the suite's folder is writable in the sandbox: conformance agents and
    graders keep their state beside themselves (a trial counter, payload dumps, a node_modules
    link), as they do under agentv, which has no sandbox. AgentV's corpus runs without it."""
    env = {
        **env,
        "DAGSTER_HOME": str(state / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(state / "storage"),
        **({WRITABLE_VAR: str(suite.parent)} if suite_writable else {}),
    }
    (state / "dagster").mkdir(parents=True, exist_ok=True)
    command = [str(EVALS_PIPELINE), "run", str(suite), "--output", str(out), *args]
    with workers_with(env) as env:  # on celery, workers that see the suite's variables
        console = _run(command, suite.parent, env)
    rows = _rows(out / "results.jsonl")
    return ToolRun(rows, console[0], console[1])


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    result = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )
    return result.returncode, f"$ {' '.join(command)}\n{result.stdout}\n{result.stderr}"


def _rows(path: Path) -> dict[Key, Row]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(row["test_id"], slugify(row["target"])): row for row in rows}


def differences(agentv: dict[Key, Row], ours: dict[Key, Row]) -> list[Difference]:
    """Every disagreement between the two tools' rows, in a stable order."""
    found: list[Difference] = []
    for key in sorted(agentv.keys() | ours.keys()):
        a, o = agentv.get(key), ours.get(key)
        if a is None or o is None:
            found.append(Difference(*key, "row", a is not None, o is not None))
            continue
        found += _row_differences(key, a, o)
    return found


def _row_differences(key: Key, a: Row, o: Row) -> list[Difference]:
    found: list[Difference] = []
    if abs(float(a["score"]) - float(o["score"])) > SCORE_TOLERANCE:
        found.append(Difference(*key, "score", a["score"], o["score"]))
    if a.get("execution_status") != o.get("execution_status"):
        found.append(
            Difference(
                *key, "execution_status", a.get("execution_status"), o.get("execution_status")
            )
        )
    a_graders = _graders(a)
    o_graders = _graders(o)
    if list(a_graders) != list(o_graders):
        found.append(Difference(*key, "graders", list(a_graders), list(o_graders)))
    for name in a_graders.keys() & o_graders.keys():
        (a_score, a_verdict), (o_score, o_verdict) = a_graders[name], o_graders[name]
        if abs(a_score - o_score) > SCORE_TOLERANCE:
            found.append(Difference(*key, f"grader {name} score", a_score, o_score))
        if a_verdict != o_verdict:
            found.append(Difference(*key, f"grader {name} verdict", a_verdict, o_verdict))
    return found


def _graders(row: Row) -> dict[str, tuple[float, str]]:
    return {
        entry["name"]: (float(entry.get("score") or 0.0), entry.get("verdict", ""))
        for entry in row.get("scores") or []
    }


def fresh_copy(folder: Path, into: Path) -> Path:
    """A copy of the folder for one tool's run, so neither sees the other's leftovers, with the
    files it takes from AgentV's corpus."""
    destination = into / folder.name
    shutil.copytree(folder, destination, ignore=shutil.ignore_patterns(DIFFERENCES, CORPUS_FILES))
    taken = folder / CORPUS_FILES
    for name, source in (yaml.safe_load(taken.read_text()) if taken.exists() else {}).items():
        shutil.copyfile(corpus_root() / source, destination / name)
    return eval_file(destination)

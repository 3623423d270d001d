"""The grader payload, field by field, against the real agentv 4.42.4.

conformance/grader-payload runs through `agentv eval` and `evals-pipeline run`; its `dump` grader
keeps each stdin document. Every key and value must match, except the documented differences:
our extra keys, the paths of the two copies and of temp files, wall-clock durations, the
workspace folder, and a bulk field sent by file (it must then equal AgentV's inline value).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evals_pipeline.sandbox.launch import WRITABLE_VAR

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "conformance" / "grader-payload"
NODE_BIN = REPO / "conformance" / "node_modules" / ".bin"
EVALS_PIPELINE = Path(sys.executable).with_name("evals-pipeline")
OURS_ONLY = {
    "answer",
    "messages_path",
    "messages_json_path",
    "trace_path",
    "start_time_ms",
    "end_time_ms",
    "test_id",
    "agent",
}
# Measured by each tool around its own process spawn: the cli agent reports none for text.
MEASURED = {".duration_ms", ".trace.duration_ms"}


def _run(tool: str, tmp_path: Path) -> Path:
    """Run a fresh copy of the folder through one tool; return the copy (its dumps/ inside)."""
    copy = tmp_path / tool / FOLDER.name
    shutil.copytree(FOLDER, copy, ignore=shutil.ignore_patterns("dumps", "node_modules"))
    env = {
        "PATH": os.pathsep.join([str(NODE_BIN), str(EVALS_PIPELINE.parent), os.environ["PATH"]]),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }
    if tool == "ours":
        # The graders write into their cwd, the suite's copy (dump.py's dumps/, bun.sh's
        # node_modules link), which the sandbox otherwise keeps read-only.
        env[WRITABLE_VAR] = str(copy)
    for folder in ("home", "dagster"):
        (tmp_path / folder).mkdir(exist_ok=True)
    out = tmp_path / f"{tool}-out"
    suite = f"{FOLDER.name}.eval.yaml"
    command = (
        [str(NODE_BIN / "agentv"), "eval", suite, "--output", str(out), "--workers", "1"]
        if tool == "agentv"
        else [str(EVALS_PIPELINE), "run", suite, "--output", str(out)]
    )
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert (copy / "dumps").is_dir(), done.stdout[-3000:] + done.stderr[-3000:]
    return copy


def _dumps(copy: Path) -> dict[str, tuple[dict[str, Any], int]]:
    """Each dumped payload with its file-backed fields loaded back, and its stdin size."""
    found = {}
    for path in sorted((copy / "dumps").glob("*.json")):
        raw = path.read_bytes()
        found[path.stem] = (json.loads(raw.decode().replace(str(copy), "<suite>")), len(raw))
    return found


def _differences(agentv: Any, ours: Any, at: str = "") -> list[str]:
    if isinstance(agentv, dict) and isinstance(ours, dict):
        return [
            line
            for key in sorted(set(agentv) | set(ours))
            for line in (
                [f"{at}.{key}: only in ours"]
                if key not in agentv
                else [f"{at}.{key}: missing from ours"]
                if key not in ours
                else _differences(agentv[key], ours[key], f"{at}.{key}")
            )
        ]
    if isinstance(agentv, list) and isinstance(ours, list) and len(agentv) == len(ours):
        return [
            line
            for i, (a, b) in enumerate(zip(agentv, ours, strict=True))
            for line in _differences(a, b, f"{at}[{i}]")
        ]
    return [] if agentv == ours else [f"{at}: agentv {agentv!r:.80} ours {ours!r:.80}"]


def _load(path: str) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


@pytest.mark.skipif(not (NODE_BIN / "agentv").exists(), reason="needs `make agentv`")
def test_payload_matches_agentv_field_by_field(tmp_path: Path) -> None:
    agentv = _dumps(_run("agentv", tmp_path))
    ours = _dumps(_run("ours", tmp_path))
    assert sorted(agentv) == sorted(ours) and len(agentv) == 6
    for name, (theirs, their_size) in agentv.items():
        mine, my_size = ours[name]
        # Ours only: AgentV's documented alias, our paths, epoch-ms instants, the case's names.
        assert mine["answer"] == mine["output"]
        assert Path(mine["messages_path"]).is_file()
        extras = {key: mine.pop(key) for key in OURS_ONLY if key in mine}
        # Bulk fields sent by file hold exactly what AgentV sends inline.
        assert {"answer", "messages_path", "test_id", "agent"} <= extras.keys()
        if "messages" not in mine:
            mine["messages"] = _load(extras["messages_json_path"])
        if mine["trace"] is None:
            mine["trace"] = _load(extras["trace_path"])
        if "output_path" in theirs:
            assert _load(mine.pop("output_path")) == _load_theirs_output(theirs)
            theirs.pop("output_path")
        # The folder each tool ran the agent in: AgentV none (its cwd), ours one per run.
        assert theirs.pop("workspace_path") is None
        assert "/agent_runs/" in mine.pop("workspace_path")  # removed after a passing run
        differences = [
            line
            for line in _differences(theirs, mine)
            if line.split(":")[0] not in MEASURED or "text-agent" not in name
        ]
        assert differences == [], name
        # The point of the paths: stdin stays small when AgentV's grows with the session.
        if their_size > 200_000:
            assert my_size < 4_000, (name, my_size)


def _load_theirs_output(payload: dict[str, Any]) -> Any:
    """AgentV deletes its temp output file after the grader exits: the dump grader kept only the
    path, so the answer is checked against the transcript's final response instead."""
    return payload["trace"]["events"][-1]["message"]["content"]

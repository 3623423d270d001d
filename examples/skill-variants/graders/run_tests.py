"""Functional grader: run the case's test files in the agent's workspace (found through
workspace_path) and score the share that pass. What the agent says does not count, only the tests.

The case names its tests in `metadata.tests`; without it every test_*.py in the workspace runs.
"""

import subprocess
import sys

from evals_pipeline.grader import GraderInput, Score, grader


@grader
def run_tests(inp: GraderInput) -> Score:
    workspace = inp.workspace_path
    if workspace is None or not workspace.is_dir():
        raise RuntimeError(f"the workspace is gone: {workspace}")
    names = (inp.metadata or {}).get("tests") or sorted(p.name for p in workspace.glob("test_*.py"))
    checks = []
    for name in names:
        result = subprocess.run(
            [sys.executable, name], cwd=workspace, capture_output=True, text=True, timeout=60
        )
        evidence = (result.stdout + result.stderr).strip()[
            -500:
        ] or f"exit code {result.returncode}"
        checks.append((f"{name} passes", result.returncode == 0, evidence))
    return Score(sum(passed for _, passed, _ in checks) / len(checks), checks)

"""Every eval file of AgentV's own examples that `agentv validate` accepts loads here too.

The corpus is AgentV 4.42.4's examples folder (conformance/agentv-examples). `agentv validate`
runs live, so what counts as valid is what the real tool says, not our reading of its docs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from evals_pipeline.suites.errors import SuiteError
from evals_pipeline.suites.loader import load_suite
from evals_pipeline_tests.conformance.parity import AGENTV, CONFORMANCE, NODE_BIN

CORPUS = CONFORMANCE / "agentv-examples"
EVAL_NAMES = ("*.eval.yaml", "EVAL.yaml", "*.EVAL.yaml", "eval.yaml")

# Files AgentV accepts that evals-pipeline does not load yet (issue 11), relative to the corpus.
KNOWN_GAPS: frozenset[str] = frozenset()


def _eval_files() -> list[Path]:
    found = {path for pattern in EVAL_NAMES for path in (CORPUS / "examples").rglob(pattern)}
    return sorted(found)


def _agentv_valid(files: list[Path]) -> set[Path]:
    """The files `agentv validate` marks valid (it prints ✓ or ✗ before each path)."""
    result = subprocess.run(
        [str(AGENTV), "validate", *map(str, files)],
        cwd=CORPUS,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PATH": f"{NODE_BIN}:/usr/bin:/bin", "HOME": str(CORPUS), "NO_COLOR": "1"},
    )
    valid = {Path(line[2:].strip()) for line in result.stdout.splitlines() if line.startswith("✓ ")}
    assert valid, f"agentv validate reported no valid file:\n{result.stdout}\n{result.stderr}"
    return valid


def test_agentv_examples_load() -> None:
    assert AGENTV.exists(), f"{AGENTV} is missing: run `make agentv` (needs node and npm)"
    files = _eval_files()
    assert len(files) > 100, f"the corpus lost files: {len(files)}"
    failing: dict[str, str] = {}
    for path in sorted(_agentv_valid(files)):
        try:
            load_suite(path)
        except SuiteError as exc:
            failing[str(path.relative_to(CORPUS))] = str(exc).splitlines()[0]
    new = {name: why for name, why in failing.items() if name not in KNOWN_GAPS}
    assert not new, "AgentV accepts these, evals-pipeline does not:\n" + "\n".join(
        f"{name}: {why}" for name, why in sorted(new.items())
    )
    fixed = sorted(KNOWN_GAPS - failing.keys())
    assert not fixed, "these load now; remove them from KNOWN_GAPS:\n" + "\n".join(fixed)

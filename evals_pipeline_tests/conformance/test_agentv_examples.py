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
KNOWN_GAPS: frozenset[str] = frozenset(
    {
        "examples/contract/evals/code-grader-contract.eval.yaml",
        "examples/contract/evals/release-gate.eval.yaml",
        "examples/contract/evals/repo-materialization.eval.yaml",
        "examples/features/agent-skills-evals/csv-analyzer.EVAL.yaml",
        "examples/features/agent-skills-evals/multi-provider-skill-trigger.EVAL.yaml",
        "examples/features/assert/evals/dataset.eval.yaml",
        "examples/features/assert-extended/evals/dataset.eval.yaml",
        "examples/features/autoresearch/EVAL.yaml",
        "examples/features/basic/evals/dataset.eval.yaml",
        "examples/features/basic-jsonl/evals/dataset.eval.yaml",
        "examples/features/benchmark-tooling/evals/benchmark.eval.yaml",
        "examples/features/code-grader-with-llm-calls/evals/contextual-precision.eval.yaml",
        "examples/features/code-grader-with-llm-calls/evals/contextual-recall.eval.yaml",
        "examples/features/compare/evals/dataset.eval.yaml",
        "examples/features/composite/evals/dataset.eval.yaml",
        "examples/features/default-graders/evals/dataset.eval.yaml",
        "examples/features/deterministic-graders/evals/dataset.eval.yaml",
        "examples/features/docker-workspace/evals/docker-example.EVAL.yaml",
        "examples/features/env-interpolation/evals/dataset.eval.yaml",
        "examples/features/eval-assert-demo/evals/dataset.eval.yaml",
        "examples/features/experiments/evals/coding-ability.eval.yaml",
        "examples/features/external-datasets/evals/dataset.eval.yaml",
        "examples/features/file-changes-graders/evals/dataset.eval.yaml",
        "examples/features/import-claude/evals/transcript-check.EVAL.yaml",
        "examples/features/input-files-shorthand/evals/dataset.eval.yaml",
        "examples/features/langfuse-export/evals/eval.yaml",
        "examples/features/matrix-evaluation/evals/dataset.eval.yaml",
        "examples/features/multi-turn-conversation/evals/dataset.eval.yaml",
        "examples/features/multi-turn-conversation-live/evals/dataset.eval.yaml",
        "examples/features/nlp-metrics/evals/dataset.eval.yaml",
        "examples/features/preprocessors/evals/dataset.eval.yaml",
        "examples/features/prompt-template-sdk/evals/dataset.eval.yaml",
        "examples/features/repo-lifecycle/evals/dataset.eval.yaml",
        "examples/features/repo-lifecycle/evals/pool-e2e.eval.yaml",
        "examples/features/rubric/evals/dataset.eval.yaml",
        "examples/features/rubric/evals/operators.eval.yaml",
        "examples/features/sdk-config-file/evals/dataset.eval.yaml",
        "examples/features/sdk-custom-assertion/evals/dataset.eval.yaml",
        "examples/features/suite-level-input/evals/dataset.eval.yaml",
        "examples/features/suite-level-input-files/evals/dataset.eval.yaml",
        "examples/features/test-vars-templating/evals/dataset.eval.yaml",
        "examples/features/threshold-grader/evals/dataset.eval.yaml",
        "examples/features/tool-calls-template/evals/eval.yaml",
        "examples/features/tool-evaluation-plugins/evals/dataset.eval.yaml",
        "examples/features/trace-analysis/evals/dataset.eval.yaml",
        "examples/features/trace-evaluation/evals/dataset.eval.yaml",
        "examples/features/trial-output-consistency/evals/dataset.eval.yaml",
        "examples/features/trials/evals/dataset.eval.yaml",
        "examples/features/weighted-graders/evals/dataset.eval.yaml",
        "examples/features/workspace-multi-repo/evals/dataset.eval.yaml",
        "examples/features/workspace-setup-script/evals/dataset-vscode.eval.yaml",
        "examples/features/workspace-setup-script/evals/dataset.eval.yaml",
        "examples/features/workspace-shared-config/evals/accuracy/dataset.eval.yaml",
        "examples/features/workspace-shared-config/evals/regression/dataset.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/backdoor-pr.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/benign-controls.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/destructive-git.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/mcp-tool-description-poisoning.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/readme-issue-url-injection.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/sandbox-escape.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/screenshot-pii-upload.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/secrets-exfiltration.eval.yaml",
        "examples/red-team/archetypes/coding-agent/suites/supply-chain-slopsquatting.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/benign-controls.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/bola-bfla.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/compliance-boundary-violation.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/cross-session-leak.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/escalation-hijack.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/pii-cross-customer-disclosure.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/support-doc-indirect-injection.eval.yaml",
        "examples/red-team/archetypes/customer-facing-agent/suites/unauthorized-action-social-engineering.eval.yaml",
        "examples/red-team/suites/agentic-memory-poisoning.eval.yaml",
        "examples/red-team/suites/agentic-tool-misuse.eval.yaml",
        "examples/red-team/suites/atlas-v5.4-agentic.eval.yaml",
        "examples/red-team/suites/llm01-prompt-injection.eval.yaml",
        "examples/red-team/suites/llm02-insecure-output.eval.yaml",
        "examples/red-team/suites/llm06-excessive-agency.eval.yaml",
        "examples/red-team/suites/llm07-system-prompt-leakage.eval.yaml",
        "examples/red-team/suites/llm08-vector-embedding.eval.yaml",
        "examples/red-team/suites/llm10-unbounded-consumption.eval.yaml",
        "examples/showcase/bug-fix-benchmark/evals/bug-fixes.eval.yaml",
        "examples/showcase/cw-incident-triage/evals/dataset.eval.yaml",
        "examples/showcase/directory-discovery/EVAL.yaml",
        "examples/showcase/grader-conformance/EVAL.yaml",
        "examples/showcase/multi-model-benchmark/evals/benchmark.eval.yaml",
        "examples/showcase/psychotherapy/evals/encouragement.eval.yaml",
        "examples/showcase/psychotherapy/evals/listening.eval.yaml",
        "examples/showcase/psychotherapy/evals/routing.eval.yaml",
        "examples/showcase/tool-evaluation-plugins/tool-eval-demo.eval.yaml",
        "examples/showcase/trace-evaluation/evals/transcript-import.eval.yaml",
    }
)


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

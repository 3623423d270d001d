"""Agent CLI targets in a suite: providers and their AgentV aliases, paths, and their errors."""

from __future__ import annotations

import pytest

from evals_pipeline.models.targets import ClaudeCodeTarget, CodexTarget, PiAgentTarget
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only

SUITE = "execution: {targets: [a]}\ntests: [{id: t, input: hi, assertions: []}]\n"


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("claude-code", ClaudeCodeTarget),
        ("claude", ClaudeCodeTarget),
        ("claude-cli", ClaudeCodeTarget),
        ("codex", CodexTarget),
        ("codex-cli", CodexTarget),
        ("pi-agent", PiAgentTarget),
        ("pi", PiAgentTarget),
        ("pi-coding-agent", PiAgentTarget),
    ],
)
def test_agent_providers_and_agentv_aliases(project: Project, provider: str, model: type) -> None:
    project.write(".agentv/targets.yaml", f"targets: [{{name: a, provider: {provider}}}]\n")
    target = load_suite(project.write("s.eval.yaml", SUITE)).targets["a"]
    assert isinstance(target, model)
    assert target.auth == "api_key"


def test_model_server_script_resolves_against_the_project(project: Project) -> None:
    project.write("scripts/turns.yaml", "- text: hi\n")
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: a, provider: codex, model_server: {script: scripts/turns.yaml},"
        " pricing: {input: 1, output: 2}}\n",
    )
    target = load_suite(project.write("evals/s.eval.yaml", SUITE)).targets["a"]
    assert isinstance(target, CodexTarget)
    assert target.model_server is not None
    assert target.model_server.script == str(project.root / "scripts" / "turns.yaml")
    assert target.pricing is not None and target.pricing.output == 2


def test_a_missing_model_server_script_is_an_error_at_its_line(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - name: a\n    provider: pi\n    model_server:\n      script: nope.yaml\n",
    )
    issue = only(project.issues("s.eval.yaml", SUITE))
    assert issue.file.endswith("targets.yaml")
    assert issue.line == 5
    assert "model server script 'nope.yaml' not found" in issue.message


def test_a_per_test_script_needs_only_its_folder(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets: [{name: a, provider: claude, model_server: {script: 'missing/{EVAL_ID}.yaml'}}]\n",
    )
    issue = only(project.issues("s.eval.yaml", SUITE))
    assert "missing/{EVAL_ID}.yaml" in issue.message
    assert str(project.root / "missing") in issue.fix


def test_a_replay_target_with_two_sources_names_the_three(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets: [{name: a, provider: replay, sessions_dir: ., execution_traces: t.jsonl}]\n",
    )
    issue = only(project.issues("s.eval.yaml", SUITE))
    assert issue.line == 1
    assert "exactly one source" in issue.message
    assert "execution_traces (AgentV's trace files)" in issue.message


def test_an_unknown_auth_mode_lists_the_valid_ones(project: Project) -> None:
    project.write(".agentv/targets.yaml", "targets: [{name: a, provider: codex, auth: oauth}]\n")
    issue = only(project.issues("s.eval.yaml", SUITE))
    assert issue.line == 1
    assert "api_key" in issue.message + issue.fix and "subscription" in issue.message + issue.fix

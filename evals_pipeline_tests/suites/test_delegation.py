"""AgentV's target resolution: use_target chains, providers kept until a suite runs them, and
grader targets resolved only when an LLM grader needs one."""

from __future__ import annotations

import pytest

from evals_pipeline.models.targets import AzureTarget, CliTarget, GeminiTarget, OpenRouterTarget
from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only

ECHO = "{name: echo, provider: cli, command: 'echo hi'}"
SUITE = "tests: [{id: t, input: hi, assertions: [{type: contains, value: hi}]}]\n"


def test_a_use_target_chain_runs_the_concrete_target_under_its_name(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        f"targets:\n  - {{name: default, use_target: middle}}\n"
        f"  - {{name: middle, use_target: echo}}\n  - {ECHO}\n",
    )
    # No target named: AgentV runs the one called `default`.
    loaded = load_suite(project.write("s.eval.yaml", SUITE))
    assert list(loaded.targets) == ["echo"]
    assert isinstance(loaded.targets["echo"], CliTarget)
    assert loaded.default_agents == ["echo"]
    assert loaded.agent_of == {"default": "echo"}


def test_use_target_from_the_environment(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_UNDER_TEST", "echo")
    project.write(
        ".agentv/targets.yaml",
        f"targets:\n  - {{name: pick, use_target: '${{{{ AGENT_UNDER_TEST }}}}'}}\n  - {ECHO}\n",
    )
    loaded = load_suite(project.write("s.eval.yaml", "execution: {target: pick}\n" + SUITE))
    assert list(loaded.targets) == ["echo"]


def test_an_unset_use_target_variable_is_reported_at_the_target(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        f"targets:\n  - {{name: pick, use_target: '${{{{ NOT_SET_ANYWHERE }}}}'}}\n  - {ECHO}\n",
    )
    issue = only(project.issues("s.eval.yaml", "execution: {target: pick}\n" + SUITE))
    assert issue.file.endswith("targets.yaml") and issue.line == 2
    assert "target 'pick' has an empty use_target" in issue.message


def test_a_circular_use_target_is_reported(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: a, use_target: b}\n  - {name: b, use_target: a}\n",
    )
    issue = only(project.issues("s.eval.yaml", "execution: {target: a}\n" + SUITE))
    assert issue.message == "circular use_target: a -> b -> a"


def test_a_use_target_chain_deeper_than_ten_is_refused(project: Project) -> None:
    links = "".join(f"  - {{name: t{i}, use_target: t{i + 1}}}\n" for i in range(11))
    project.write(".agentv/targets.yaml", f"targets:\n{links}  - {{name: t11, provider: mock}}\n")
    issue = only(project.issues("s.eval.yaml", "execution: {target: t0}\n" + SUITE))
    assert "deeper than 10" in issue.message
    links = "".join(f"  - {{name: t{i}, use_target: t{i + 1}}}\n" for i in range(10))
    project.write(".agentv/targets.yaml", f"targets:\n{links}  - {{name: t10, provider: mock}}\n")
    assert list(load_suite(project.root / "s.eval.yaml").targets) == ["t10"]


def test_targets_a_suite_does_not_run_may_have_any_provider(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        f"targets:\n  - {ECHO}\n  - {{name: c, provider: copilot, model: x}}\n"
        "  - {name: v, provider: VSCode}\n  - {name: f, provider: frobnicate}\n"
        "  - {name: d, use_target: nowhere}\n",
    )
    loaded = load_suite(project.write("s.eval.yaml", "execution: {target: echo}\n" + SUITE))
    assert list(loaded.targets) == ["echo"]


@pytest.mark.parametrize(
    ("provider", "message", "fix"),
    [
        ("copilot-cli", "provider 'copilot-cli' is not supported here: it drives GitHub", "run"),
        ("vscode", "provider 'vscode' is not supported here: it drives a VS Code", "run"),
        ("clii", "provider 'clii' is not a provider evals-pipeline knows", "did you mean 'cli'?"),
    ],
)
def test_running_a_target_without_an_adapter_says_why(
    project: Project, provider: str, message: str, fix: str
) -> None:
    project.write(".agentv/targets.yaml", f"targets:\n  - {{name: x, provider: {provider}}}\n")
    issue = only(project.issues("s.eval.yaml", "execution: {target: x}\n" + SUITE))
    assert (issue.line, issue.column) == (2, 25)
    assert message in issue.message
    assert issue.fix.startswith(fix)


def test_an_undefined_grader_target_matters_only_to_llm_graders(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        "targets:\n  - {name: a, provider: mock, response: hi, grader_target: judge}\n",
    )
    assert list(load_suite(project.write("s.eval.yaml", SUITE)).targets) == ["a"]
    loaded = load_suite(
        project.write(
            "s.eval.yaml", "tests: [{id: t, input: hi, assertions: [{type: llm-grader}]}]\n"
        )
    )
    issue = only([w for w in loaded.warnings if "cannot be graded" in w.message])
    assert "needs grader_target 'judge' of agent target 'a', which is not an LLM target" in (
        issue.message
    )
    assert "needs grader_target 'judge'" in loaded.ungradable["t"]


def test_agentv_llm_providers_and_their_keys(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - {name: az, provider: azure-openai, resource: acme, deployment: gpt-x, version: v1}
          - {name: gm, provider: google}
          - {name: orr, provider: openrouter, variant: meta/llama}
          - {name: agent, provider: mock, response: hi}
        """,
    )
    loaded = load_suite(project.write("s.eval.yaml", "execution: {target: agent}\n" + SUITE))
    az, gm, orr = loaded.judges["az"], loaded.judges["gm"], loaded.judges["orr"]
    assert isinstance(az, AzureTarget)
    assert (az.base_url, az.model, az.api_version) == ("acme", "gpt-x", "v1")
    assert isinstance(gm, GeminiTarget) and gm.model == "gemini-2.5-flash"
    assert isinstance(orr, OpenRouterTarget) and orr.model == "meta/llama"


def test_agentv_agent_keys_are_accepted(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        """\
        targets:
          - name: cx
            provider: codex-cli
            model_reasoning_effort: xhigh
            system_prompt: Be brief.
            log_dir: logs
            stream_log: raw
            cwd: .
          - {name: cl, provider: claude, max_budget_usd: 1, bypass_permissions: false}
          - {name: p, provider: pi, subprovider: openai, tools: "read,bash", thinking: low}
          - {name: c, provider: cli, command: run, cli_verbose: true, max_retries: 2,
             fallback_targets: [cx], subagent_mode_allowed: false, retry_status_codes: [429]}
        """,
    )
    suite = "execution: {targets: [cx, cl, p, c]}\n" + SUITE
    loaded = load_suite(project.write("s.eval.yaml", suite))
    assert loaded.targets["cx"].reasoning_effort == "xhigh"  # type: ignore[union-attr]
    assert loaded.targets["c"].verbose is True  # type: ignore[union-attr]


def test_fallback_targets_resolve_to_runnable_targets(project: Project) -> None:
    project.write(
        ".agentv/targets.yaml",
        f"""\
        targets:
          - {{name: main, provider: cli, command: 'exit 1',
             fallback_targets: [missing, cop, alias, echo]}}
          - {{name: cop, provider: copilot}}
          - {{name: alias, use_target: echo}}
          - {ECHO}
        """,
    )
    loaded = load_suite(project.write("s.eval.yaml", "execution: {target: main}\n" + SUITE))
    # Unknown and unrunnable names are skipped, as AgentV's resolver skips them.
    assert [t.name for t in loaded.fallbacks["main"]] == ["echo", "echo"]

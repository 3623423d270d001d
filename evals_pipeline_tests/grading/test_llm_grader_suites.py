"""LLM graders in whole suites: grader targets resolved, AgentV's implicit grader, and the graders
that cannot run found at load time, each a located warning."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
import yaml

from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.consistency import ungradable_tests
from evals_pipeline.suites.yaml_positions import read_yaml_file
from evals_pipeline_tests.grading.scripted_judges import PASS, reply, requests, texts


def write_suite(
    tmp_path: Path, targets: str, body: str, scripts: dict[str, list[dict[str, Any]]]
) -> Path:
    """targets (unindented) then the rest of the suite (dedented), and the judges' scripts."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, turns in scripts.items():
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({"turns": turns or [{"text": "{}"}]}))
    path = tmp_path / "s.eval.yaml"
    path.write_text(targets + dedent(body))
    return path


SUITE_TARGETS = """\
targets:
  - name: agent
    provider: mock
    response: "Hello, world!"
    grader_target: judge
  - name: judge
    provider: anthropic
    model: judge-model
    max_retries: 0
    model_server: {script: judge.yaml}
  - name: other-judge
    provider: openai
    model: other-model
    max_retries: 0
    model_server: {script: other.yaml}
"""


def test_a_full_suite_with_an_implicit_grader_and_an_llm_grader(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "tone.md").write_text("Rate the tone of: {{output}}")
    path = write_suite(
        tmp_path,
        SUITE_TARGETS,
        """\
        execution: {target: agent}
        tests:
          - id: implicit
            input: Say hello.
            criteria: Greets the world.
          - id: explicit
            input: Say hello.
            assertions:
              - type: llm_grader
                target: other-judge
                model: other-model-2024
                prompt: file://prompts/tone.md
              - type: contains
                value: Hello
        """,
        {"judge": [reply(PASS)], "other": [reply({"score": 1.0})]},
    )
    cases = resolve_cases(load_suite(path))
    implicit, explicit = cases
    assert implicit.grader_target == "judge"
    assert [a.type for a in implicit.assertions] == ["llm-grader"]
    assert list(implicit.llm_targets) == ["judge"]
    assert list(explicit.llm_targets) == ["other-judge@other-model-2024"]
    assert explicit.llm_targets["other-judge@other-model-2024"].model == "other-model-2024"
    prompt = explicit.assertions[0].prompt  # type: ignore[union-attr]
    assert prompt == f"file://{tmp_path / 'prompts' / 'tone.md'}"

    step = tmp_path / "step"
    sessions = enrich_runs(run_agents(cases, step, workers=2), step)
    grades = grade_cases(cases, sessions, workers=2, log_dir=step / "judges")
    assert [(g.test_id, g.verdict) for g in grades] == [("implicit", "pass"), ("explicit", "pass")]
    body = requests(step / "judges", "other-judge@other-model-2024")[0]
    assert body["model"] == "other-model-2024"
    assert "Rate the tone of: Hello, world!" in texts(body)
    implicit_sent = texts(requests(step / "judges")[0])
    assert "[[ ## criteria ## ]]\nGreets the world." in implicit_sent


@pytest.mark.parametrize(
    ("judging", "expected"),
    [("", "judge"), ("judging: {panel: [other-judge, judge]}\n", "other-judge")],
)
def test_grader_target_resolution(tmp_path: Path, judging: str, expected: str) -> None:
    targets = SUITE_TARGETS.replace("    grader_target: judge\n", "")
    if not judging:
        targets = targets.split("  - name: other-judge")[0]  # only one LLM target
    path = write_suite(
        tmp_path,
        targets,
        judging + "tests: [{id: a, input: hi, criteria: Says hi.}]\n",
        {"judge": [reply(PASS)], "other": [reply(PASS)]},
    )
    case = only_case(path)
    assert case.grader_target == expected
    assert list(case.llm_targets) == [expected]
    # Given the targets, the load-time warning knows the implicit grader covers the test.
    loaded = load_suite(path)
    doc = read_yaml_file(path)
    args = (loaded.targets, loaded.agent_of, loaded.judges)
    assert ungradable_tests(loaded.suite, doc, *args) == []
    assert len(ungradable_tests(loaded.suite, doc)) == 1  # targets unknown: warned


def only_case(path: Path) -> ResolvedCase:
    cases = resolve_cases(load_suite(path))
    assert len(cases) == 1
    return cases[0]


def test_no_grader_target_keeps_the_no_graders_error(tmp_path: Path) -> None:
    targets = SUITE_TARGETS.replace("    grader_target: judge\n", "")
    path = write_suite(
        tmp_path,
        targets,
        "execution: {target: agent}\ntests: [{id: a, input: hi, criteria: Says hi.}]\n",
        {"judge": [], "other": []},
    )
    loaded = load_suite(path)
    case = resolve_cases(loaded)[0]
    assert (case.grader_target, case.assertions, case.llm_targets) == (None, [], {})
    assert "add grader_target: <llm target>" in only(loaded.warnings).fix


def only(items: list[Any]) -> Any:
    assert len(items) == 1, items
    return items[0]


def test_graders_that_cannot_run_are_located_warnings_and_their_tests_errors(
    tmp_path: Path,
) -> None:
    targets = SUITE_TARGETS.replace("    grader_target: judge\n", "")
    path = write_suite(
        tmp_path,
        targets,
        """\
        execution: {target: agent}
        tests:
          - id: a
            input: hi
            assertions:
              - type: llm-grader
                target: judeg
              - type: llm-grader
                target: agent
              - type: rubrics
                prompt: file://prompts/missing.md
                criteria: [Polite]
              - type: code-grader
                command: [python3, -c, "print(1)"]
                target: {max_calls: 3}
        """,
        {"judge": [], "other": []},
    )
    # AgentV loads the suite and fails each grader when it runs: here each is a located warning
    # before any run, and the test an error without running its agent.
    loaded = load_suite(path)
    suffix = "; its tests cannot be graded, so a run makes them errors without running their agent"
    issues = [
        (i.line, i.message.removesuffix(suffix), i.fix)
        for i in loaded.warnings
        if i.message.endswith(suffix)
    ]
    defined = "LLM targets: judge, other-judge"
    no_target = (
        "has no grader target: agent target 'agent' has no grader_target and the suite defines "
        "several LLM targets (judge, other-judge)"
    )
    fix = "add grader_target: judge to the agent target 'agent', or target: to the assertion"
    # An undefined target ('judeg', line 21) is a load warning: AgentV scores that grader 0.
    assert issues[:2] == [
        (
            23,
            f"llm-grader target 'agent' is an agent, not an LLM target ({defined})",
            "name a target with provider: anthropic or openai",
        ),
        (24, f"'rubrics' {no_target}", fix),
    ]
    assert issues[2][:2] == (25, "prompt file 'prompts/missing.md' not found")
    assert issues[2][2].startswith(f"looked for {tmp_path / 'prompts' / 'missing.md'}")
    assert issues[3] == (29, f"the target proxy of 'code-grader' {no_target}", fix)
    assert len(issues) == 4
    assert "cannot be graded: " in (resolve_cases(loaded)[0].cannot_run or "")

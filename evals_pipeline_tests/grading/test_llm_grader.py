"""LLM graders against scripted judges: real HTTP through the real SDKs, no API key.

Each judge is an LLM target with `model_server:`; `LlmClients` starts its server, and the
server's request log shows exactly what the grader sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest
import yaml

from evals_pipeline.grading import grade_trial
from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.llm import LlmClients
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message, TokenUsage, ToolCall
from evals_pipeline.models.session import TraceSummary
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.consistency import ungradable_tests
from evals_pipeline.suites.yaml_positions import read_yaml_file
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader
from evals_pipeline_tests.model_server.conftest import read_log

PASS = {"score": 0.9, "assertions": [{"text": "greets", "passed": True, "evidence": "Hello"}]}


def reply(data: dict[str, Any], **usage: int) -> dict[str, Any]:
    turn: dict[str, Any] = {"text": json.dumps(data)}
    if usage:
        turn["usage"] = usage
    return turn


def judge(
    tmp_path: Path,
    turns: list[dict[str, Any]] | None = None,
    *,
    name: str = "judge",
    provider: str = "anthropic",
    rules: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An LLM target answered by a scripted model server (the script written to tmp_path)."""
    script: dict[str, Any] = {"turns": turns or []}
    if rules:
        script["rules"] = rules
    path = tmp_path / f"{name}.script.yaml"
    path.write_text(yaml.safe_dump(script))
    spec: dict[str, Any] = {
        "name": name,
        "provider": provider,
        "model": f"{name}-model",
        "max_retries": 0,
        "model_server": {"script": str(path)},
        **fields,
    }
    return spec


def judged_case(
    make_case: CaseFactory, spec: dict[str, Any], assertions: list[dict[str, Any]], **fields: Any
) -> ResolvedCase:
    return make_case(
        assertions, grader_target=spec["name"], llm_targets={spec["name"]: spec}, **fields
    )


def grade(case: ResolvedCase, session: Any, logs: Path) -> Any:
    with LlmClients(case.llm_targets, log_dir=logs) as clients:
        return grade_trial(case, session, llm=clients)


def requests(logs: Path, name: str = "judge") -> list[dict[str, Any]]:
    """The bodies of the API requests a scripted judge received."""
    entries = read_log(logs / f"{name}.model_server.jsonl")
    return [e["body"] for e in entries if e["event"] == "request"]


def texts(body: dict[str, Any]) -> str:
    """Every string in a request body, joined: system prompt and messages alike."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk({k: v for k, v in body.items() if k in ("system", "messages", "input", "instructions")})
    return "\n".join(found)


# --- freeform ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_freeform_pass_with_judge_usage_kept_apart(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path, provider: str
) -> None:
    spec = judge(
        tmp_path,
        [reply(PASS, input_tokens=120, output_tokens=30)],
        provider=provider,
        pricing={"input": 1.0, "output": 2.0},
    )
    case = judged_case(make_case, spec, [{"type": "llm-grader"}])
    session = make_session(token_usage=TokenUsage(input=10, output=5), cost_usd=0.01)
    trial = grade(case, session, tmp_path / "logs")
    result = only_grader(trial)
    assert (result.type, result.name, result.verdict, result.score) == (
        "llm-grader",
        "llm-grader",
        "pass",
        0.9,
    )
    assert result.assertions[0].text == "greets" and result.assertions[0].evidence == "Hello"
    assert result.details is not None
    assert result.details["grader_target"] == "judge" and result.details["mode"] == "freeform"
    assert result.details["repaired"] is False
    usage = result.judge_usage
    assert usage is not None
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 120, 30)
    assert usage.cost_usd == pytest.approx((120 * 1.0 + 30 * 2.0) / 1e6)
    assert (trial.verdict, trial.score, trial.judge_usage) == ("pass", 0.9, usage)
    # The agent's own usage and cost are untouched by the judge's.
    assert (trial.token_usage, trial.cost_usd) == (TokenUsage(input=10, output=5), 0.01)


def test_freeform_fail_and_score_clamped(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    low = judge(tmp_path, [reply({"score": 0.5, "assertions": []})], name="low")
    high = judge(tmp_path, [reply({"score": 1.7})], name="high")
    case = make_case(
        [{"type": "llm-grader", "target": "low"}, {"type": "llm-grader", "target": "high"}],
        llm_targets={"low": low, "high": high},
    )
    trial = grade(case, make_session(), tmp_path / "logs")
    first, second = trial.graders
    assert (first.verdict, first.score) == ("fail", 0.5)
    assert (second.verdict, second.score) == ("pass", 1.0)
    assert (trial.verdict, trial.execution_status, trial.score) == ("fail", "quality_failure", 0.75)
    assert trial.judge_usage is not None and trial.judge_usage.calls == 2


def test_negated_llm_grader(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [reply({"score": 0.1})])
    case = judged_case(make_case, spec, [{"type": "llm-grader", "negate": True}])
    result = only_grader(grade(case, make_session(), tmp_path / "logs"))
    assert (result.verdict, result.score) == ("pass", 0.9)


# --- rubric mode ------------------------------------------------------------------------------


def test_rubrics_weighted_with_a_failing_required_criterion(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    checks = {
        "checks": [
            {"id": "greets", "satisfied": True, "reasoning": "says Hello"},
            {"id": "names-world", "satisfied": True, "reasoning": "says world"},
            {"id": "no-emoji", "satisfied": False, "reasoning": "has an emoji"},
        ],
        "overall_reasoning": "fine apart from the emoji",
    }
    criteria = [
        # AgentV makes a criterion required unless it says otherwise.
        {"id": "greets", "outcome": "Greets the user", "weight": 3, "required": False},
        "Names the world",  # a string item: id rubric-2, required
        {"id": "no-emoji", "outcome": "Uses no emoji", "required": True},
    ]
    checks["checks"][1]["id"] = "rubric-2"
    spec = judge(tmp_path, [reply(checks)])
    case = judged_case(make_case, spec, [{"type": "rubrics", "criteria": criteria}])
    logs = tmp_path / "logs"
    trial = grade(case, make_session(), logs)
    result = only_grader(trial)
    # 3 + 1 of 5 weight satisfied: 0.8, which would pass, but a required criterion failed.
    assert result.score == pytest.approx(0.8)
    assert result.verdict == "fail"
    assert [(a.text, a.passed) for a in result.assertions] == [
        ("[greets] Greets the user", True),
        ("[rubric-2] Names the world", True),
        ("[no-emoji] Uses no emoji", False),
    ]
    assert result.details is not None and result.details["failed_required"] == ["no-emoji"]
    assert result.details["overall_reasoning"] == "fine apart from the emoji"
    # AgentV's rule: the test score is the weighted mean of grader scores.
    assert trial.score == pytest.approx(0.8)
    sent = texts(requests(logs)[0])
    assert "- [greets] (weight: 3): Greets the user" in sent
    assert "- [no-emoji] (REQUIRED): Uses no emoji" in sent
    assert '"checks"' in sent and "overall_reasoning" in sent


def test_llm_grader_rubrics_and_a_skipped_criterion(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    answer = {"checks": [{"id": "a", "satisfied": True, "reasoning": "ok"}]}
    spec = judge(tmp_path, [reply(answer)])
    rubrics = [{"id": "a", "outcome": "A holds"}, {"id": "b", "outcome": "B holds"}]
    case = judged_case(make_case, spec, [{"type": "llm-grader", "rubrics": rubrics}])
    result = only_grader(grade(case, make_session(), tmp_path / "logs"))
    # AgentV 4.42.4 scores the checks the model returned: `b` counts for nothing.
    assert (result.score, result.verdict) == (1.0, "pass")
    assert [a.text for a in result.assertions] == ["[a] A holds"]
    assert result.details is not None and result.details["unreported"] == ["b"]


# --- score-range (analytic) rubrics --------------------------------------------------------

BANDS = {0: "Bad", 4: "Fair", 8: "Good"}


def test_score_ranges_weighted_mean_of_score_over_ten(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    answer = {
        "checks": [
            {"id": "accuracy", "score": 9, "reasoning": "right"},
            {"id": "style", "score": 6.0},  # 6.0 is the integer 6, as in JavaScript
            {"id": "ghost", "score": 0, "reasoning": "no such criterion"},
        ],
        "overall_reasoning": "good",
    }
    spec = judge(tmp_path, [reply(answer)])
    criteria = [
        {"id": "accuracy", "outcome": "Is right", "weight": 3, "score_ranges": BANDS},
        {"id": "style", "score_ranges": BANDS, "operator": "correctness"},
        {"id": "skipped", "outcome": "Never reported", "score_ranges": BANDS},
    ]
    case = judged_case(make_case, spec, [{"type": "rubrics", "criteria": criteria}])
    logs = tmp_path / "logs"
    result = only_grader(grade(case, make_session(), logs))
    # AgentV counts only the checks returned: (0.9 * 3 + 0.6) / 4; `skipped` weighs nothing.
    assert result.score == pytest.approx(0.825)
    assert result.verdict == "pass"
    assert [(a.text, a.passed) for a in result.assertions] == [
        ("[accuracy] Is right - Score: 9/10 (Good)", True),
        ("[style] style - Score: 6/10 (Fair)", False),
    ]
    assert result.details is not None
    assert result.details["raw_scores"] == {"accuracy": 9, "style": 6}
    sent = texts(requests(logs)[0])
    assert "### Criterion: accuracy (weight: 3)\nDescription: Is right\nScore ranges:" in sent
    assert "  - Score 0-3: Bad\n  - Score 4-7: Fair\n  - Score 8-10: Good" in sent
    assert "### Criterion: style\nOperator: correctness\nScore ranges:" in sent
    assert '"score": integer (0-10),' in sent


@pytest.mark.parametrize(
    ("criterion", "score", "verdict"),
    [
        ({"min_score": 0.8}, 7, "fail"),  # 0.7 < 0.8: the grader fails, its score stays 0.7
        ({"min_score": 0.7}, 7, "fail"),  # at the gate, yet below 0.8: fails by score
        ({"required": True}, 9, "fail"),  # required: true means 10/10
        ({"required": True}, 10, "pass"),
        ({}, 8, "pass"),
    ],
)
def test_score_range_gates(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    criterion: dict[str, Any],
    score: int,
    verdict: str,
) -> None:
    spec = judge(tmp_path, [reply({"checks": [{"id": "c", "score": score}]})])
    item = {"id": "c", "score_ranges": BANDS, **criterion}
    case = judged_case(make_case, spec, [{"type": "llm-grader", "rubrics": [item]}])
    result = only_grader(grade(case, make_session(), tmp_path / "logs"))
    assert (result.score, result.verdict) == (pytest.approx(score / 10), verdict)


@pytest.mark.parametrize("bad", [11, 7.5, "7", True])
def test_a_score_that_is_not_an_integer_0_to_10_is_asked_again(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path, bad: Any
) -> None:
    spec = judge(
        tmp_path,
        [
            reply({"checks": [{"id": "c", "score": bad}]}),
            reply({"checks": [{"id": "c", "score": 4}]}),
        ],
    )
    item = {"id": "c", "score_ranges": BANDS}
    case = judged_case(make_case, spec, [{"type": "rubrics", "criteria": [item]}])
    result = only_grader(grade(case, make_session(), tmp_path / "logs"))
    assert (result.score, result.verdict) == (pytest.approx(0.4), "fail")
    assert result.details is not None and result.details["repaired"] is True


def test_checklist_operators_add_agentv_guidance(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    answer = {"checks": [{"id": "a", "satisfied": True, "reasoning": "ok"}]}
    spec = judge(tmp_path, [reply(answer)])
    rubrics = [{"id": "a", "outcome": "Costs 5 euros", "operator": "contradiction"}]
    case = judged_case(make_case, spec, [{"type": "llm-grader", "rubrics": rubrics}])
    logs = tmp_path / "logs"
    assert only_grader(grade(case, make_session(), logs)).score == 1.0
    sent = texts(requests(logs)[0])
    assert "[[ ## rubrics ## ]]\n\nOperator guidance:\n- Contradiction guard:" in sent
    assert "- [a] (REQUIRED) (operator: contradiction): Costs 5 euros" in sent
    assert "Correctness:" not in sent


# --- unusable replies and failed calls ------------------------------------------------------


def test_malformed_json_then_valid_is_repaired(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [{"text": "The answer looks good to me."}, reply(PASS)])
    case = judged_case(make_case, spec, [{"type": "llm-grader"}])
    logs = tmp_path / "logs"
    result = only_grader(grade(case, make_session(), logs))
    assert (result.verdict, result.score) == ("pass", 0.9)
    assert result.details is not None and result.details["repaired"] is True
    assert result.judge_usage is not None and result.judge_usage.calls == 2
    repair = requests(logs)[1]
    assert "could not be used" in texts(repair)


def test_malformed_twice_is_a_grader_error_with_the_raw_text(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [{"text": "I think it is fine."}, {"text": "Score: high {oops"}])
    case = judged_case(
        make_case, spec, [{"type": "llm-grader"}, {"type": "contains", "value": "Hello"}]
    )
    trial = grade(case, make_session(), tmp_path / "logs")
    grader = trial.graders[0]
    assert (grader.verdict, grader.score) == ("error", None)
    assert grader.error is not None
    assert "no valid FreeformReply in 2 replies" in message_of(grader.error)
    assert 'the model\'s last reply: "Score: high {oops"' in message_of(grader.error)
    assert grader.judge_usage is not None and grader.judge_usage.calls == 2
    assert (trial.verdict, trial.execution_status, trial.failure_stage) == (
        "error",
        "execution_error",
        "grader",
    )
    assert trial.error is not None and message_of(trial.error).startswith(
        "grader 'llm-grader' failed: "
    )


def test_http_500_is_an_error_and_other_cases_go_on(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [{"http_error": {"status": 500, "message": "judge overloaded"}}])
    broken = judged_case(make_case, spec, [{"type": "llm-grader"}])
    other = make_case([{"type": "contains", "value": "Hello"}], case_key="case-2", test_id="case-2")
    sessions = [make_session(), make_session(case_key="case-2")]
    grades = grade_cases([broken, other], sessions, workers=2, log_dir=tmp_path / "logs")
    failed, passed = grades
    assert (failed.verdict, failed.execution_status) == ("error", "execution_error")
    assert failed.error is not None and "HTTP 500" in message_of(failed.error)
    assert "judge overloaded" in message_of(failed.error)
    usage = failed.trials[0].graders[0].judge_usage
    assert usage is not None and (usage.calls, usage.errors) == (0, 1)
    assert passed.verdict == "pass"


def test_an_llm_grader_without_clients_or_target_is_an_error(
    make_case: CaseFactory, make_session: SessionFactory
) -> None:
    no_target = only_grader(grade_trial(make_case([{"type": "llm-grader"}]), make_session()))
    assert no_target.verdict == "error"
    assert no_target.error is not None and message_of(no_target.error).startswith(
        "no grader target: add"
    )
    no_clients = make_case([{"type": "llm-grader"}], grader_target="judge")
    result = only_grader(grade_trial(no_clients, make_session()))
    assert result.error is not None and message_of(result.error).startswith(
        "no LLM client for target"
    )


# --- the prompt -------------------------------------------------------------------------------


def test_prompt_variables_are_rendered(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    # An OpenAI judge: the Anthropic SDK in use sends no temperature.
    spec = judge(
        tmp_path, [reply({"checks": [{"id": "r1", "satisfied": True}]})], provider="openai"
    )
    prompt = dedent(
        """\
        Q: {{ input }}
        A: {{output}}
        REF: {{expected_output}}
        CRIT: {{criteria}}
        META: {{metadata_json}}
        RUBRICS: {{rubrics_json}}
        DIFF: {{file_changes}}
        TOOLS: {{tool_calls}}
        KEEP: {{unknown}}
        """
    )
    assertion = {
        "type": "llm-grader",
        "prompt": prompt,
        "rubrics": [{"id": "r1", "outcome": "Is short"}],
        "temperature": 0.3,
    }
    case = judged_case(
        make_case,
        spec,
        [assertion],
        expected_output=[{"role": "assistant", "content": "Hello!"}],
        metadata={"level": "easy"},
    )
    messages = [
        Message(role="user", content="Say hello."),
        Message(
            role="assistant",
            tool_calls=[ToolCall(tool="Bash", input={"command": "echo hi"}, output="hi")],
        ),
        Message(role="assistant", content="Hello, world!"),
    ]
    session = make_session(
        messages,
        file_changes="diff --git a/hello.py b/hello.py\n+print('hi')\n",
        trace_summary=TraceSummary(tool_calls={"Bash": 1}),
    )
    logs = tmp_path / "logs"
    assert only_grader(grade(case, session, logs)).verdict == "pass"
    body = requests(logs)[0]
    sent = texts(body)
    assert "Q: Say hello.\nA: Hello, world!\nREF: Hello!\nCRIT: Greets the user.\n" in sent
    assert 'META: {"level":"easy"}' in sent
    # JSON.stringify's compact form, and the criterion as AgentV's parser leaves it.
    assert 'RUBRICS: [{"id":"r1","outcome":"Is short","weight":1,"required":true}]' in sent
    assert "DIFF: diff --git a/hello.py b/hello.py\n+print('hi')" in sent
    assert 'TOOLS: - Bash {"command": "echo hi"} → hi' in sent
    assert "KEEP: {{unknown}}" in sent
    assert "[[ ## answer ## ]]" not in sent  # the prompt replaced the default template
    assert body["temperature"] == 0.3
    assert body["model"] == "judge-model"


def test_a_prompt_without_variables_is_the_criteria(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [reply(PASS)])
    case = judged_case(
        make_case, spec, [{"type": "llm-grader", "prompt": "Is the answer cheerful?"}]
    )
    logs = tmp_path / "logs"
    grade(case, make_session(), logs)
    sent = texts(requests(logs)[0])
    assert (
        "[[ ## criteria ## ]]\nIs the answer cheerful?\n\n[[ ## question ## ]]\nSay hello." in sent
    )
    assert "[[ ## answer ## ]]\nHello, world!" in sent
    assert "Greets the user." not in sent
    assert '"score": <number between 0.0 and 1.0>' in sent


# --- suites: resolution, the implicit grader, validation ------------------------------------


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

"""LLM graders against scripted judges: real HTTP through the real SDKs, no API key.

Each judge is an LLM target with `model_server:`; `LlmClients` starts its server, and the
server's request log shows exactly what the grader sent.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from evals_pipeline.grading import grade_trial
from evals_pipeline.layers import grade_cases
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message, TokenUsage, ToolCall
from evals_pipeline.models.session import TraceSummary
from evals_pipeline_tests.grading.conftest import CaseFactory, SessionFactory, only_grader
from evals_pipeline_tests.grading.scripted_judges import (
    PASS,
    grade,
    judge,
    judged_case,
    reply,
    requests,
    texts,
)

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

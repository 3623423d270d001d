"""LLM providers as the target under test, and conversations: the real openai and anthropic SDKs
over HTTP to the scripted model server, cli turns as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

import pytest

from evals_pipeline.layers import enrich_runs, grade_cases, run_agents
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.grade import CaseGrade
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline.suites.prompt import DEFAULT_SYSTEM_PROMPT


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text), encoding="utf-8")
    return path


def run(suite: Path, folder: Path) -> dict[str, CaseGrade]:
    """Run, enrich and grade every case of a suite; grades by test id."""
    cases = resolve_cases(load_suite(suite))
    runs = run_agents(cases, folder / "runs", workers=2)
    sessions = enrich_runs(runs, folder / "sessions")
    grades = grade_cases(cases, sessions, workers=2, log_dir=folder / "judges")
    return {g.test_id: g for g in grades}


def requests(folder: Path) -> list[dict[str, Any]]:
    """Request bodies the targets' scripted model servers received, in order."""
    bodies: list[dict[str, Any]] = []
    for log in sorted(folder.glob("runs/**/*.model_server.jsonl")):
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            if entry["event"] == "request":
                bodies.append(entry["body"])
    return bodies


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_llm_target_answers_a_test(project: Path, tmp_path: Path, provider: str) -> None:
    write(
        project,
        "model.yaml",
        """\
        side_requests: false
        rules:
          - when: {contains: ['<file path="notes.txt">', "code is 7731", "What is the code?"]}
            turns: [{text: The code is 7731., usage: {input_tokens: 50, output_tokens: 5}}]
        turns: [{text: I was asked something else.}]
        """,
    )
    write(project, "notes.txt", "The code is 7731.\n")
    write(
        project,
        ".agentv/targets.yaml",
        f"""\
        targets:
          - name: llm
            provider: {provider}
            model: scripted
            model_server: {{script: model.yaml}}
            pricing: {{input: 1.0, output: 2.0}}
        """,
    )
    suite = write(
        project,
        "s.eval.yaml",
        """\
        execution: {target: llm}
        tests:
          - id: file
            input: What is the code?
            input_files: [notes.txt]
            assertions:
              - {type: contains, value: "7731"}
              - {type: token-usage, max_total: 55}
        """,
    )
    grade = run(suite, tmp_path / "out")["file"]
    assert (grade.score, grade.execution_status) == (1.0, "ok")
    trial = grade.trials[0]
    assert trial.token_usage is not None and trial.token_usage.total == 55
    assert trial.cost_usd == pytest.approx((50 * 1.0 + 5 * 2.0) / 1_000_000)
    [body] = requests(tmp_path / "out")
    sent = json.dumps(body)
    # AgentV's LLM rendering: the default system prompt, the file's contents embedded.
    assert DEFAULT_SYSTEM_PROMPT in sent
    assert (
        '<file path=\\"notes.txt\\">\\nThe code is 7731.\\n</file>\\n\\nWhat is the code?' in sent
    )


def test_an_llm_target_error_is_the_runs_error(project: Path, tmp_path: Path) -> None:
    write(project, "model.yaml", "turns: [{http_error: {status: 400, message: bad model}}]\n")
    write(
        project,
        ".agentv/targets.yaml",
        """\
        targets:
          - {name: llm, provider: openai, model: m, model_server: {script: model.yaml},
             max_retries: 0}
        """,
    )
    suite = write(
        project,
        "s.eval.yaml",
        "execution: {target: llm}\ntests: [{id: t, input: hi, "
        "assertions: [{type: contains, value: x}]}]\n",
    )
    grade = run(suite, tmp_path / "out")["t"]
    assert grade.execution_status == "execution_error"
    assert grade.error is not None and "bad model" in message_of(grade.error)


CONVERSATION_SCRIPT = """\
side_requests: false
rules:
  - when: {contains: "You count."}
    turns: [{text: one}, {text: two}, {text: three}]
  - when: {contains: ["criterion-1", "Says a number"]}
    turns:
      - text: '{"checks": [{"id": "criterion-1", "satisfied": true, "reasoning": "ok"}],
               "overall_reasoning": "ok"}'
turns: [{text: unscripted}]
"""


def test_a_conversation_with_an_llm_target(project: Path, tmp_path: Path) -> None:
    write(project, "model.yaml", CONVERSATION_SCRIPT)
    write(
        project,
        ".agentv/targets.yaml",
        "targets: [{name: llm, provider: openai, model: m, model_server: {script: model.yaml}}]\n",
    )
    suite = write(
        project,
        "s.eval.yaml",
        """\
        execution: {target: llm}
        tests:
          - id: counting
            mode: conversation
            window_size: 1
            input: [{role: system, content: You count.}]
            turns:
              - input: First?
                assertions: [{type: equals, value: one}, Says a number]
              - input: Second?
                assertions: [{type: equals, value: two}]
              - input: Third?
                assertions: [{type: equals, value: three}]
            assertions:
              - {type: contains, value: "user: First?"}
        """,
    )
    grade = run(suite, tmp_path / "out")["counting"]
    graders = {g.name: g.score for g in grade.trials[0].graders}
    # With a window of one exchange the third request shows one earlier answer, not two: the
    # server answers "two" again, so turn 3 fails; the transcript check passes.
    assert graders == {"turn-1": 1.0, "turn-2": 1.0, "turn-3": 0.0, "conversation": 1.0}
    assert grade.score == pytest.approx(0.75)
    # The target's requests (not its grading of turn 1's rubric): a window of one exchange.
    sent = [b for b in requests(tmp_path / "out") if "criterion-1" not in json.dumps(b)]
    roles = [[m["role"] for m in b["messages"]] for b in sent]
    assert roles == [
        ["system", "user"],
        ["system", "assistant", "user"],
        ["system", "assistant", "user"],
    ]
    assert [b["messages"][-1]["content"] for b in sent] == ["First?", "Second?", "Third?"]


def test_a_conversation_with_a_cli_target(project: Path, tmp_path: Path) -> None:
    write(
        project,
        "bot.py",
        """\
        import json, sys
        prompt, eval_id, out = sys.argv[1:4]
        if "crash" in prompt:
            sys.exit("crashed on purpose")
        json.dump({"text": f"{eval_id}: {prompt}"}, open(out, "w"))
        """,
    )
    write(
        project,
        ".agentv/targets.yaml",
        "targets: [{name: bot, provider: cli, command: 'python3 bot.py {PROMPT} {EVAL_ID} "
        "{OUTPUT_FILE}'}]\n",
    )
    suite = write(
        project,
        "s.eval.yaml",
        """\
        tests:
          - id: chat
            mode: conversation
            aggregation: min
            on_turn_failure: continue
            input: Be a bot.
            turns:
              - input: hello
                assertions: [{type: equals, value: "chat/turn-1: hello"}]
              - input: please crash
              - input: again
                assertions: [{type: equals, value: "chat/turn-3: again"}]
          - id: stops
            mode: conversation
            on_turn_failure: stop
            input: Be a bot.
            turns:
              - input: hello
                assertions: [{type: contains, value: goodbye}]
              - input: again
        """,
    )
    grades = run(suite, tmp_path / "out")
    chat = {
        g.name: (g.score, g.assertions[0].text if g.assertions else "")
        for g in grades["chat"].trials[0].graders
    }
    # A cli target gets each turn's text alone, with {EVAL_ID} <test id>/turn-<n>.
    assert chat["turn-1"][0] == 1.0
    assert chat["turn-2"][0] == 0.0 and "crashed on purpose" in chat["turn-2"][1]
    assert chat["turn-3"][0] == 1.0
    assert (grades["chat"].score, grades["chat"].execution_status) == (0.0, "quality_failure")
    stops = {g.name: g.score for g in grades["stops"].trials[0].graders}
    assert stops == {"turn-1": 0.0, "turn-2": 0.0}
    assert grades["stops"].trials[0].graders[1].assertions[0].text.startswith("Skipped")

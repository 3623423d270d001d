"""Executable prompt templates (`prompt: {command: [...]}`): real programs, a scripted judge.

The program gets the code-grader payload on stdin and runs from its script's folder; what it
prints is the llm-grader's whole template. A failing program is the grader's error.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from evals_pipeline.models.assertions import CodeGraderAssertion, LlmGraderAssertion
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.grading.conftest import (
    CaseFactory,
    SessionFactory,
    only_grader,
    python_grader,
)
from evals_pipeline_tests.grading.scripted_judges import (
    PASS,
    grade,
    judge,
    judged_case,
    reply,
    requests,
    texts,
)

TEMPLATE = """\
import json, os, sys
payload = json.load(sys.stdin)
print(f"  TEMPLATE from {os.path.basename(os.getcwd())}")
print(f"Q: {payload['input'][0]['content']}")
print(f"A: {payload['output']} / {payload['answer']}")
print(f"CRIT: {payload['criteria']}")
print(f"CONFIG: {json.dumps(payload['config'], sort_keys=True)}")
print("FILLED: {{ criteria }}")
print()
"""


def template(tmp_path: Path, source: str = TEMPLATE) -> list[str]:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    return python_grader(tmp_path / "prompts", "template.py", source)


def test_the_printed_prompt_is_the_whole_template(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [reply(PASS)])
    command = template(tmp_path)
    assertion = {
        "type": "llm-grader",
        "prompt": {"command": command, "config": {"strictMode": True}},
        "config": {"unused": 1},
    }
    case = judged_case(make_case, spec, [assertion])
    logs = tmp_path / "logs"
    result = only_grader(grade(case, make_session(), logs))
    assert (result.verdict, result.score) == ("pass", 0.9)
    sent = texts(requests(logs)[0])
    # Trimmed; run from the script's folder; the prompt's config (keys snake_case, as AgentV
    # sends them) wins over the grader's; {{variables}} in the output are filled in.
    assert (
        "TEMPLATE from prompts\nQ: Say hello.\nA: Hello, world! / Hello, world!\n"
        'CRIT: Greets the user.\nCONFIG: {"strict_mode": true}\nFILLED: Greets the user.'
    ) in sent
    assert "[[ ## answer ## ]]" not in sent  # not the default template
    assert '"score": <number between 0.0 and 1.0>' in sent  # the freeform reply schema


def test_without_variables_the_output_is_still_the_whole_template(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    # AgentV: a program's prompt replaces the template; only inline text can be bare criteria.
    spec = judge(tmp_path, [reply(PASS)])
    command = template(tmp_path, "print('Just judge it.')\n")
    case = judged_case(make_case, spec, [{"type": "llm-grader", "prompt": {"command": command}}])
    logs = tmp_path / "logs"
    grade(case, make_session(), logs)
    body = requests(logs)[0]
    assert body["messages"][-1]["content"] == "Just judge it."


def test_the_graders_config_and_id_when_the_prompt_has_no_config(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [reply({"checks": [{"id": "rubric-1", "satisfied": True}]})])
    assertion = {
        "type": "llm-grader",
        "id": "GREETS",
        "prompt": {"script": template(tmp_path)},  # AgentV's deprecated spelling
        "config": {"levelOfDetail": "high"},
        "rubrics": ["Greets"],
    }
    case = judged_case(make_case, spec, [assertion])
    logs = tmp_path / "logs"
    result = only_grader(grade(case, make_session(), logs))
    assert (result.name, result.score) == ("llm-grader", 1.0)  # the id names nothing
    sent = texts(requests(logs)[0])
    assert 'CONFIG: {"id": "GREETS", "level_of_detail": "high"}' in sent
    assert '"satisfied": boolean' in sent  # rubric mode's reply schema


@pytest.mark.parametrize(
    ("source", "error", "stderr"),
    [
        (
            "import sys\nprint('half a prompt')\nsys.exit('no metadata')\n",
            "Prompt template execution failed: exited with code 1: no metadata",
            "no metadata",
        ),
        (
            "print('   ')\n",
            "Prompt template execution failed: Prompt template produced empty output",
            None,
        ),
    ],
)
def test_a_failing_template_is_the_graders_error(
    make_case: CaseFactory,
    make_session: SessionFactory,
    tmp_path: Path,
    source: str,
    error: str,
    stderr: str | None,
) -> None:
    spec = judge(tmp_path, [reply(PASS)])
    command = template(tmp_path, source)
    case = judged_case(
        make_case,
        spec,
        [
            {"type": "llm-grader", "prompt": {"command": command}},
            {"type": "contains", "value": "H"},
        ],
    )
    logs = tmp_path / "logs"
    trial = grade(case, make_session(), logs)
    broken, other = trial.graders
    assert (broken.verdict, broken.score, message_of(broken.error)) == ("error", None, error)
    assert (broken.stderr or "").strip() == (stderr or "")
    assert other.verdict == "pass"  # the other graders go on
    assert trial.verdict == "error"
    assert requests(logs) == []  # the judge was never asked


def test_a_missing_script_fails_the_grader_when_it_runs(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    spec = judge(tmp_path, [reply(PASS)])
    command = ["python3", "prompts/missing.py"]  # not resolved: the loader found no such file
    case = judged_case(make_case, spec, [{"type": "llm-grader", "prompt": {"command": command}}])
    result = only_grader(grade(case, make_session(), tmp_path / "logs"))
    assert result.verdict == "error"
    assert (message_of(result.error) or "").startswith(
        "Prompt template execution failed: prompt command file not found: prompts/missing.py"
    )


def test_the_script_is_found_like_an_input_file_and_made_absolute(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "template.py").write_text("print('{{output}}')\n")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: mock, provider: mock, response: hi, grader_target: judge}\n"
        "  - {name: judge, provider: openai, model: m}\n"
    )
    suite = tmp_path / "evals" / "s.eval.yaml"
    suite.parent.mkdir()
    suite.write_text(
        dedent(
            """\
            tests:
              - id: a
                input: hi
                assertions:
                  - type: llm-grader
                    prompt:
                      command: [uv, run, shared/template.py]
            """
        )
    )
    loaded = load_suite(suite)
    assert loaded.warnings == []
    (case,) = resolve_cases(loaded)
    grader = case.assertions[0]
    assert isinstance(grader, LlmGraderAssertion) and grader.prompt_command is not None
    # Found from the repository root (AgentV's search roots); only the last item is a path.
    assert grader.prompt_command.command == ["uv", "run", str(tmp_path / "shared" / "template.py")]


def test_command_wins_over_script_and_ids_reach_a_code_graders_config() -> None:
    grader = LlmGraderAssertion.model_validate(
        {"type": "llm-grader", "prompt": {"command": ["a.py"], "script": ["b.py"]}}
    )
    assert grader.prompt_command is not None and grader.prompt_command.command == ["a.py"]
    code = CodeGraderAssertion.model_validate(
        {"type": "code-grader", "command": ["g.py"], "id": "X", "limit": 3, "config": {"a": 1}}
    )
    assert (code.id, code.config, code.display_name()) == (
        "X",
        {"id": "X", "limit": 3, "a": 1},
        "code-grader",
    )


def test_a_long_answer_reaches_the_template_inline(
    make_case: CaseFactory, make_session: SessionFactory, tmp_path: Path
) -> None:
    # Code graders get a file path past 50,000 characters; AgentV inlines it for templates.
    spec = judge(tmp_path, [reply(PASS)])
    source = (
        "import json, sys\np = json.load(sys.stdin)\n"
        "print(f\"{len(p['output'])} {len(p['answer'])} {len(p['messages'])} {'output_path' in p}\")\n"
    )
    case = judged_case(
        make_case, spec, [{"type": "llm-grader", "prompt": {"command": template(tmp_path, source)}}]
    )
    long = "x" * 60_000
    logs = tmp_path / "logs"
    grade(case, make_session([Message(role="assistant", content=long)]), logs)
    assert (
        requests(logs)[0]["messages"][-1]["content"] == "60000 60000 2 True"
    )  # the transcript, too

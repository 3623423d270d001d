"""Loading and validating model scripts: formats, fixture scripts, and errors that name the turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals_pipeline.model_server import ModelScript, ScriptError, load_script
from evals_pipeline.model_server.script import RawCall, RunBash, WriteFile
from evals_pipeline_tests.model_server.conftest import FIXTURE_SCRIPTS


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_fixture_scripts_load() -> None:
    hello = load_script(FIXTURE_SCRIPTS / "hello.json")
    multi = load_script(FIXTURE_SCRIPTS / "multi.json")

    assert [len(t.tool_calls) for t in hello.turns] == [1, 1, 0]
    assert isinstance(hello.turns[0].tool_calls[0], WriteFile)
    assert hello.turns[0].tool_calls[0].path == "hello.py"
    assert isinstance(hello.turns[1].tool_calls[0], RunBash)
    assert hello.turns[2].is_text_only
    assert [len(t.tool_calls) for t in multi.turns] == [2, 1, 1, 0]
    failing = multi.turns[2].tool_calls[0]
    assert isinstance(failing, RunBash) and failing.description == "Fail on purpose"


def test_yaml_mapping_with_model_and_every_action(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "turns.yaml",
        """
model: claude-sonnet-4-5
turns:
  - text: Working.
    tool_calls:
      - {action: write_file, path: a.py, content: "x = 1\\n", overrides: {write: {path: b.py, content: y}}}
      - {action: bash, command: ls, description: List}
      - {action: call, tool: Read, arguments: {file_path: /etc/hosts}}
      - {action: call, tool: apply_patch, input: "*** Begin Patch\\n*** End Patch\\n"}
    usage: {input_tokens: 10, output_tokens: 2}
  - http_error: {status: 529, times: 2}
    text: recovered
  - http_error: {status: 400, message: bad}
""",
    )
    script = load_script(path)

    assert script.model == "claude-sonnet-4-5"
    calls = script.turns[0].tool_calls
    assert [type(c) for c in calls] == [WriteFile, RunBash, RawCall, RawCall]
    assert calls[0].overrides == {"write": {"path": "b.py", "content": "y"}}
    assert script.turns[0].usage is not None and script.turns[0].usage.input_tokens == 10
    error = script.turns[1].http_error
    assert error is not None and error.times == 2 and error.error_type == "overloaded_error"
    last = script.turns[2].http_error
    assert last is not None and last.error_type == "invalid_request_error"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (529, "overloaded_error"),
        (418, "invalid_request_error"),
        (503, "api_error"),
    ],
)
def test_default_error_type_per_status(status: int, expected: str) -> None:
    script = ModelScript.model_validate([{"http_error": {"status": status}}])
    error = script.turns[0].http_error
    assert error is not None and error.error_type == expected


def test_bare_list_and_mapping_are_the_same_script() -> None:
    turns = [{"text": "hi"}]
    assert ModelScript.model_validate(turns) == ModelScript.model_validate({"turns": turns})


def check_error(tmp_path: Path, text: str, *fragments: str, name: str = "bad.yaml") -> str:
    path = write(tmp_path, name, text)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_unknown_action_names_the_turn_and_the_choices(tmp_path: Path) -> None:
    check_error(
        tmp_path,
        "- text: a\n- tool_calls: [{action: wrte_file, path: x, content: y}]\n",
        "turn 1 (2nd): tool_calls[0]: unknown action 'wrte_file'",
        "fix: use one of: write_file, bash, call",
    )


def test_missing_field_names_the_turn_and_the_call(tmp_path: Path) -> None:
    check_error(
        tmp_path,
        "- text: a\n- text: b\n- tool_calls: [{action: bash, command: ls}, {action: write_file, path: x}]\n",
        "turn 2 (3rd): tool_calls[1]: `content` is required",
        "fix: add `content`",
    )


def test_misspelt_key_lists_the_allowed_keys(tmp_path: Path) -> None:
    check_error(
        tmp_path,
        "- text: a\n  tool_call: []\n",
        "turn 0 (1st): unknown key `tool_call`",
        "allowed here: text, tool_calls, http_error, usage",
    )
    check_error(
        tmp_path,
        "- http_error: {status: 529, time: 2}\n  text: x\n",
        "turn 0 (1st): http_error: unknown key `time`",
        "allowed here: status, type, message, times",
    )


def test_bad_status_and_missing_action(tmp_path: Path) -> None:
    check_error(tmp_path, "- http_error: {status: 200}\n", "turn 0 (1st): http_error.status")
    check_error(
        tmp_path,
        "- tool_calls: [{path: x, content: y}]\n",
        "turn 0 (1st): tool_calls[0]: a tool call without `action`",
    )


def test_turn_level_rules(tmp_path: Path) -> None:
    check_error(tmp_path, "- text: a\n- {}\n", "turn 1 (2nd): the turn is empty", "fix: give it")
    check_error(
        tmp_path,
        "- http_error: {status: 400}\n  text: never sent\n",
        "turn 0 (1st): `text`/`tool_calls` are never sent",
        "fix: add `times: N`",
    )
    check_error(
        tmp_path,
        "- http_error: {status: 529, times: 1}\n",
        "turn 0 (1st): `http_error.times` needs the reply",
    )


def test_whole_file_problems(tmp_path: Path) -> None:
    check_error(tmp_path, "just a string\n", "must be a list of turns")
    check_error(tmp_path, "[]\n", "the script has no turns")
    check_error(tmp_path, "- text: [unclosed\n", "line 2, column 1: invalid YAML")
    check_error(
        tmp_path, '[{"text": }]', "line 1, column 11: invalid JSON", "fix: ", name="bad.json"
    )
    with pytest.raises(ScriptError, match="no such file"):
        load_script(tmp_path / "missing.yaml")


def test_every_problem_is_reported(tmp_path: Path) -> None:
    message = check_error(
        tmp_path,
        "- tool_calls: [{action: nope}]\n- usage: {input_tokens: -1}\n  text: x\n",
        "turn 0 (1st)",
        "turn 1 (2nd): usage.input_tokens",
    )
    assert message.count("fix:") == 2

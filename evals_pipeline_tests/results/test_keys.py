"""Result-cache keys over real suite files: what changes a run's key, and what only re-grades."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from evals_pipeline.results import CaseKeys, case_keys
from evals_pipeline.results.keys import FileLookups
from evals_pipeline.suites import load_suite, resolve_cases

SUITE = """\
name: keys
workspace:
  template: ./template
targets:
  - name: scripted
    provider: cli
    command: python3 {EVAL_DIR}/agent.py --model MODEL --prompt-file {PROMPT_FILE} --output {OUTPUT_FILE}
tests:
  - id: first
    input: INPUT
    assertions:
      - name: check
        type: code-grader
        command: [python3, graders/check.py]
  - id: second
    input: Say hi.
    assertions: [{type: contains, value: hi}]
"""


def keys_of(folder: Path, **replace: str) -> dict[str, CaseKeys]:
    text = SUITE
    defaults = {"MODEL": "m-1", "INPUT": "Say hello."}
    for old, new in [*replace.items(), *((k, v) for k, v in defaults.items() if k not in replace)]:
        text = text.replace(old, new)
    (folder / "keys.eval.yaml").write_text(dedent(text))
    cases = resolve_cases(load_suite(folder / "keys.eval.yaml"))
    return {c.test_id: case_keys(c) for c in cases}


def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "README.md").write_text("start\n")
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "check.py").write_text("print('{\"score\": 1}')\n")
    (tmp_path / "agent.py").write_text("print('hi')\n")
    return tmp_path


def test_the_same_suite_gives_the_same_keys(tmp_path: Path) -> None:
    folder = project(tmp_path)
    assert keys_of(folder) == keys_of(folder)


def test_a_pass_sharing_its_file_lookups_gives_the_same_keys(tmp_path: Path) -> None:
    folder = project(tmp_path)
    alone = keys_of(folder)
    files = FileLookups()
    cases = resolve_cases(load_suite(folder / "keys.eval.yaml"))
    assert {c.test_id: case_keys(c, files=files) for c in cases} == alone
    # A lookup is kept for the pass: an edit is seen by the next pass.
    (folder / "graders" / "check.py").write_text("print('{\"score\": 0}')\n")
    assert case_keys(cases[0], files=files) == alone["first"]
    assert case_keys(cases[0], files=FileLookups()) != alone["first"]


def test_changing_one_input_changes_only_that_case(tmp_path: Path) -> None:
    folder = project(tmp_path)
    before, after = keys_of(folder), keys_of(folder, INPUT="Say goodbye.")
    assert before["first"].runs != after["first"].runs
    assert before["first"].grade != after["first"].grade
    assert before["second"] == after["second"]


def test_the_model_the_agent_script_and_the_template_are_run_inputs(tmp_path: Path) -> None:
    folder = project(tmp_path)
    before = keys_of(folder)
    model = keys_of(folder, MODEL="m-2")
    (folder / "agent.py").write_text("print('hello')\n")
    script = keys_of(folder, MODEL="m-2")
    (folder / "template" / "src.py").write_text("x = 1\n")
    template = keys_of(folder, MODEL="m-2")
    for earlier, later in ((before, model), (model, script), (script, template)):
        assert all(earlier[t].runs != later[t].runs for t in ("first", "second"))


def test_a_changed_grader_re_grades_without_re_running(tmp_path: Path) -> None:
    folder = project(tmp_path)
    before = keys_of(folder)
    (folder / "graders" / "check.py").write_text("print('{\"score\": 0}')\n")
    after = keys_of(folder)
    assert before["first"].runs == after["first"].runs
    assert before["first"].grade != after["first"].grade
    assert before["second"] == after["second"]


def test_a_threshold_re_grades_and_cleanup_changes_nothing(tmp_path: Path) -> None:
    folder = project(tmp_path)
    before = keys_of(folder)
    stricter = keys_of(
        folder, **{"input: INPUT": "input: Say hello.\n    execution: {threshold: 0.9}"}
    )
    assert stricter["first"].runs == before["first"].runs
    assert stricter["first"].grade != before["first"].grade
    kept = keys_of(folder, **{"  template: ./template": "  template: ./template\n  cleanup: never"})
    assert kept == before


def test_each_trial_has_its_own_run_key(tmp_path: Path) -> None:
    folder = project(tmp_path)
    keys = keys_of(folder, **{"name: keys": "name: keys\nexecution:\n  trials: {count: 3}"})
    assert len(set(keys["first"].runs)) == 3

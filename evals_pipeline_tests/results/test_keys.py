"""Result-cache keys over real suite files: what changes a run's key, and what only re-grades."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from textwrap import dedent

from evals_pipeline.results import CaseKeys, case_keys
from evals_pipeline.results.keys import (
    _GRADING_FIELDS,
    _SCHEDULING_FIELDS,
    KEY_VERSION,
    FileLookups,
    canonical_json,
)
from evals_pipeline.suites import SuiteError, load_suite, resolve_cases

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


def _json_dumps(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def test_canonical_json_writes_what_json_dumps_writes() -> None:
    """The keys stored with every result hash json.dumps's bytes: the faster writer must give
    the same bytes for whatever a case holds, falling back where orjson writes otherwise."""
    values: list[object] = [
        {"b": [1, 2.5, -0.0, 1e16, 1e-05, 0.0001, 9.9e-05, 5e-324, 1.7976931348623157e308]},
        {"text": 'caf\u00e9 \u2028 \x7f \x00\x1f\n\t"\\ /', "\u00e9": 1},
        {"big": 2**70, "neg": -(2**63), "none": None, "flag": True},
        {"nested": {"z": [{"y": "1e-5 code-grader e+1"}], "a": {}}, "empty": []},
        "case-1e+5",
        [float(f"1e{e}") for e in range(-30, 30)],
    ]
    for value in values:
        assert canonical_json(value) == _json_dumps(value), value


def test_the_keys_of_the_example_suites_hash_json_dumps(tmp_path: Path) -> None:
    """Every example case's spec written both ways gives the same bytes (its keys unchanged)."""
    examples = sorted((Path(__file__).parents[2] / "examples").rglob("*.eval.yaml"))
    assert examples
    for path in examples:
        try:
            cases = resolve_cases(load_suite(path))
        except SuiteError:
            continue  # an example needing its own environment (a key, a CLI)
        for case in cases:
            spec = case.model_dump(mode="json", exclude={"suite_path"})
            assert canonical_json(spec) == _json_dumps(spec), (path, case.case_key)


def test_a_case_with_an_infinite_float_keeps_its_key(tmp_path: Path) -> None:
    """orjson writes NaN and infinities as null where json.dumps writes NaN and Infinity: a case
    holding one is keyed by json.dumps's bytes."""
    (tmp_path / "inf.eval.yaml").write_text(
        dedent(
            """\
            name: inf
            targets: [{name: t, provider: cli, command: "echo {PROMPT_FILE} {OUTPUT_FILE}"}]
            execution: {timeout_seconds: .inf}
            tests: [{id: only, input: hi, assertions: [{type: contains, value: hi}]}]
            """
        )
    )
    [case] = resolve_cases(load_suite(tmp_path / "inf.eval.yaml"))
    assert case.timeout_seconds == float("inf")
    spec = case.model_dump(mode="json", exclude={"suite_path"})
    run_spec = {k: v for k, v in spec.items() if k not in _GRADING_FIELDS | _SCHEDULING_FIELDS}
    expected = {"version": KEY_VERSION, "spec": run_spec, "files": {}, "identity": None}
    keys = case_keys(case, lambda _: None)
    trial = hashlib.sha256(_json_dumps({**expected, "trial": 0})).hexdigest()[:32]
    assert keys.runs == (trial,)


def test_agentv_scoring_re_grades_without_re_running(tmp_path: Path) -> None:
    folder = project(tmp_path)
    keys_of(folder)
    case = resolve_cases(load_suite(folder / "keys.eval.yaml"))[0]
    scored = case.model_copy(update={"agentv_scoring": True})
    before, after = case_keys(case), case_keys(scored)
    assert after.runs == before.runs
    assert after.grade != before.grade
    # A run option: the case itself (its content hash, what the sensors compare) is the same.
    assert scored.content_hash == case.content_hash


def test_a_path_in_a_prompt_is_never_opened_but_input_files_and_graders_are_hashed(
    tmp_path: Path,
) -> None:
    """Prompt, criteria and expected output are text: a file they name (here outside the suite,
    unreadable) is not an input, so changing its content leaves the keys as they were (the
    runner hashed it before). An input file, named as one, and the grader's script change
    them."""
    (tmp_path / "suite").mkdir()
    folder = project(tmp_path / "suite")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("one\n")
    secret.chmod(0o000)
    (folder / "notes.txt").write_text("first\n")
    named = (
        f"input: Read {secret}, then ./notes.txt\n"
        f"    criteria: Must not quote {secret}\n"
        f"    expected_output: cat {secret}\n"
        "    input_files: [notes.txt]"
    )
    before = keys_of(folder, **{"input: INPUT": named})
    secret.chmod(0o600)
    secret.write_text("two, longer\n")
    assert keys_of(folder, **{"input: INPUT": named}) == before
    (folder / "notes.txt").write_text("second\n")
    edited = keys_of(folder, **{"input: INPUT": named})
    assert edited["first"].runs != before["first"].runs
    (folder / "graders" / "check.py").write_text("print('{\"score\": 0.5}')\n")
    regraded = keys_of(folder, **{"input: INPUT": named})
    assert regraded["first"].runs == edited["first"].runs
    assert regraded["first"].grade != edited["first"].grade

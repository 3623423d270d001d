"""Every failure of a cli, cli batch, replay or LLM target is stored as a typed error (issue 37,
item 5): the stage whose work failed and the kind of failure, beside the message people read.

One suite, run by the real `evals-pipeline run`, has one target per failure; each test's stored
grade (the grades step's records) keeps its agent run's error."""

from __future__ import annotations

import json
from textwrap import dedent

import pytest

from evals_pipeline.storage.records import read_records
from evals_pipeline_tests.test_cli import cli

SUITE = """\
name: kinds
execution:
  workers: 4
  targets: [no-output, signal, batch, replay, fixtures, refused, overloaded, no-script]
targets:
  - {name: no-output, provider: cli, command: 'true {OUTPUT_FILE}'}
  - {name: signal, provider: cli, command: 'kill -9 $$'}
  - {name: batch, provider: cli, provider_batching: true, command: 'python3 batch.py {OUTPUT_FILE}'}
  - {name: replay, provider: replay, sessions_dir: sessions}
  - {name: fixtures, provider: replay, fixtures: fixtures.jsonl, source_target: x}
  - {name: refused, provider: openai, model: m, model_server: {script: refused.yaml},
     max_retries: 0}
  - {name: overloaded, provider: openai, model: m, model_server: {script: overloaded.yaml},
     max_retries: 0}
  - {name: no-script, provider: anthropic, model: m, model_server: {script: broken.yaml}}
tests:
  - {id: t, input: say hello, assertions: [{type: contains, value: hello}]}
"""

# The batch runner writes a record for another test only.
BATCH = "import json, sys\nopen(sys.argv[1], 'w').write(json.dumps({'id': 'other'}) + '\\n')\n"

# target → (stage, kind, a part of the message)
EXPECTED = {
    "no-output": ("agent", "parse", "the command did not write it"),
    "signal": ("agent", "crashed", "killed by signal 9"),
    "batch": ("agent", "parse", "batch output has no record with id 't'"),
    "replay": ("agent", "setup", "no recorded session for test 't'"),
    "fixtures": ("agent", "parse", "invalid replay fixture JSONL"),
    "refused": ("agent", "refused", "HTTP 403"),
    "overloaded": ("agent", "provider", "HTTP 503"),
    "no-script": ("agent", "setup", "broken.yaml"),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """The typed error of each target's stored grade of test `t`."""
    home = tmp_path_factory.mktemp("kinds")
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    (project / "sessions").mkdir()
    files = {
        "kinds.eval.yaml": SUITE,
        "batch.py": BATCH,
        "fixtures.jsonl": "{not json\n",
        "refused.yaml": "turns: [{http_error: {status: 403, message: not allowed}}]\n",
        "overloaded.yaml": "turns: [{http_error: {status: 503, message: overloaded}}]\n",
        "broken.yaml": "turns: [{unknown_key: 1}]\n",
    }
    for name, text in files.items():
        (project / name).write_text(dedent(text))
    done = cli("run", "kinds.eval.yaml", home=home, cwd=project)
    assert "report: " in done.stdout, done.explain()
    grades = {}
    for table in (home / "storage" / "kinds" / "grades").glob("*/records.parquet"):
        for _, text in read_records(table):
            grade = json.loads(text)
            grades[grade["agent"]] = grade
    errors = {}
    for target in EXPECTED:
        assert target in grades, f"{target}: no stored grade\n{done.explain()}"
        grade = grades[target]
        assert grade["trials"][0]["error"] == grade["error"]
        errors[target] = grade["error"]
    return errors


@pytest.mark.parametrize("target", EXPECTED)
def test_each_failure_is_stored_with_its_stage_and_kind(
    target: str, stored: dict[str, dict[str, object]]
) -> None:
    stage, kind, part = EXPECTED[target]
    error = stored[target]
    assert (error["stage"], error["kind"]) == (stage, kind), error
    assert part in str(error["message"]), error

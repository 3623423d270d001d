"""A top-level key AgentV ignores (it warns "Unknown field ... will be ignored") loads with a
warning, a near miss of a known key too, with "did you mean"."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.suites import load_suite
from evals_pipeline_tests.suites.conftest import Project, only


def test_a_block_of_yaml_anchors_is_ignored_with_a_warning(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            """\
            defaults:
              system_message: &system Answer briefly.
            tests:
              - id: a
                input: [{role: system, content: *system}, {role: user, content: hi}]
                assertions: [{type: contains, value: hi}]
            """,
        )
    )
    warning = only(loaded.warnings)
    assert (Path(warning.file).name, warning.line, warning.column) == ("s.eval.yaml", 1, 1)
    assert warning.message == "unknown field 'defaults' at the top level, ignored"
    assert loaded.suite.tests[0].id == "a"


def test_a_typo_of_a_top_level_key_is_a_warning_with_did_you_mean(project: Project) -> None:
    loaded = load_suite(
        project.write(
            "s.eval.yaml",
            "descripton: x\ntests: [{id: a, input: hi, assertions: [{type: is-json}]}]\n",
        )
    )
    warning = only(loaded.warnings)
    assert warning.message == (
        "unknown field 'descripton' at the top level, ignored (did you mean 'description'?)"
    )
    assert loaded.suite.description == ""

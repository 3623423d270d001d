"""Suite-level and grader preprocessors: scripts found at load time, merged into LLM graders."""

from __future__ import annotations

from evals_pipeline.models.assertions import LlmGraderBase
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only

TARGETS = """\
targets:
  - name: mock
    provider: mock
    response: hello
  - name: judge
    provider: anthropic
    model: claude-sonnet-4-5
"""


def test_suite_preprocessors_reach_every_top_level_llm_grader(project: Project) -> None:
    project.write(".agentv/targets.yaml", TARGETS)
    script = project.write("tools/xlsx.py", "print('x')\n")
    project.write("tools/pdf.py", "print('p')\n")
    loaded = load_suite(
        project.write(
            "evals/s.eval.yaml",
            """\
            execution: {target: mock}
            preprocessors:
              - {type: xlsx, command: [python3, tools/xlsx.py]}
            tests:
              - id: implicit
                input: hi
                criteria: Says hello.
              - id: own
                input: hi
                assertions:
                  - type: llm-grader
                    preprocessors: [{type: pdf, command: [python3, tools/pdf.py]}]
                  - {type: contains, value: hello}
            """,
        )
    )
    cases = {c.test_id: c for c in resolve_cases(loaded)}
    implicit = cases["implicit"].assertions[0]
    assert isinstance(implicit, LlmGraderBase)
    assert [p.command for p in implicit.preprocessors] == [["python3", str(script)]]
    own = cases["own"].assertions[0]
    assert isinstance(own, LlmGraderBase)
    assert [p.type for p in own.preprocessors] == ["xlsx", "pdf"]


def test_a_missing_preprocessor_script_is_an_error(project: Project) -> None:
    issue = only(
        project.issues(
            "s.eval.yaml",
            """\
            preprocessors:
              - type: xlsx
                command: [python3, tools/missing.py]
            tests: [{id: a, input: hi, assertions: [{type: contains, value: hello}]}]
            """,
        )
    )
    assert (issue.line, issue.message) == (3, "preprocessor script 'tools/missing.py' not found")

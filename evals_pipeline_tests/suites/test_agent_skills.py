"""Agent Skills `evals.json` suites: mapped as AgentV 4.42.4 maps them, validated with located
issues, and run end to end by `evals-pipeline run` (a real cli agent, a scripted judge)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from evals_pipeline.model_server import ModelScript, ModelServer
from evals_pipeline.models.assertions import LlmGraderAssertion
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.suites.conftest import Project, only

EVALS = {
    "skill_name": "csv-analyzer",
    "evals": [
        {
            "id": 1,
            "prompt": "Find the top month.",
            "expected_output": "November.",
            "files": ["evals/files/sales.csv"],
            "should_trigger": True,
            "assertions": ["Names November", "Gives its revenue"],
        },
        {"id": 2, "prompt": " ", "expected_output": "skipped"},
        {"id": "total", "prompt": "Sum the revenue.", "expected_output": "$62,000."},
    ],
}


JUDGED_MOCK = """\
targets:
  - name: default
    provider: mock
    response: November
    grader_target: judge
  - name: judge
    provider: openai
    base_url: http://127.0.0.1:9/v1
    api_key: unused
    model: scripted
"""


def write_evals(project: Project, data: object, name: str = "evals.json") -> Path:
    project.write(".agentv/targets.yaml", JUDGED_MOCK)
    return project.write(name, json.dumps(data, indent=2) + "\n")


def test_cases_become_tests_as_agentv_maps_them(project: Project) -> None:
    sales = project.write("evals/files/sales.csv", "month,revenue\n")
    loaded = load_suite(write_evals(project, EVALS))
    assert loaded.slug == "csv_analyzer"  # the skill names the suite
    first, total = loaded.suite.tests
    assert (first.id, first.input, first.criteria) == ("1", "Find the top month.", "November.")
    assert first.expected_output == "November."
    assert [(a.name, a.type, a.prompt) for a in first.assertions] == [  # type: ignore[union-attr]
        ("assertion-1", "llm-grader", "Names November"),
        ("assertion-2", "llm-grader", "Gives its revenue"),
    ]
    assert all(isinstance(a, LlmGraderAssertion) for a in first.assertions)
    assert first.metadata == {
        "skill_name": "csv-analyzer",
        "agent_skills_files": ["evals/files/sales.csv"],
        "agent_skills_base_dir": str(project.root),
    }
    assert (total.id, total.assertions, total.metadata) == (
        "total",
        [],
        {"skill_name": "csv-analyzer"},
    )
    # The case without a prompt is skipped with a warning at the case, as AgentV skips it.
    skipped = next(w for w in loaded.warnings if "no prompt" in w.message)
    assert (skipped.line, skipped.message) == (
        17,
        "evals[1] has no prompt, skipped (as AgentV skips it)",
    )
    # The files reach {FILES} and the graders, not the prompt.
    case = resolve_cases(loaded)[0]
    assert case.input_files == [str(sales)]
    assert case.prompt == "Find the top month."


def test_a_missing_file_is_a_warning_at_its_path(project: Project) -> None:
    data = {"evals": [{"id": 1, "prompt": "Go.", "files": ["nope.csv"]}]}
    loaded = load_suite(write_evals(project, data, "skill.evals.json"))
    assert loaded.slug == "skill"
    warning = next(w for w in loaded.warnings if "nope.csv" in w.message)
    assert (warning.line, warning.column) == (7, 9)
    assert resolve_cases(loaded)[0].input_files == [str(project.root / "nope.csv")]
    # A bare prompt is still judged, as AgentV judges it: the default llm-grader.
    assert [(a.type, a.name) for a in loaded.suite.tests[0].assertions] == [("llm-grader", None)]


def test_a_file_without_cases_is_refused_with_the_format_named(project: Project) -> None:
    issue = only(project.issues("evals.json", '{"skill_name": "x", "evals": []}\n'))
    assert (issue.line, issue.column) == (1, 30)
    assert "this file has an empty 'evals' array" in issue.message
    issue = only(project.issues("other.json", '{"tests": []}\n'))
    assert "no 'evals' array" in issue.message and '"evals": [{"id": 1' in issue.fix


def test_an_assertion_that_is_not_a_sentence_is_located(project: Project) -> None:
    data = {"evals": [{"id": 1, "prompt": "Go.", "assertions": [{"type": "contains"}]}]}
    write_evals(project, data)
    issue = only(project.issues("evals.json"))
    assert (issue.line, issue.message) == (
        7,
        "an Agent Skills assertion is a sentence to judge; got an object",
    )


AGENT = """\
import json, sys
from pathlib import Path
prompt_file, output_file, *files = sys.argv[1:]
names = " ".join(Path(f).name for f in files)
text = Path(prompt_file).read_text() + " FILES=" + names
Path(output_file).write_text(json.dumps({"text": text}))
"""

JUDGE = [
    {
        "when": {"contains": ["Names November", "FILES=sales.csv"]},
        "turns": [{"text": '{"score": 1.0, "assertions": [{"text": "ok", "passed": true}]}'}],
    },
    {
        "when": {"contains": "Gives its revenue"},
        "turns": [{"text": '{"score": 0.5, "assertions": [{"text": "no", "passed": false}]}'}],
    },
    {
        "when": {"contains": "$62,000."},
        "turns": [{"text": '{"score": 0.25, "assertions": []}'}],
    },
]


def test_an_evals_json_suite_validates_and_runs_end_to_end(project: Project) -> None:
    project.write("evals/files/sales.csv", "month,revenue\n")
    project.write("agent.py", AGENT)
    suite = write_evals(project, EVALS)
    script = ModelScript.model_validate({"side_requests": False, "rules": JUDGE, "turns": []})
    with ModelServer(script) as server:
        project.write(
            ".agentv/targets.yaml",
            f"""\
            targets:
              - name: default
                provider: cli
                command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}} {{FILES}}
                grader_target: judge
              - name: judge
                provider: openai
                base_url: {server.base_url}/v1
                api_key: unused
                model: scripted
            """,
        )
        env = {
            **os.environ,
            "DAGSTER_HOME": str(project.root / "home"),
            "EVALS_PIPELINE_STORAGE": str(project.root / "storage"),
        }
        (project.root / "home").mkdir()

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "evals_pipeline.cli", *args],
                cwd=project.root,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )

        validated = cli("validate", str(suite))
        assert validated.returncode == 0, validated.stdout + validated.stderr
        assert "evals[1] has no prompt, skipped" in validated.stdout + validated.stderr
        done = cli("run", str(suite), "--output", str(project.root / "out"))
    explain = done.stdout + done.stderr
    rows = {
        row["test_id"]: row
        for row in map(json.loads, (project.root / "out/results.jsonl").read_text().splitlines())
    }
    assert sorted(rows) == ["1", "total"], explain
    assert rows["1"]["target"] == "default"
    assert {s["name"]: s["score"] for s in rows["1"]["scores"]} == {
        "assertion-1": 1.0,  # the judge saw the file the agent was given
        "assertion-2": 0.5,
    }, explain
    assert rows["1"]["score"] == 0.75
    assert rows["total"]["score"] == 0.25  # the implicit llm-grader over expected_output

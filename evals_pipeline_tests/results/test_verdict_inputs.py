"""Every key of a suite and of a target either re-runs, re-grades or re-aggregates a cached
case, or is verdict-neutral for a stated reason: a model that gains a key not in these tables
fails here, so no new input can serve a stale verdict unnoticed.

The suite's keys (models/suite.py) all reach a case through ResolvedCase; each ResolvedCase
field's effect is checked on the keys it derives (results/keys.py). Targets are keyed whole.
What re-aggregation means on a real run, that no agent runs, is observed in
test_stale_verdicts.py (strategy, cost limit, thresholds, a grader edit, a new assertion, a
target's env).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, TypeAdapter

from evals_pipeline.models import suite as suite_models
from evals_pipeline.models import targets as target_models
from evals_pipeline.models.assertions.spec import AssertionSpec
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.conversation import Conversation, ConversationTurn
from evals_pipeline.models.messages import Message
from evals_pipeline.models.suite import TrialsSpec
from evals_pipeline.results import CaseKeys, case_keys
from evals_pipeline.suites import load_suite, resolve_cases

RERUN = "rerun"  # a run key changes: the agent runs again
REGRADE = "regrade"  # only the trial grade keys change: stored sessions are graded again
REAGGREGATE = "reaggregate"  # no key changes: the stored trial grades are aggregated again

CASE_EFFECTS: dict[str, str] = {
    "suite": RERUN,
    "suite_path": "neutral: where the eval file lies; its folder (base_dir) is keyed",
    "suite_name": RERUN,  # replay fixtures are keyed by it
    "case_key": RERUN,
    "test_id": RERUN,
    "agent": RERUN,
    "target": RERUN,
    "input": RERUN,
    "prompt": RERUN,
    "input_files": RERUN,
    "criteria": REGRADE,
    "expected_output": REGRADE,
    "assertions": REGRADE,
    "metadata": REGRADE,  # code graders are handed it
    "threshold": REGRADE,  # required graders' gates and each trial's verdict
    "trials": REAGGREGATE,  # count: a new trial runs (trials_count_runs_only_the_new_trials)
    "depends_on": "neutral: the order runs start in; a refused run is an error, never reused",
    "on_dependency_failure": "neutral: whether a run starts; a refused run is never reused",
    "budget_usd": "neutral: whether a run starts; one not started is not stored",
    "fail_on_error": "neutral: whether a run starts; one not started is not stored",
    "cache": "neutral: whether stored results are looked up at all",
    "run_budget_usd": "neutral: whether a run starts; one not started is not stored",
    "keep_workspaces": "neutral: whether a workspace is deleted after grading",
    "agentv_scoring": REGRADE,
    "conversation_id": RERUN,
    "timeout_seconds": RERUN,
    "workspace": RERUN,  # workspace.cleanup alone is neutral (when a workspace is deleted)
    "fallbacks": RERUN,
    "target_hooks": RERUN,
    "base_dir": RERUN,
    "grader_target": REGRADE,
    "llm_targets": REGRADE,
    "conversation": RERUN,  # its turns are sent one by one: what the agent sees
    "cannot_run": "neutral: a fact of the machine; its run is an error, never reused",
}

SUITE = """\
name: inputs
workspace:
  template: ./template
execution: {trials: {count: 2, strategy: pass_at_k}}
targets:
  - name: a
    provider: cli
    command: python3 {EVAL_DIR}/agent.py --output {OUTPUT_FILE}
tests:
  - id: only
    input: Say hi.
    criteria: greets
    assertions: [{type: contains, value: hi}]
"""


@pytest.fixture
def case(tmp_path: Path) -> ResolvedCase:
    (tmp_path / ".git").mkdir()
    (tmp_path / "template").mkdir()
    (tmp_path / "agent.py").write_text("print('hi')\n")
    (tmp_path / "inputs.eval.yaml").write_text(SUITE)
    (resolved,) = resolve_cases(load_suite(tmp_path / "inputs.eval.yaml"))
    return resolved


def _assertion(value: dict[str, Any]) -> Any:
    return TypeAdapter(AssertionSpec).validate_python(value)


def _message(text: str) -> Message:
    return Message(role="user", content=text)


# A changed value for each ResolvedCase field.
CHANGES: dict[str, Callable[[ResolvedCase], Any]] = {
    "suite": lambda c: "other",
    "suite_path": lambda c: "/elsewhere/inputs.eval.yaml",
    "suite_name": lambda c: "other",
    "case_key": lambda c: "other",
    "test_id": lambda c: "other",
    "agent": lambda c: "b",
    "target": lambda c: c.target.model_copy(update={"env": {"MODE": "fast"}}),
    "input": lambda c: [_message("Say bye.")],
    "prompt": lambda c: "Say bye.",
    "input_files": lambda c: ["/tmp/notes.md"],
    "criteria": lambda c: "says bye",
    "expected_output": lambda c: [Message(role="assistant", content="hi")],
    "assertions": lambda c: [*c.assertions, _assertion({"type": "regex", "value": "^h"})],
    "metadata": lambda c: {"team": "x"},
    "threshold": lambda c: 0.5,
    "trials": lambda c: TrialsSpec(count=2, strategy="mean", cost_limit_usd=1.0),
    "depends_on": lambda c: ["other"],
    "on_dependency_failure": lambda c: "run",
    "budget_usd": lambda c: 5.0,
    "fail_on_error": lambda c: True,
    "cache": lambda c: False,
    "run_budget_usd": lambda c: 5.0,
    "keep_workspaces": lambda c: True,
    "agentv_scoring": lambda c: True,
    "conversation_id": lambda c: "thread-1",
    "timeout_seconds": lambda c: 5.0,
    "workspace": lambda c: c.workspace.model_copy(update={"required_commands": ("git",)}),
    "fallbacks": lambda c: [c.target.model_copy(update={"name": "spare"})],
    "target_hooks": lambda c: None if c.target_hooks else c.workspace.hooks,
    "base_dir": lambda c: "/elsewhere",
    "grader_target": lambda c: "judge",
    "llm_targets": lambda c: {
        "judge": TypeAdapter(target_models.LlmTargetSpec).validate_python(
            {"name": "judge", "provider": "openai", "model": "m"}
        )
    },
    "conversation": lambda c: Conversation(turns=[ConversationTurn(input="hi")]),
    "cannot_run": lambda c: "python3 not found",
}


def observed(before: CaseKeys, after: CaseKeys) -> str:
    if before.runs != after.runs:
        return RERUN
    if before.trial_grades != after.trial_grades:
        return REGRADE
    return REAGGREGATE


def _keys(case: ResolvedCase, identity: str = "agent 1.0") -> CaseKeys:
    return case_keys(case, lambda _: identity)


def test_every_case_field_has_a_declared_effect() -> None:
    fields = set(ResolvedCase.model_fields)
    assert fields - CASE_EFFECTS.keys() == set(), "a new case field: declare its effect"
    assert CASE_EFFECTS.keys() - fields == set()
    assert CHANGES.keys() == fields


@pytest.mark.parametrize("field", sorted(CASE_EFFECTS))
def test_a_changed_field_has_its_declared_effect_on_the_keys(
    case: ResolvedCase, field: str
) -> None:
    changed = case.model_copy(update={field: CHANGES[field](case)})
    assert getattr(changed, field) != getattr(case, field)
    declared = CASE_EFFECTS[field]
    expected = REAGGREGATE if declared.startswith("neutral") else declared
    assert observed(_keys(case), _keys(changed)) == expected


def test_trials_count_runs_only_the_new_trials(case: ResolvedCase) -> None:
    more = case.model_copy(update={"trials": TrialsSpec(count=3)})
    before, after = _keys(case), _keys(more)
    assert after.runs[:2] == before.runs and after.trial_grades[:2] == before.trial_grades
    assert len(after.runs) == 3


def test_the_agent_clis_version_re_runs(case: ResolvedCase) -> None:
    assert observed(_keys(case, "agent 1.0"), _keys(case, "agent 1.1")) == RERUN


def test_a_file_a_test_names_re_runs_and_a_grader_file_re_grades(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "template").mkdir()
    (tmp_path / "agent.py").write_text("print('hi')\n")
    (tmp_path / "check.py").write_text("print(1)\n")
    text = SUITE.replace(
        "[{type: contains, value: hi}]", "[{type: code-grader, command: python3 check.py}]"
    )
    (tmp_path / "inputs.eval.yaml").write_text(text)

    def keys() -> CaseKeys:
        (resolved,) = resolve_cases(load_suite(tmp_path / "inputs.eval.yaml"))
        return _keys(resolved)

    first = keys()
    (tmp_path / "check.py").write_text("print(0)\n")
    graded = keys()
    assert observed(first, graded) == REGRADE
    (tmp_path / "template" / "README.md").write_text("new\n")
    templated = keys()
    assert observed(graded, templated) == RERUN
    (tmp_path / "agent.py").write_text("print('bye')\n")  # named in the target's command
    assert observed(templated, keys()) == RERUN


# Every key of the suite file's models, and where it goes. A ResolvedCase field inherits that
# field's effect; other keys are neutral to a verdict for the reason given.
VIA = "case."
SUITE_KEYS: dict[str, dict[str, str]] = {
    "EvalSuite": {
        "schema_": "neutral: the editor's schema hint",
        "name": VIA + "suite_name",
        "description": "neutral: documentation",
        "category": "neutral: documentation",
        "version": "neutral: documentation",
        "author": "neutral: documentation",
        "tags": "neutral: documentation",
        "license": "neutral: documentation",
        "requires": "neutral: checked before a run; a refusal runs nothing",
        "metadata": "neutral: suite documentation; a test's metadata is keyed",
        "governance": "neutral: documentation",
        "tests": VIA + "test_id",
        "execution": "see ExecutionSpec",
        "assertions": VIA + "assertions",
        "input": VIA + "input",
        "input_files": VIA + "input_files",
        "workspace": VIA + "workspace",
        "preprocessors": VIA + "assertions",  # resolved into each LLM grader's preprocessors
        "targets": VIA + "target",
        "judging": "neutral: judges' votes are keyed by votes_key (grade key, panel, judges)",
        "public_env": "neutral: which values are scrubbed from what is stored and printed",
        "allow_outside_files": "neutral: whether loading accepts a path; the files are keyed",
    },
    "ExecutionSpec": {
        "target": VIA + "agent",
        "targets": VIA + "agent",
        "workers": "neutral: how many run at once",
        "timeout_seconds": VIA + "timeout_seconds",
        "threshold": "neutral: the run's exit code, computed on every run (AgentV 4.42.4)",
        "skip_defaults": VIA + "assertions",
        "trials": VIA + "trials",
        "cache": VIA + "cache",
        "cache_path": "neutral: AgentV's own cache folder, unused here",
        "budget_usd": VIA + "budget_usd",
        "fail_on_error": VIA + "fail_on_error",
    },
    "TestExecutionSpec": {
        "target": VIA + "agent",
        "targets": VIA + "agent",
        "threshold": VIA + "threshold",
        "skip_defaults": VIA + "assertions",
        "workers": "neutral: how many run at once",
        "cache": VIA + "cache",
        "trials": VIA + "trials",
        "budget_usd": VIA + "budget_usd",
        "fail_on_error": VIA + "fail_on_error",
        "assertions": VIA + "assertions",
    },
    "TrialsSpec": {
        "count": VIA + "trials",
        "strategy": VIA + "trials",
        "cost_limit_usd": VIA + "trials",
    },
    "TestSpec": {
        "id": VIA + "test_id",
        "criteria": VIA + "criteria",
        "input": VIA + "input",
        "input_files": VIA + "input_files",
        "expected_output": VIA + "expected_output",
        "assertions": VIA + "assertions",
        "execution": "see TestExecutionSpec",
        "workspace": VIA + "workspace",
        "metadata": VIA + "metadata",
        "vars": VIA + "input",  # rendered into the input and prompt
        "conversation_id": VIA + "conversation_id",
        "suite": "neutral: a grouping label in reports",
        "depends_on": VIA + "depends_on",
        "on_dependency_failure": VIA + "on_dependency_failure",
        "mode": VIA + "conversation",
        "turns": VIA + "conversation",
        "aggregation": VIA + "conversation",
        "on_turn_failure": VIA + "conversation",
        "window_size": VIA + "conversation",
    },
    "WorkspaceSpec": {
        "template": VIA + "workspace",
        "repos": VIA + "workspace",
        "hooks": VIA + "workspace",
        "isolation": VIA + "workspace",
        "mode": VIA + "workspace",
        "path": VIA + "workspace",
        "docker": VIA + "workspace",
        "env": VIA + "workspace",
        "cleanup": "neutral: when a workspace is deleted (left out of the run key)",
    },
}


def _fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def test_every_suite_key_is_declared_and_points_at_a_case_field() -> None:
    for name, table in SUITE_KEYS.items():
        model = getattr(suite_models, name)
        assert _fields(model) - table.keys() == set(), f"{name}: declare the new key's effect"
        assert table.keys() - _fields(model) == set(), f"{name}: a key it no longer has"
        for key, effect in table.items():
            if effect.startswith(VIA):
                assert effect.removeprefix(VIA) in CASE_EFFECTS, f"{name}.{key}"
            else:
                assert effect.startswith(("neutral: ", "see ")), f"{name}.{key}: {effect}"


def _target_classes() -> list[type[BaseModel]]:
    (union,) = get_args(target_models.TargetSpec)[1:]
    return list(union.members())


def test_every_target_key_is_in_the_run_key() -> None:
    """A target is keyed whole (ResolvedCase.target, fallbacks, llm_targets): no field of a
    target model may be left out of its dump, or a change to it would serve a stale run."""
    classes = _target_classes()
    assert len(classes) >= 8
    for model in classes:
        excluded = {n for n, f in model.model_fields.items() if f.exclude}
        assert excluded == set(), f"{model.__name__}: {excluded} left out of the key"

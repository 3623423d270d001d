"""End to end: the three real agent CLIs run examples/coding-agents through the Dagster graph
against the scripted model server, and the report says what the scripts did."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from evals_pipeline.defs.suite_run import SuiteRun, run_suite
from evals_pipeline.models.run import AgentRun
from evals_pipeline.storage.events import read_events
from evals_pipeline.storage.records import read_records
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.agent_clis import require_agent
from evals_pipeline_tests.defs.conftest import REPO

SUITE = REPO / "examples" / "coding-agents" / "coding-agents.eval.yaml"
AGENTS = {"claude": "claude-code", "codex": "codex", "pi": "pi-agent"}


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteRun, Path]:
    for kind in AGENTS.values():
        require_agent(kind)
    storage = tmp_path_factory.mktemp("coding-agents") / "storage"
    loaded = load_suite(SUITE)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(loaded)))
    with dg.instance_for_test() as instance:
        run = run_suite(
            instance, loaded, str(storage), agents=list(AGENTS), case_keys=keys, echo=lambda _: None
        )
    return run, storage


def agent_runs(storage: Path) -> list[AgentRun]:
    files = sorted((storage / "coding_agents" / "agent_runs").glob("*/records.parquet"))
    context = StorageRoot(str(storage)).record_context()  # its paths, against the root
    return [AgentRun.model_validate_json(r, context=context) for _, r in read_records(files[-1])]


def served_tokens(runs: list[AgentRun]) -> tuple[int, int]:
    """Input and output tokens the scripted server reported over `runs`."""
    total_in = total_out = 0
    for run in runs:
        for line in Path(run.side_files["model_server_log"]).read_text().splitlines():
            usage = json.loads(line).get("usage")
            if usage:
                total_in += usage["input_tokens"]
                total_out += usage["output_tokens"]
    return total_in, total_out


def test_every_agent_passes_the_good_scripts_and_fails_the_wrong_one(
    outcome: tuple[SuiteRun, Path],
) -> None:
    report = outcome[0].report
    assert [(a.agent, a.passed, a.failed, a.errors) for a in report.agents] == [
        (agent, 2, 1, 0) for agent in AGENTS
    ]
    assert {(f.agent, f.test_id) for f in report.failures} == {(a, "mean") for a in AGENTS}


def test_the_report_counts_what_the_scripts_did(outcome: tuple[SuiteRun, Path]) -> None:
    report, storage = outcome[0].report, outcome[1]
    runs = agent_runs(storage)
    for summary in report.agents:
        # Three tests, each: a Write, a Bash, and three model calls.
        assert summary.tool_calls == {"Write": 3, "Bash": 3}
        assert summary.llm_calls == 9
        # Tokens are the server's own counts; cost is those tokens at the configured prices.
        served_in, served_out = served_tokens([r for r in runs if r.agent == summary.agent])
        assert (summary.input_tokens, summary.output_tokens) == (served_in, served_out)
        price_in, price_out = (1.25, 10) if summary.agent == "codex" else (3, 15)
        expected = (served_in * price_in + served_out * price_out) / 1_000_000
        assert summary.cost_usd == pytest.approx(expected, rel=1e-6)
        # Every test edits then runs its tests; only the two good scripts' tests pass.
        assert summary.milestone_trials == {
            "first_file_edit": 3,
            "first_test_run": 3,
            "first_test_pass": 2,
            "last_edit": 3,
            "final_answer": 3,
        }
        assert summary.milestone_ms["first_file_edit"] <= summary.milestone_ms["final_answer"]
    markdown = (outcome[0].report_folder / "summary.md").read_text()
    assert "| claude | 9 | Write 3, Bash 3 |" in markdown


def test_the_agents_wrote_the_files_and_their_events_agree(
    outcome: tuple[SuiteRun, Path],
) -> None:
    runs = agent_runs(outcome[1])
    assert len(runs) == 9
    for run in runs:
        module = {"fizzbuzz": "fizzbuzz.py", "slugify": "slug.py", "mean": "stats.py"}
        assert run.error is None, run.error
        assert run.file_changes and f"+++ b/{module[run.case_key]}" in run.file_changes
    sequences = {}
    for events_file in (outcome[1] / "coding_agents" / "sessions").glob(
        "*/*/*/trial-0/events.parquet"
    ):
        agent, case = events_file.parts[-4], events_file.parts[-3]
        events = read_events(events_file)
        sequences[(agent, case)] = [e.tool for e in events if e.kind == "tool_call"]
    assert len(sequences) == 9
    assert set(map(tuple, sequences.values())) == {("Write", "Bash")}


def test_failed_cases_keep_their_workspace_and_passed_ones_do_not(
    outcome: tuple[SuiteRun, Path],
) -> None:
    for run in agent_runs(outcome[1]):
        workspace = Path(run.workspace_path or "")
        assert workspace.exists() == (run.case_key == "mean"), workspace
    kept = [r for r in agent_runs(outcome[1]) if r.case_key == "mean"]
    assert all((Path(r.workspace_path or "") / "stats.py").is_file() for r in kept)


def test_cases_table_has_the_milestones(outcome: tuple[SuiteRun, Path]) -> None:
    cases = pd.read_parquet(outcome[0].report_folder / "cases.parquet")
    assert set(cases["llm_calls"]) == {3}
    passed = cases[cases["verdict"] == "pass"]
    assert passed["first_test_pass_ms"].notna().all()
    assert cases[cases["test_id"] == "mean"]["first_test_pass_ms"].isna().all()
    assert {json.dumps({"Write": 1, "Bash": 1})} == set(cases["tool_calls_json"])


def test_the_scripted_panel_judges_every_trial_and_ties_the_agents(
    outcome: tuple[SuiteRun, Path],
) -> None:
    report = outcome[0].report
    rates = {(r.agent, r.dimension): r for r in report.rates}
    for agent in AGENTS:
        # Two of three tasks are right; `mean` fails correctness and verification on every
        # judge (floor division; the failing test run), grounded in the diff and transcript.
        assert rates[(agent, "correctness")].observed_rate == pytest.approx(2 / 3)
        assert rates[(agent, "verification")].observed_rate == pytest.approx(2 / 3)
        assert rates[(agent, "codeQuality")].observed_rate == 1.0
        assert rates[(agent, "correctness")].correction_valid is False  # no labels here
    health = {h.judge: h for h in report.judge_health}
    assert set(health) == {"judge-anthropic", "judge-openai", "judge-responses"}
    # every vote was grounded: verification PASS quotes a test run made after the last edit
    assert all(h.invalid == 0 and h.votes == 45 for h in health.values())
    assert report.position_bias_detected is False
    breakdown = {b.agent: b for b in report.failure_breakdown}
    for agent in AGENTS:
        wrong = breakdown[agent].breakdown.by_category["incorrect_implementation"]
        assert (wrong.count, wrong.confirmed, wrong.disputed) == (1, 1, 0)  # the panel agrees
    # 45 dimension votes and 3 category checks per judge, 54 pairwise readings
    assert report.judge_usage is not None and report.judge_usage.total.calls == 3 * 48 + 54

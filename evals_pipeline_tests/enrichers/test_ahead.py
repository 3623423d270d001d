"""Sessions made ahead while the agents run: the sessions step takes them as made, equal to the
ones it makes itself, and makes again any it cannot take; a whole run through Dagster takes
them all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg

from evals_pipeline.defs.definitions import build_definitions
from evals_pipeline.defs.partitions import partition_key
from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.enrichers.ahead import SessionsAhead
from evals_pipeline.layers import enrich_runs, run_agents, sessions_ahead
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.storage.messages import read_messages
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.cli_agent_suite import write_cli_agent_suite

AGENT = """\
import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
steps = [{"role": "assistant", "content": f"step {i}",
          "tool_calls": [{"tool": "Bash", "input": {"command": f"ls {i}"}, "output": "ok"}]}
         for i in range(50)]
json.dump({"output": steps + [{"role": "assistant", "content": "done"}]}, open(out, "w"))
"""


def _suite(root: Path, tests: int = 4) -> Path:
    return write_cli_agent_suite(root, AGENT, tests)


def _comparable(session: Session) -> dict[str, Any]:
    fields = session.model_dump(exclude={"messages_path"})
    fields["messages"] = read_messages(session.messages_path)
    return fields


def test_the_step_takes_the_sessions_made_ahead_as_it_would_make_them(
    tmp_path: Path, step_enrichments: list[AgentRun]
) -> None:
    cases = resolve_cases(load_suite(_suite(tmp_path / "suite")))
    ahead = SessionsAhead()
    made_in = tmp_path / "sessions"
    runs = run_agents(cases, tmp_path / "runs", workers=2, finished=sessions_ahead(ahead, made_in))
    taken = enrich_runs(runs, made_in, ahead=ahead)
    ahead.close()
    assert step_enrichments == []
    assert all(Path(s.messages_path).is_relative_to(made_in) for s in taken)
    made_here = enrich_runs(runs, tmp_path / "again")
    assert len(step_enrichments) == len(runs) == 4
    assert [_comparable(s) for s in taken] == [_comparable(s) for s in made_here]
    assert len(_comparable(taken[0])["messages"]) == 51  # 50 steps and the answer


def test_a_run_record_other_than_the_one_made_ahead_is_enriched_again(
    tmp_path: Path, step_enrichments: list[AgentRun]
) -> None:
    [case] = resolve_cases(load_suite(_suite(tmp_path / "suite", tests=1)))
    ahead = SessionsAhead()
    [run] = run_agents([case], tmp_path / "runs", workers=1)
    ahead.submit(run, tmp_path / "sessions" / "a" / "t0" / "trial-0")
    changed = run.model_copy(update={"stderr": "a note"})
    [session] = enrich_runs([changed], tmp_path / "sessions", ahead=ahead)
    ahead.close()
    assert step_enrichments == [changed]
    assert session.stderr == "a note"


def test_runs_the_step_does_not_enrich_are_not_made_ahead(tmp_path: Path) -> None:
    [case] = resolve_cases(load_suite(_suite(tmp_path / "suite", tests=1)))
    [run] = run_agents([case], tmp_path / "runs", workers=1)
    ahead = SessionsAhead()
    not_run = run.model_copy(update={"not_run": "not run: budget spent"})
    ahead.submit(not_run, tmp_path / "sessions")
    assert ahead.take(not_run) is None
    ahead.close()
    assert not (tmp_path / "sessions").exists()


def test_a_dagster_run_of_the_suite_takes_every_session_made_ahead(
    tmp_path: Path, step_enrichments: list[AgentRun]
) -> None:
    suite = load_suite(_suite(tmp_path / "suite"))
    with dg.instance_for_test() as instance:
        outcome = run_suite(
            instance,
            suite,
            str(tmp_path / "storage"),
            agents=["a"],
            case_keys=[f"t{i}" for i in range(4)],
            echo=lambda _: None,
        )
        [summary] = outcome.report.agents
        assert (summary.cases, summary.passed) == (4, 4)
        assert step_enrichments == []
        # A run of the agents alone (the UI can launch one) makes no session ahead.
        defs = build_definitions([suite], str(tmp_path / "storage"))
        alone = dg.materialize(
            [defs.resolve_assets_def(dg.AssetKey(["ahead", n])) for n in ("cases", "agent_runs")],
            partition_key=str(partition_key("t0", "a")),
            instance=instance,
            run_config={"ops": {"ahead__cases": {"config": {"cache": False}}}},  # run again
        )
    assert alone.success
    assert not (tmp_path / "storage" / "ahead" / "sessions" / alone.run_id).exists()

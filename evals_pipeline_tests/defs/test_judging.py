"""The judge layer through the real Dagster graph: three scripted judges over real HTTP (one per
SDK API), one of them position-biased and fabricating its evidence."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
import yaml

from evals_pipeline.defs.assets import build_suite_assets
from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.models.judging import CaseJudgment
from evals_pipeline.statistics import corrected_rate
from evals_pipeline.suites import load_suite

DIMENSIONS = ["correctness", "completeness", "codeQuality", "minimalDiff", "verification"]
GOOD, BAD = "The answer is 42.", "The answer is 41."


def _verdict(verdict: str, quote: str, claim: str) -> dict[str, str]:
    reply = {"evidence": [{"quote": quote, "claim": claim}], "verdict": verdict}
    return {"text": json.dumps({**reply, "confidence": 0.9, "critique": claim})}


def _pairwise(slot: str) -> dict[str, str]:
    reply = {
        "evidence": [{"quote": "What is 6 times 7?", "claim": "the task asks for 42"}],
        "overall": slot,
        "per_dimension": dict.fromkeys(DIMENSIONS, slot),
        "confidence": 0.8,
    }
    return {"text": json.dumps(reply)}


# A fair judge: grounded quotes, prefers the right answer whichever slot it is in.
CONSISTENT = {
    "rules": [
        {
            "when": {"contains": "Rules classified the primary reason"},
            "turns": [_verdict("PASS", BAD, "the answer is wrong, and the run was fine")],
        },
        {
            "when": {
                "contains": "You compare two coding agents",
                "regex": r"FIRST answer\n## Final answer\nThe answer is 42",
            },
            "turns": [_pairwise("FIRST")],
        },
        {"when": {"contains": "You compare two coding agents"}, "turns": [_pairwise("SECOND")]},
        {
            "when": {"contains": "coding agent's work: verification."},
            "turns": [_verdict("FAIL", "(no file changes)", "nothing was run or verified")],
        },
        {
            "when": {"contains": BAD},
            "turns": [_verdict("FAIL", BAD, "6 times 7 is not 41")],
        },
    ],
    "turns": [_verdict("PASS", GOOD, "6 times 7 is 42")],
}

# A biased judge: always the first slot, and quotes that are nowhere in its input.
BIASED = {
    "rules": [
        {"when": {"contains": "You compare two coding agents"}, "turns": [_pairwise("FIRST")]}
    ],
    "turns": [_verdict("FAIL", "the agent deleted every test in the repository", "made up")],
}


def _suite(tmp_path: Path, labels: list[dict[str, str]] | None = None) -> Path:
    (tmp_path / "fair.yaml").write_text(yaml.safe_dump(CONSISTENT))
    (tmp_path / "biased.yaml").write_text(yaml.safe_dump(BIASED))
    judging: dict[str, object] = {
        "panel": ["fair-claude", "fair-gpt", "biased-nano"],
        "quorum": 2,
        "confirm_failures": True,
    }
    if labels is not None:
        (tmp_path / "labels.yaml").write_text(yaml.safe_dump(labels))
        judging["calibration"] = "labels.yaml"
    suite = {
        "name": "judged",
        "execution": {"targets": ["right", "wrong"], "workers": 2},
        "targets": [
            {"name": "right", "provider": "mock", "response": GOOD},
            {"name": "wrong", "provider": "mock", "response": BAD},
            {
                "name": "fair-claude",
                "provider": "anthropic",
                "model": "claude-haiku-4-5-20251001",
                "model_server": {"script": "fair.yaml"},
                "pricing": {"input": 1, "output": 5},
            },
            {
                "name": "fair-gpt",
                "provider": "openai",
                "model": "gpt-5-mini-2025-08-07",
                "model_server": {"script": "fair.yaml"},
            },
            {
                "name": "biased-nano",
                "provider": "openai",
                "api_format": "responses",
                "model": "gpt-5-nano-2025-08-07",
                "model_server": {"script": "biased.yaml"},
            },
        ],
        "judging": judging,
        "tests": [
            {
                "id": f"times-{i}",
                "input": "What is 6 times 7?",
                "assertions": [{"type": "contains", "value": "42"}],
            }
            for i in range(3)
        ],
    }
    path = tmp_path / "judged.eval.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _run(instance: dg.DagsterInstance, path: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_suite(
        instance,
        load_suite(path),
        str(tmp_path / "storage"),
        agents=["right", "wrong"],
        case_keys=["times-0", "times-1", "times-2"],
        echo=lambda _: None,
    )


def test_biased_and_fabricating_judge_is_flagged_and_outvoted(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    outcome = _run(instance, _suite(tmp_path), tmp_path)
    report = json.loads((outcome.report_folder / "report.json").read_text())

    # Fabricated evidence: the biased judge's votes abstain, the two fair ones decide.
    event = instance.get_latest_materialization_event(dg.AssetKey(["judged", "judgments"]))
    assert event is not None
    judgments = _records(outcome.report_folder.parents[1] / "judgments")
    right = next(j for j in judgments if j.agent == "right")
    correctness = next(d for d in right.trials[0].dimensions if d.dimension == "correctness")
    by_judge = {v.judge_model: v for v in correctness.votes}
    assert by_judge["gpt-5-nano-2025-08-07"].valid is False
    assert by_judge["gpt-5-nano-2025-08-07"].retried is True
    assert correctness.n_valid == 2 and correctness.panel_verdict == "PASS"
    # heuristic 1.0 (the contains grader passed) blended with the panel's 1.0
    assert correctness.blended_score == pytest.approx(1.0) and correctness.passed is True
    wrong = next(j for j in judgments if j.agent == "wrong")
    wrong_correctness = next(d for d in wrong.trials[0].dimensions if d.dimension == "correctness")
    assert wrong_correctness.panel_verdict == "FAIL" and wrong_correctness.passed is False
    failure = wrong.trials[0].failure
    assert failure is not None and failure.check is not None
    # The fair judges confirm the failure's category; the fabricating one abstains.
    assert failure.check.confirmed is True and failure.check.n_valid == 2
    # A verification PASS needs a test run after the last edit; with none, FAIL.
    verification = next(d for d in right.trials[0].dimensions if d.dimension == "verification")
    assert verification.panel_verdict == "FAIL"

    # Position swap: the fair judges agree in both orders, the biased one always says FIRST:
    # flagged, and its vote is a tie, never a win.
    pairs = [p for c in _pairwise_records(outcome.report_folder) for p in c["pairs"]]
    assert len(pairs) == 3
    for pair in pairs:
        assert pair["winner"] == "right"
        assert pair["bias_detected"] is True
        readings = {r["judge"]: r for r in pair["overall"]["readings"]}
        assert readings["biased-nano"]["position_following"] is True
        assert readings["biased-nano"]["vote"] == "TIE"
        assert readings["fair-claude"]["consistent"] is True

    health = {j["judge"]: j for j in report["judge_health"]}
    assert health["biased-nano"]["bias_detected"] is True
    assert health["biased-nano"]["position"]["position_consistency"] == 0.0
    assert health["fair-claude"]["bias_detected"] is False
    assert health["biased-nano"]["grounding_failure_rate"] == pytest.approx(1.0)
    assert report["position_bias_detected"] is True

    # The judges' cost is kept apart from the agents' (mock agents report none: unknown).
    assert all(a["cost_usd"] is None for a in report["agents"])
    assert report["judge_usage"]["total"]["calls"] > 0

    summary = (outcome.report_folder / "summary.md").read_text()
    assert "## Judged dimensions" in summary and "## Judge health" in summary
    wrong_failures = next(f for f in report["failure_breakdown"] if f["agent"] == "wrong")
    category = wrong_failures["breakdown"]["by_category"][failure.primary]
    assert (category["count"], category["confirmed"], category["disputed"]) == (3, 3, 0)
    assert f"{failure.primary} | capability | 3 | 100.0% | 3/3 |" in summary


def test_each_provider_waits_in_its_own_pool(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    # Another run holds the only slot of the Anthropic pool: the OpenAI judges vote meanwhile,
    # and the Anthropic judge votes once the slot is free.
    pools = instance.event_log_storage
    pools.set_concurrency_slots("evals_llm_anthropic", 1)
    pools.claim_concurrency_slot("evals_llm_anthropic", "other-run", "other-step")
    watcher = threading.Thread(target=_free_after_openai_votes, args=(instance,))
    watcher.start()
    outcome = _run(instance, _suite(tmp_path), tmp_path)
    watcher.join()

    events = [
        (e.step_key, e.event_type_value, e.message)
        for e in (r.dagster_event for r in instance.all_logs(outcome.run_ids[0]))
        if e is not None
    ]
    blocked = ("judged__judgments.judged__anthropic_votes", "ENGINE_EVENT")
    assert (*blocked, "Step blocked by limit for pool evals_llm_anthropic") in events
    openai_done = _index(events, "judged__judgments.judged__openai_votes", "STEP_SUCCESS")
    anthropic_start = _index(events, "judged__judgments.judged__anthropic_votes", "STEP_START")
    assert openai_done < anthropic_start
    # Nothing is lost to the wait: every judge voted on every dimension.
    judgments = _records(outcome.report_folder.parents[1] / "judgments")
    for judged in judgments:
        for dimension in judged.trials[0].dimensions:
            assert len(dimension.votes) == 3, (judged.agent, dimension.dimension)
    assert pools.get_concurrency_info("evals_llm_anthropic").claimed_slots == []


def test_judge_steps_take_the_pool_of_their_provider(tmp_path: Path) -> None:
    built = build_suite_assets(load_suite(_suite(tmp_path)))
    assets = {key.path[-1]: a for a in built for key in a.keys}
    pools = {
        name: {op.name: op.pool for op in assets[name].node_def.iterate_op_defs()}
        for name in ("judgments", "pairwise_verdicts")
    }
    assert pools == {
        "judgments": {
            "judged__anthropic_votes": "evals_llm_anthropic",
            "judged__openai_votes": "evals_llm_openai",
            "judged__judge_trials": None,
        },
        "pairwise_verdicts": {
            "judged__anthropic_readings": "evals_llm_anthropic",
            "judged__openai_readings": "evals_llm_openai",
            "judged__compare_agents": None,
        },
    }
    assert assets["agent_runs"].op.pool == "evals_agents_mock"  # its agents: one provider
    # A case's session and grade are made in the step that ran its agent.
    assert assets["sessions"] is assets["grades"] is assets["agent_runs"]


def _free_after_openai_votes(instance: dg.DagsterInstance, timeout_s: float = 120) -> None:
    """Release the slot held for `other-run` once the OpenAI judges' step has finished."""
    deadline = time.monotonic() + timeout_s
    step = "judged__judgments.judged__openai_votes"
    while time.monotonic() < deadline:
        done = [
            entry.step_key
            for run in instance.get_runs()
            for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS)
        ]
        if step in done:
            break
        time.sleep(0.2)
    instance.event_log_storage.free_concurrency_slot_for_step("other-run", "other-step")


def _index(events: list[tuple[str | None, str, str | None]], step: str, kind: str) -> int:
    return next(i for i, (key, event, _) in enumerate(events) if key == step and event == kind)


def test_calibration_labels_give_corrected_rates(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    # Human labels that agree with the panel on right and disagree once on wrong.
    labels = [
        {"test_id": f"times-{i}", "agent": agent, "dimension": "correctness", "human_verdict": v}
        for i in range(3)
        for agent, v in (("right", "PASS"), ("wrong", "FAIL" if i else "PASS"))
    ]
    outcome = _run(instance, _suite(tmp_path, labels), tmp_path)
    report = json.loads((outcome.report_folder / "report.json").read_text())
    rates = {(r["agent"], r["dimension"]): r for r in report["rates"]}
    right = rates[("right", "correctness")]
    # judge PASS on right 3/3; labels: 3 human PASS judged PASS, 1 human PASS judged FAIL
    # (wrong, times-0), 2 human FAIL judged FAIL → tp 3/m1 4, tn 2/m0 2.
    expected = corrected_rate(3, 3, 3, 4, 2, 2, dimension="correctness")
    for field in ("observed_rate", "corrected_rate", "tpr", "tnr", "ci95_low", "ci95_high", "n"):
        assert right[field] == pytest.approx(getattr(expected, field)), field
    assert right["correction_valid"] is True
    assert rates[("right", "verification")]["correction_valid"] is False  # no labels for it
    summary = (outcome.report_folder / "summary.md").read_text()
    assert (
        f"{expected.corrected_rate:.1%}" in summary or f"{expected.corrected_rate:.3f}" in summary
    )


def _records(folder: Path) -> list[CaseJudgment]:
    """Every CaseJudgment stored under the judgments asset's folder."""
    records = []
    for path in folder.rglob("records.parquet"):
        for row in pq.read_table(path).to_pylist():
            records.append(CaseJudgment.model_validate_json(row["record_json"]))
    return records


def _pairwise_records(report_folder: Path) -> list[dict[str, object]]:
    folder = report_folder.parents[1] / "pairwise_verdicts"
    rows = [
        row for path in folder.rglob("records.parquet") for row in pq.read_table(path).to_pylist()
    ]
    return [json.loads(row["record_json"]) for row in rows]


def test_a_second_run_reuses_the_panels_votes_and_judges_the_same(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    path = _suite(tmp_path)
    first = _run(instance, path, tmp_path)
    second = _run(instance, path, tmp_path)

    folders = {
        run: next(
            p.parent
            for p in (tmp_path / "storage" / "judged" / "judgments").glob("*/records.parquet")
            if p.parent.name in outcome.run_ids
        )
        for run, outcome in (("first", first), ("second", second))
    }
    asked = {
        run: sum(len(log.read_text().splitlines()) for log in folder.glob("*.model_server.jsonl"))
        for run, folder in folders.items()
    }
    # The first run asked every judge; the second asked none, its votes came from the store.
    assert asked["first"] > 0 and asked["second"] == 0, asked
    before, after = (
        sorted(_records(folders[run]), key=lambda j: (j.case_key, j.agent))
        for run in ("first", "second")
    )
    assert [j.model_dump() for j in after] == [j.model_dump() for j in before]

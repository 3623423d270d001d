"""The regression check on eval_report, through real Dagster: run a suite, change the agent,
run it again; the check fails on a significant drop or a required case regressing."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from evals_pipeline.defs.automation import AUTOMATION_SENSOR
from evals_pipeline.defs.history import REGRESSION_CHECK
from evals_pipeline.defs.suite_run import SuiteRun, run_suite
from evals_pipeline.suites import load_suite, resolve_cases

# Six tests want "alpha", one wants "beta", and the required one wants "gamma".
TESTS = [(f"alpha-{n}", "alpha", False) for n in range(1, 7)]
TESTS += [("beta-1", "beta", False), ("must-gamma", "gamma", True)]


def write_suite(folder: Path, response: str) -> Path:
    lines = [
        "name: gate",
        "execution: {targets: [bot]}",
        "targets:",
        f"  - {{name: bot, provider: mock, response: '{response}'}}",
        "tests:",
    ]
    for test_id, word, required in TESTS:
        lines += [
            f"  - id: {test_id}",
            f"    input: say {word}",
            f"    assertions: [{{type: contains, value: {word}}}]",
        ]
        if required:
            lines.append("    metadata: {required: true}")
    path = folder / "gate.eval.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run(instance: dg.DagsterInstance, tmp_path: Path, response: str) -> SuiteRun:
    path = write_suite(tmp_path, response)
    suite = load_suite(path)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(suite)))
    return run_suite(
        instance, suite, str(tmp_path / "storage"), agents=["bot"], case_keys=keys,
        echo=lambda _: None,
    )  # fmt: skip


def latest_check(instance: dg.DagsterInstance) -> dg.AssetCheckEvaluation:
    key = dg.AssetCheckKey(dg.AssetKey(["gate", "eval_report"]), REGRESSION_CHECK)
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
    assert record is not None and record.event is not None
    evaluation = record.event.dagster_event.event_specific_data
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation


def test_check_passes_when_nothing_changed(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    first = run(instance, tmp_path, "alpha beta gamma")
    assert first.regression_check is not None and first.regression_check.passed
    assert first.report.since_previous is None and len(first.report.trend) == 1
    second = run(instance, tmp_path, "alpha beta gamma")
    check = second.regression_check
    assert check is not None and check.passed, check
    since = second.report.since_previous
    assert since is not None and since.before.run_id == first.report.run_id
    assert [(a.agent, a.n_paired, a.regressed) for a in since.agents] == [("bot", 8, 0)]
    assert [e.run_id for e in second.report.trend] == [first.report.run_id, second.report.run_id]
    assert second.report.trigger == "cli"
    # The check's result is in the event log as the UI shows it.
    assert latest_check(instance).passed


def test_check_fails_when_a_required_case_regresses(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    run(instance, tmp_path, "alpha beta gamma")
    second = run(instance, tmp_path, "alpha beta")  # only must-gamma now fails
    check = second.regression_check
    assert check is not None and not check.passed
    assert check.severity == dg.AssetCheckSeverity.ERROR
    assert "required case must-gamma regressed for bot" in (check.description or "")
    assert check.metadata["required_regressed"].value == "bot/must-gamma"
    # One regression is no significant drop: McNemar exact p = 2 * (1/2)^1 = 1.
    assert check.metadata["bot/mcnemar_p"].value == 1.0
    assert not latest_check(instance).passed


def test_check_passes_when_an_optional_case_regresses(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    run(instance, tmp_path, "alpha beta gamma")
    second = run(instance, tmp_path, "alpha gamma")  # beta-1 regresses, not required
    check = second.regression_check
    assert check is not None and check.passed, check
    since = second.report.since_previous
    assert since is not None
    assert [(c.test_id, c.change) for c in since.changes] == [("beta-1", "regressed")]


def test_check_fails_on_a_significant_drop(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    run(instance, tmp_path, "alpha beta gamma")
    second = run(instance, tmp_path, "beta gamma")  # the six alpha cases regress
    check = second.regression_check
    assert check is not None and not check.passed
    # Six discordant pairs, all one way: exact p = 2 * (1/2)^6.
    assert check.metadata["bot/mcnemar_p"].value == 2 * 0.5**6
    assert "bot: pass rate 100.0% -> 25.0%" in (check.description or "")


def test_trigger_is_read_from_the_run_tags() -> None:
    from evals_pipeline.defs.history import _launched_by

    assert _launched_by({"evals/trigger": "cli"}, "gate") == "cli"
    assert _launched_by({"dagster/sensor_name": "gate_cases"}, "gate") == "sensor"
    assert _launched_by({"dagster/schedule_name": "nightly"}, "gate") == "nightly"
    # The automation sensor: the report follows whichever run last wrote its grades.
    assert _launched_by({"dagster/sensor_name": AUTOMATION_SENSOR}, "gate") is None
    assert _launched_by({"dagster/from_automation_condition": "true"}, "gate") is None
    assert _launched_by({"dagster/backfill": "abc"}, "gate") == "ui"
    assert _launched_by({}, "gate") == "ui"

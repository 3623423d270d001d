"""The progress relay between a step process and its command (progress_relay.py), on real
processes and a real socket: every event arrives, in order, and so does a stop's tally."""

from __future__ import annotations

import logging
import multiprocessing
import re
from pathlib import Path

import dagster as dg
import pytest

from evals_pipeline.defs.executor import BROKER_ENV, EXECUTOR_ENV
from evals_pipeline.defs.partitions import partition_key, register_cases
from evals_pipeline.defs.suite_run import RUN_CONFIG, reconstruct_run_job
from evals_pipeline.progress import LayerProgress, ProgressEvent, listening, logging_progress
from evals_pipeline.progress_relay import ProgressRelay, relay_to
from evals_pipeline.settings import Settings
from evals_pipeline.stopping import agent_started, request_stop
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.test_cli import cli, write

ITEMS = 500


def _step(address: str) -> None:
    """A step process: a layer of ITEMS items, then a stop with two agent runs in flight."""
    assert relay_to(address)
    layer = LayerProgress("agent runs", ITEMS, logging_progress(logging.getLogger("step")))
    for n in range(ITEMS):
        layer.advance(f"case {n}", "ok", "ok")
    agent_started("a")
    agent_started("b")
    request_stop()


def test_every_event_of_a_step_process_and_its_stop_reach_the_command() -> None:
    heard: list[ProgressEvent] = []
    stopped: list[int] = []
    with listening(heard.append), ProgressRelay(stopped.append) as relay:
        step = multiprocessing.get_context("spawn").Process(target=_step, args=(relay.address,))
        step.start()
        step.join(60)
        assert step.exitcode == 0
    assert [e.done for e in heard] == list(range(ITEMS + 1))  # each, in order, start included
    assert heard[-1].counts == {"ok": ITEMS}
    assert stopped == [2]


def test_the_command_never_relays_to_itself() -> None:
    with ProgressRelay(lambda _: None) as relay:
        assert not relay_to(relay.address)
    assert not relay_to(relay.address)  # gone: nothing listens


AGENTS = ("a", "b", "c", "d", "e")
CASES = 3
SUITE = "name: relayed\nexecution:\n  targets: [{agents}]\ntests:\n{tests}".format(
    agents=", ".join(AGENTS),
    tests="".join(
        f"  - id: case-{n}\n    input: Say hello.\n"
        "    assertions:\n      - type: contains\n        value: hello\n"
        for n in range(CASES)
    ),
)
TARGETS = "targets:\n" + "".join(
    f"  - name: {a}\n    provider: mock\n    response: hello\n" for a in AGENTS
)


def test_every_step_on_a_celery_worker_of_this_host_relays_its_progress(
    tmp_path: Path, celery_broker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three agents that are not neighbours: three runs of the layers job, more steps than the
    session's two workers, so a worker serves a second step of a job it rebuilt for an earlier
    one (Dagster keeps the job it rebuilt last), each run of a job in two steps (its cases, then
    their judgments): every step's events reach the command."""
    suite = write(tmp_path / "evals", "relayed.eval.yaml", SUITE)
    monkeypatch.setenv(Settings.env_name("targets"), str(write(tmp_path, "t.yaml", TARGETS)))
    monkeypatch.setenv(EXECUTOR_ENV, "celery")
    monkeypatch.setenv(BROKER_ENV, celery_broker)

    done = cli("run", str(suite), "--target", "a", "--target", "c", "--target", "e", home=tmp_path)

    assert done.code == 0, done.explain()
    for layer in ("agent runs", "grades", "judgments"):  # each agent's: a run's last step's too
        assert done.stderr.count(f"{layer}: {CASES}/{CASES} done (") == 3, done.explain()
    for agent in ("a", "c", "e"):
        lines = re.findall(rf"^\[\d+/{CASES}\] (judged )?{agent} / case-\d: ", done.stderr, re.M)
        assert len(lines) == 3 * CASES, done.explain()


def test_a_step_that_cannot_reach_the_relay_shows_its_progress_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A step on another host (here: an address nothing listens on) keeps its progress lines
    on its own stderr, as its worker's log."""
    path = write(tmp_path / "evals", "relayed.eval.yaml", SUITE)
    targets = write(tmp_path, "t.yaml", TARGETS)
    job = reconstruct_run_job(
        str(path),
        str(tmp_path / "storage"),
        "layers",
        targets_file=str(targets),
        progress_to=str(tmp_path / "nothing-listens"),
    )
    suite = load_suite(path, targets)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(suite)))
    with dg.instance_for_test() as instance:
        order = register_cases(instance, suite.slug, keys)
        result = job.execute_in_process(
            instance=instance,
            run_config=RUN_CONFIG,
            tags={
                "dagster/asset_partition_range_start": str(partition_key(order[0], "a")),
                "dagster/asset_partition_range_end": str(partition_key(order[-1], "a")),
            },
        )
    assert result.success
    err = capsys.readouterr().err
    for layer in ("agent runs", "grades", "judgments"):
        assert f"{layer}: {CASES}/{CASES} done (" in err, err

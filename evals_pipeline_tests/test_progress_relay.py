"""The progress relay between a step process and its command (progress_relay.py), on real
processes and a real socket: every event arrives, in order, and so does a stop's tally."""

from __future__ import annotations

import logging
import multiprocessing

from evals_pipeline.progress import LayerProgress, ProgressEvent, listening, logging_progress
from evals_pipeline.progress_relay import ProgressRelay, relay_to
from evals_pipeline.stopping import agent_started, request_stop

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

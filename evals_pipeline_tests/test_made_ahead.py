"""What a step makes ahead is found by the folder of the step it is made for, once; an earlier
step's work for the same folder, and whatever no step claimed once a run is over, is closed."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.made_ahead import MadeAhead, close_unclaimed


class Work:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_work_made_ahead_is_claimed_once_and_replaced_work_closed() -> None:
    steps: MadeAhead[Work] = MadeAhead()
    first, second = Work(), Work()
    steps.start(Path("/runs/r1/sessions"), first)
    steps.start(Path("/runs/r1/sessions"), second)  # the agents step of the run again
    assert first.closed and not second.closed
    assert steps.claim(Path("/runs/r1/sessions")) is second
    assert steps.claim(Path("/runs/r1/sessions")) is None


def test_unclaimed_work_is_closed_once_a_run_is_over() -> None:
    steps: MadeAhead[Work] = MadeAhead()
    claimed, left = Work(), Work()
    steps.start(Path("/runs/r2/sessions"), claimed)
    steps.start(Path("/runs/r2/grades"), left)
    assert steps.claim(Path("/runs/r2/sessions")) is claimed
    close_unclaimed()
    assert left.closed and not claimed.closed
    assert steps.claim(Path("/runs/r2/grades")) is None

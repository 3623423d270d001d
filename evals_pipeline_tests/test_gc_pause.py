"""The collector held off while large structures are built: enabled again after the outermost
block, and what a `kept` block built handed to the oldest generation."""

from __future__ import annotations

import gc

from evals_pipeline.gc_pause import gc_paused


class Node:
    """A tracked object, easy to find among the collector's."""


def generation_of(obj: object) -> int | None:
    return next((g for g in range(3) if any(o is obj for o in gc.get_objects(generation=g))), None)


def test_the_collector_is_off_inside_and_back_after_the_outermost_block() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused(kept=True):
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_what_a_kept_block_built_goes_to_the_oldest_generation_and_nothing_else_does() -> None:
    gc.collect()
    with gc_paused(kept=True):
        kept = Node()
    assert generation_of(kept) == 2
    with gc_paused():
        passing = Node()
    assert generation_of(passing) == 0
    assert not gc.get_freeze_count()  # nothing left frozen

"""The collector held off while large structures are built: enabled again after the outermost
block, and what a `kept` block built handed to the oldest generation."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from evals_pipeline.gc_pause import gc_paused, start_up_over, start_up_paused


class Node:
    """A tracked object, easy to find among the collector's."""


def in_fresh_process(script: str, *args: str) -> list[str]:
    """The lines `script` prints, run by a new interpreter (for what changes a process for good)."""
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


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


def test_start_up_is_held_off_until_it_is_over_and_then_frozen_out_of_sight() -> None:
    gc.collect()
    with start_up_paused():
        assert not gc.isenabled()
        made_at_start_up = Node()
        with gc_paused():  # a block inside start-up leaves the collector off
            pass
        assert not gc.isenabled()
        start_up_over()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        assert generation_of(made_at_start_up) is None  # frozen: no generation walks it
        start_up_over()  # once is enough
        assert gc.isenabled()
    gc.unfreeze()
    assert gc.isenabled()


def test_a_start_up_never_declared_over_gives_the_collector_back_unfrozen() -> None:
    with start_up_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert not gc.get_freeze_count()


def test_what_is_built_for_life_stays_frozen_out_of_sight() -> None:
    """In a fresh process (it changes how the process promotes for good): the collector is off
    in the block and back after it; what the block built is frozen, and a later `kept` block
    leaves it frozen, its own objects with it."""
    script = (
        "import gc\n"
        "from evals_pipeline.gc_pause import built_for_life, gc_paused\n"
        "class Node: pass\n"
        "def walked(o): return any(x is o for g in range(3) for x in gc.get_objects(g))\n"
        "with built_for_life():\n"
        "    print('off', not gc.isenabled())\n"
        "    built = Node()\n"
        "print('back', gc.isenabled(), 'walked', walked(built))\n"
        "with gc_paused(kept=True):\n"
        "    later = Node()\n"
        "print('after a kept block', walked(built), walked(later), gc.isenabled())\n"
    )
    assert in_fresh_process(script) == [
        "off True",
        "back True walked False",
        "after a kept block False False True",
    ]


def test_a_command_that_never_ends_its_start_up_gives_the_collector_back(tmp_path: Path) -> None:
    """In a fresh process: `validate` never declares its start-up over, and still leaves the
    collector as it found it, nothing frozen."""
    script = (
        "import gc, sys\n"
        "from evals_pipeline.cli import main\n"
        "code = main(['validate', sys.argv[1]])\n"
        "print(code, gc.isenabled(), gc.get_freeze_count())\n"
    )
    suite = tmp_path / "s.eval.yaml"
    suite.write_text(
        "targets:\n  - name: echo\n    provider: cli\n    command: echo hi > {OUTPUT_FILE}\n"
        "tests:\n  - id: a\n    input: hi\n    criteria: says hi\n"
    )
    assert in_fresh_process(script, str(suite))[-1] == "0 True 0"


def test_at_exit_every_object_is_frozen_after_the_other_exit_hooks() -> None:
    """In a fresh process: registered once however often asked, and run after the hooks
    registered later (exit hooks run last-registered first), so the interpreter's final
    collections have nothing to walk."""
    script = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('at exit', gc.get_freeze_count() > 0))\n"
        "from evals_pipeline.gc_pause import freeze_at_exit\n"
        "before = atexit._ncallbacks()\n"
        "freeze_at_exit()\n"
        "freeze_at_exit()\n"
        "print('hooks added', atexit._ncallbacks() - before, 'frozen', gc.get_freeze_count())\n"
    )
    assert in_fresh_process(script)[:2] == ["hooks added 1 frozen 0", "at exit True"]

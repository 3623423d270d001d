"""Live progress: the layers' typed events, counted across worker threads, carried through
Dagster's logging to the run's display; plain lines off a terminal, rich bars on one."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import dagster as dg
from rich.console import Console

from evals_pipeline.defs.suite_run import run_suite
from evals_pipeline.progress import LayerProgress, ProgressEvent
from evals_pipeline.progress_bars import PlainProgress, ProgressBars, progress_display
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.defs.conftest import QUICKSTART


class Recording:
    """A display that keeps what it is shown, and prints it as plain lines to `out`."""

    def __init__(self, out: io.StringIO) -> None:
        self.events: list[ProgressEvent] = []
        self.messages: list[str] = []
        self.plain = PlainProgress(out)

    def event(self, event: ProgressEvent) -> None:
        self.events.append(event)
        self.plain.event(event)

    def message(self, text: str) -> None:
        self.messages.append(text)

    def close(self) -> None:
        pass


def test_a_layer_counts_its_items_across_threads_in_order() -> None:
    events: list[ProgressEvent] = []
    tracker = LayerProgress("grades", 200, events.append, ("pass", "fail", "error"))

    def work(start: int) -> None:
        for i in range(start, 200, 8):
            tracker.advance(f"case {i}", "done", ("pass", "fail", "error")[i % 3])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (events[0].done, events[0].line()) == (0, "grades: 200 to do")
    assert events[0].counts == {"pass": 0, "fail": 0, "error": 0}
    assert [e.done for e in events] == list(range(201))
    assert all(sum(e.counts.values()) == e.done for e in events)
    assert events[-1].counts == {"pass": 67, "fail": 67, "error": 66}
    assert events[-1].finished and events[-1].tally() == "pass 67, fail 67, error 66"


def test_plain_progress_prints_each_line_and_the_layers_tally() -> None:
    out = io.StringIO()
    display = PlainProgress(out)
    tracker = LayerProgress(
        "agent runs", 2, display.event, ("ok", "error"), clock=iter([0, 1.5, 2, 2.5]).__next__
    )
    tracker.advance("a / t1", "ok in 5 ms", "ok")
    tracker.advance("a / t2", "error: boom in 7 ms", "error")
    LayerProgress("judgments", 0, display.event)  # nothing to do: no line
    assert out.getvalue().splitlines() == [
        "agent runs: 2 to do",
        "[1/2] a / t1: ok in 5 ms",
        "[2/2] a / t2: error: boom in 7 ms",
        "agent runs: 2/2 done (ok 1, error 1) in 2.5 s",
    ]


def test_the_bars_show_done_of_total_and_the_counts_as_they_come() -> None:
    out = io.StringIO()
    display = ProgressBars(Console(file=out, force_terminal=True, width=120))
    tracker = LayerProgress("agent runs", 9, display.event, ("ok", "error"))
    for i in range(3):
        tracker.advance(f"a / t{i}", "ok", "error" if i == 1 else "ok")
    midway = out.getvalue()
    for i in range(3, 9):
        tracker.advance(f"a / t{i}", "ok", "ok")
    grades = LayerProgress("grades", 9, display.event, ("pass", "fail", "error"))
    for i in range(9):
        grades.advance(f"a / t{i}", "pass", "fail" if i < 2 else "pass")
    display.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # drop cursor moves, colours
    assert "3/9" in midway and "ok 2, error 1" in midway
    assert re.search(r"agent runs .*9/9 ok 8, error 1 .*\d:\d\d:\d\d ETA", text), text
    assert re.search(r"grades .*9/9 pass 7, fail 2, error 0", text), text
    assert "\x1b[" in out.getvalue()  # drawn as a terminal


def test_off_a_terminal_the_display_is_plain_lines() -> None:
    assert isinstance(progress_display(io.StringIO()), PlainProgress)


def test_a_real_run_carries_every_layers_events_through_dagster(tmp_path: Path) -> None:
    loaded = load_suite(QUICKSTART)
    keys = list(dict.fromkeys(c.case_key for c in resolve_cases(loaded)))
    lines = io.StringIO()
    recording = Recording(lines)
    with dg.instance_for_test() as instance:
        run = run_suite(
            instance,
            loaded,
            str(tmp_path / "storage"),
            agents=list(loaded.targets),
            case_keys=keys,
            echo=lambda _: None,
            display=recording,
        )
    partitions = len(keys) * len(loaded.targets)
    last = {e.layer: e for e in recording.events}
    assert {"agent runs", "grades", "judgments"} <= set(last)
    for event in last.values():
        assert (event.done, event.total) == (partitions, partitions)
    report = run.report
    assert last["grades"].counts == {
        "pass": sum(a.passed for a in report.agents),
        "fail": sum(a.failed for a in report.agents),
        "error": sum(a.errors for a in report.agents),
    }
    text = lines.getvalue()
    assert f"agent runs: {partitions} to do" in text
    tally = last["grades"].tally()
    assert f"grades: {partitions}/{partitions} done ({tally}) in " in text
    assert len(re.findall(rf"^\[\d+/{partitions}\] ", text, re.M)) == 3 * partitions

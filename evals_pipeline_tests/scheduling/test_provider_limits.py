"""Per-provider limits (EVALS_PIPELINE_PROVIDER_LIMITS, `run --limit`), separate from `workers`:
real `cli` agent processes record when they start and end, and no more than the limit overlap."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from evals_pipeline.layers import run_agents
from evals_pipeline.provider_limits import (
    LIMITS_ENV,
    LimitsError,
    configured_limits,
    parse_limits,
    provider_slot,
)
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.settings import Settings
from evals_pipeline.suites import load_suite, resolve_cases
from evals_pipeline_tests.test_cli import cli

# A cli agent that records its start, waits until 3 agents have started (or 3 s passed), then
# records its end: without a limit 3 overlap for sure; under a limit of 2 each waits it out.
# Its files are named by a random id: in the sandbox each agent has a PID namespace of its own,
# so their pids are alike.
AGENT = """\
import json, os, sys, time, uuid
log = sys.argv[1]
me = uuid.uuid4().hex
start = time.time_ns()
open(os.path.join(log, f"{me}.start"), "w").close()
deadline = time.monotonic() + 3
while time.monotonic() < deadline:
    if len([f for f in os.listdir(log) if f.endswith(".start")]) >= 3:
        break
    time.sleep(0.02)
with open(os.path.join(log, f"{me}.json"), "w") as out:
    json.dump({"start": start, "end": time.time_ns()}, out)
print("done")
"""


def write_suite(root: Path, tests: int) -> tuple[Path, Path]:
    """The suite and the folder its agents log to (writable in the sandbox when it is named in
    EVALS_PIPELINE_SANDBOX_WRITABLE)."""
    log = root / "log"
    log.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "agent.py").write_text(AGENT)
    command = f"{sys.executable} {root / 'agent.py'} {log}"
    suite = root / "limited.eval.yaml"
    suite.write_text(
        "execution: {target: rec, workers: 4}\n"
        f"targets: [{{name: rec, provider: cli, command: '{command}'}}]\n"
        "tests:\n"
        + "".join(
            f"  - {{id: t{i}, input: go, assertions: [{{type: contains, value: done}}]}}\n"
            for i in range(tests)
        )
    )
    return suite, log


def max_overlap(log: Path) -> int:
    """The most agent processes that were running at one moment."""
    spans = [json.loads(p.read_text()) for p in log.glob("*.json")]
    return max(sum(s["start"] <= t["start"] < s["end"] for s in spans) for t in spans)


def test_a_provider_limit_holds_under_more_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LIMITS_ENV, "cli=2,anthropic=1")
    suite, log = write_suite(tmp_path / "p", tests=5)
    monkeypatch.setenv(WRITABLE_VAR, str(log))
    runs = run_agents(resolve_cases(load_suite(suite)), tmp_path / "runs", workers=4)
    assert [r.error for r in runs] == [None] * 5
    assert len(list(log.glob("*.json"))) == 5
    assert max_overlap(log) == 2


def test_without_a_limit_the_workers_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LIMITS_ENV, "codex=1")  # another provider's limit changes nothing here
    suite, log = write_suite(tmp_path / "p", tests=4)
    monkeypatch.setenv(WRITABLE_VAR, str(log))
    runs = run_agents(resolve_cases(load_suite(suite)), tmp_path / "runs", workers=4)
    assert [r.error for r in runs] == [None] * 4
    assert max_overlap(log) >= 3


def test_provider_slot_counts_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """LLM calls take their provider's slot the same way (llm/sdk.py): at most 2 in at once."""
    monkeypatch.setenv(LIMITS_ENV, "anthropic=2")
    inside, peak, lock = 0, 0, threading.Lock()
    hold = threading.Event()

    def call() -> None:
        nonlocal inside, peak
        with provider_slot("anthropic"):
            with lock:
                inside += 1
                peak = max(peak, inside)
            hold.wait(0.5)  # keep the slot a while, so the others must queue
            with lock:
                inside -= 1

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 2


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("", {}),
        ("claude-code=2,anthropic=4", {"claude-code": 2, "anthropic": 4}),
        ("codex=1 openai=8", {"codex": 1, "openai": 8}),
    ],
)
def test_limits_parse(text: str, limits: dict[str, int]) -> None:
    assert parse_limits(text) == limits
    assert configured_limits(Settings.from_env({LIMITS_ENV: text})) == limits


@pytest.mark.parametrize("text", ["claude-code", "claude-code=0", "=2", "codex=two"])
def test_bad_limits_say_what_to_write(text: str) -> None:
    with pytest.raises(LimitsError, match=r"is not PROVIDER=N with N >= 1; write e.g."):
        parse_limits(text)


def test_run_limit_option_is_checked_first(tmp_path: Path) -> None:
    suite, _ = write_suite(tmp_path / "p", tests=1)
    (tmp_path / "home").mkdir()
    done = cli("run", str(suite), "--limit", "cli=none", home=tmp_path / "home")
    assert done.code == 2, done.explain()
    assert "--limit: 'cli=none' is not PROVIDER=N with N >= 1" in done.stderr

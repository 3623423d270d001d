"""Code heuristics per dimension (judging.md §2): what the session, the diff and the graders say
on their own, blended with the LLM panel's score by the suite's per-dimension weights.

Each returns a score in [0, 1] and the reason, or None when its signal is missing (a `cli` agent
has no tool events; a text task has no diff). The formulas are project design choices.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evals_pipeline.enrichers.milestones import EDIT_TOOLS, is_test_command, tool_command
from evals_pipeline.grading.scoring import meets
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import GraderResult, TrialGrade
from evals_pipeline.models.judging import Dimension

DEBUG_LEFTOVER = re.compile(
    r"^\+(?!\+\+).*(?:\bprint\(|console\.log\(|\bdebugger\b|\bpdb\.set_trace\(|\bbreakpoint\(\)"
    r"|\bTODO\b|\bFIXME\b|\bXXX\b)",
    re.MULTILINE,
)
TEST_PATH = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.[^/]+$|[^/]*\.(?:test|spec)\.)")
_SUCCESS_CLAIM = re.compile(
    r"\b(?:all (?:the )?tests (?:now )?pass|tests? (?:now )?pass(?:es|ed)?|works? (?:now|correctly)"
    r"|fixed|done|complete[d]?)\b",
    re.IGNORECASE,
)
_ACKNOWLEDGED_FAILURE = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|error|broken|not (?:yet )?pass|could not|couldn't|unable)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Heuristic:
    """A dimension's heuristic score `h_d` and why; score None when the signal is unavailable."""

    score: float | None
    reason: str


def heuristic_scores(
    dimensions: Sequence[Dimension],
    *,
    trial: TrialGrade,
    events: Sequence[EnrichedEvent],
    diff: str | None,
    final_answer: str,
    task: str,
) -> dict[Dimension, Heuristic]:
    """h_d for each dimension asked for."""
    compute = {
        "correctness": lambda: correctness(trial),
        "completeness": lambda: completeness(trial),
        "codeQuality": lambda: code_quality(diff),
        "minimalDiff": lambda: minimal_diff(diff, task),
        "verification": lambda: verification(events, final_answer),
    }
    return {d: compute[d]() for d in dimensions}


def correctness(trial: TrialGrade) -> Heuristic:
    """The trial's own verdict, as grading decided it (required graders, the case's threshold):
    1 when it passed, 0 when it failed, so the heuristic never contradicts the graders; None for
    an errored trial or one without code or deterministic graders (left to the judges)."""
    checks = _outcome_checks(trial)
    if trial.verdict == "error":
        return Heuristic(None, "the trial errored: nothing to judge")
    if not checks:
        return Heuristic(None, "no code or deterministic graders")
    passed = sum(g.verdict == "pass" for g in checks)
    tally = f"{passed}/{len(checks)} outcome checks passed"
    if trial.verdict == "pass":
        return Heuristic(1.0, f"the trial passed its graders; {tally}")
    return Heuristic(0.0, f"the trial failed its graders ({_why_failed(trial)}); {tally}")


def completeness(trial: TrialGrade) -> Heuristic:
    """0 when the trial failed its graders; 1 when it passed and every outcome check passed (all
    target tests pass → 1); otherwise left to the judges."""
    checks = _outcome_checks(trial)
    if trial.verdict == "fail":
        return Heuristic(0.0, f"the trial failed its graders ({_why_failed(trial)})")
    if trial.verdict == "pass" and checks and all(g.verdict == "pass" for g in checks):
        return Heuristic(1.0, "the trial passed and every outcome check passed")
    return Heuristic(None, "requirements are not enumerated; left to the judges")


def _outcome_checks(trial: TrialGrade) -> list[GraderResult]:
    """The trial's deterministic and code graders that gave a verdict (LLM graders are not)."""
    return [g for g in trial.graders if g.verdict != "error" and not g.type.startswith("llm")]


def _why_failed(trial: TrialGrade) -> str:
    """Why grading failed the trial: a required grader below its gate, else its score."""
    below = [g for g in trial.graders if g.gate is not None and not meets(g.score or 0.0, g.gate)]
    if below:
        g = below[0]
        return f"required grader {g.name!r} scored {g.score or 0.0:.2f} < {g.gate:g}"
    return f"score {trial.score:.2f} below the case threshold"


def code_quality(diff: str | None) -> Heuristic:
    """clip01(1 - 0.25·[debug print / TODO left in added lines]); lint results are not run."""
    if not diff or not diff.strip():
        return Heuristic(None, "no diff")
    leftovers = DEBUG_LEFTOVER.findall(diff)
    if leftovers:
        return Heuristic(0.75, f"debug leftover or TODO in added lines: {leftovers[0].strip()!r}")
    return Heuristic(1.0, "no debug leftovers or TODOs added")


def minimal_diff(diff: str | None, task: str) -> Heuristic:
    """1 - min(1, extraneous / changed): lines in files the task does not name (when it names
    any), whitespace-only changes and removed test lines count as extraneous."""
    if not diff or not diff.strip():
        return Heuristic(None, "no diff")
    changed = extraneous = 0
    unrelated: list[str] = []
    for path, lines in _files(diff):
        named = _named_in(path, task)
        for line in lines:
            changed += 1
            body = line[1:]
            if not body.strip() or (line.startswith("-") and TEST_PATH.search(path)):
                extraneous += 1
            elif not named and _task_names_files(task) and not TEST_PATH.search(path):
                extraneous += 1
                if path not in unrelated:
                    unrelated.append(path)
    if changed == 0:
        return Heuristic(None, "the diff changes no lines")
    score = 1 - min(1.0, extraneous / max(1, changed))
    why = f"{extraneous}/{changed} changed lines extraneous"
    return Heuristic(
        score, why + (f" (unrelated: {', '.join(unrelated[:3])})" if unrelated else "")
    )


def verification(events: Sequence[EnrichedEvent], final_answer: str) -> Heuristic:
    """1 if a test/build ran after the last edit and passed (with no contradicted success claim);
    0.5 if it ran, failed, and the agent said so; 0 otherwise."""
    if not events:
        return Heuristic(None, "no tool events")
    last_edit = max((e.seq for e in events if e.tool in EDIT_TOOLS), default=-1)
    runs = [
        e
        for e in events
        if e.seq > last_edit
        and e.kind == "tool_call"
        and e.tool == "Bash"
        and is_test_command(tool_command(e.tool_input) or "")
    ]
    if not runs:
        return Heuristic(0.0, "no test run after the last edit")
    last = runs[-1]
    ok = last.exit_code == 0 if last.exit_code is not None else last.status == "ok"
    if ok:
        return Heuristic(1.0, f"tests passed after the last edit (event {last.seq})")
    if _ACKNOWLEDGED_FAILURE.search(final_answer):
        return Heuristic(0.5, f"tests failed after the last edit (event {last.seq}), acknowledged")
    claim = "; the final answer claims success" if _SUCCESS_CLAIM.search(final_answer) else ""
    return Heuristic(0.0, f"tests failed after the last edit (event {last.seq}){claim}")


def _files(diff: str) -> list[tuple[str, list[str]]]:
    """(path, changed lines) per file of a unified diff."""
    files: list[tuple[str, list[str]]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            files.append((line.split(" b/", 1)[-1], []))
        elif files and line[:1] in "+-" and not line.startswith(("+++", "---")):
            files[-1][1].append(line)
    return files


_PATHLIKE = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,6}\b")


def _task_names_files(task: str) -> bool:
    return bool(_PATHLIKE.search(task))


def _named_in(path: str, task: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path in task or name in task

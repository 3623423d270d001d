"""The capability tier (§9, C1-C3): the agent finished and was wrong, by misreading the task,
not checking its work, or getting the implementation wrong."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection

from evals_pipeline.enrichers.milestones import EDIT_TOOLS
from evals_pipeline.judging.attribution.evidence import cite, snip, snip_command, snip_last_line
from evals_pipeline.judging.attribution.rule import FailedTrial, Firing, Rule, fire
from evals_pipeline.judging.attribution.signals import is_check, is_test, tests_failed
from evals_pipeline.models.judging import FailureCategory

_SUCCESS_CLAIM = re.compile(
    r"\b(?:all\s+(?:of\s+)?(?:the\s+)?(?:\d+\s+)?tests?|tests?|test suite|build)"
    r"\s+(?:now\s+|all\s+|are\s+|is\s+)*(?:pass(?:es|ed|ing)?|succeed(?:s|ed)?|green)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|no|never)\b|n't\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")


def _capability(t: FailedTrial) -> Firing | None:
    # C1, C2 and C3 exclude one another ("not C1", "not C1/C2"): the first to fire is the only one.
    if not t.completed:
        return None
    return _spec_misunderstanding(t) or _unverified_completion(t) or _incorrect_implementation(t)


def _spec_misunderstanding(t: FailedTrial) -> Firing | None:
    category: FailureCategory = "spec_misunderstanding"
    if not t.changes:
        if t.expects_changes:
            return fire(category, "empty_diff", "file_changes: the final diff is empty")
        return None
    changed = ", ".join(t.changes)
    if t.task_files and not any(_matches(path, t.task_files) for path in t.changes):
        task = ", ".join(sorted(t.task_files))
        return fire(category, "no_task_file", f"changed: {changed}", f"task files: {task}")
    protected = [path for path in t.changes if _matches(path, t.protected_paths)]
    if protected:
        return fire(category, "protected_path", f"changed protected files: {', '.join(protected)}")
    if t.allowed_paths is not None:
        outside = [path for path in t.changes if not _matches(path, t.allowed_paths)]
        if outside:
            return fire(
                category, "outside_allowed", f"changed outside allowed paths: {', '.join(outside)}"
            )
    return None


def _unverified_completion(t: FailedTrial) -> Firing | None:
    category: FailureCategory = "unverified_completion"
    last_edit = _last_edit_seq(t)
    checks = [e for e in t.tool_calls if is_check(e)]
    if last_edit is not None and not any(e.seq > last_edit for e in checks):
        last_check = f"last check at event:{checks[-1].seq}" if checks else "no check ran at all"
        return fire(
            category,
            "no_check_after_edit",
            f"event:{last_edit} last edit; no test/build/run command after it ({last_check})",
        )
    tests = [e for e in checks if is_test(e)]
    answer = _final_answer(t)
    if tests and tests_failed(tests[-1]) and (claim := _success_claim(answer)):
        last = tests[-1]
        return fire(
            category,
            "false_success_claim",
            cite(last, f"$ {snip_command(last)} → {snip_last_line(last.tool_output or '')}"),
            f"final answer: {claim!r}",
        )
    return None


def _incorrect_implementation(t: FailedTrial) -> Firing:
    failing = [g for g in t.grade.graders if g.verdict == "fail"]
    evidence = [
        f"grader {g.name!r} ({g.type}) failed"
        + (f", score {g.score:.2f}" if g.score is not None else "")
        + "".join(f"; {a.text}" for a in g.assertions if not a.passed)
        for g in failing
    ] or [f"trial score {t.grade.score:.2f} below the case threshold"]
    return fire("incorrect_implementation", "outcome_failed", *(snip(e) for e in evidence))


def _last_edit_seq(t: FailedTrial) -> int | None:
    edits = [e.seq for e in t.tool_calls if e.tool in EDIT_TOOLS]
    if edits:
        return edits[-1]
    milestone = t.session.milestone("last_edit")
    return milestone.seq if milestone else None


def _final_answer(t: FailedTrial) -> str:
    answers = [e.text for e in t.events if e.kind == "message" and e.role == "assistant" and e.text]
    return answers[-1] if answers else t.session.output or ""


def _success_claim(answer: str) -> str | None:
    for match in _SUCCESS_CLAIM.finditer(answer):
        # "not all tests pass", "I couldn't get the tests passing": a negation earlier in the
        # same sentence takes the claim back.
        before = _SENTENCE_END.split(answer[max(0, match.start() - 40) : match.start()])[-1]
        if not _NEGATION.search(before):
            return match.group(0)
    return None


def _matches(path: str, patterns: Collection[str]) -> bool:
    # Tracebacks name files by absolute path, diffs by repository path: a suffix is enough.
    return any(
        path == p
        or fnmatch.fnmatchcase(path, p)
        or p.endswith(f"/{path}")
        or path.endswith(f"/{p}")
        for p in patterns
    )


# One rule: C1-C3 are tried in order and exclude one another.
RULES: tuple[Rule, ...] = (_capability,)

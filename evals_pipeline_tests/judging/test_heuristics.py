"""Heuristic dimension scores from sessions, diffs and grader results."""

from __future__ import annotations

from evals_pipeline.judging.heuristics import (
    code_quality,
    correctness,
    minimal_diff,
    verification,
)
from evals_pipeline.models.events import EnrichedEvent
from evals_pipeline.models.grade import GraderResult, TrialGrade


def _bash(seq: int, command: str, exit_code: int) -> EnrichedEvent:
    return EnrichedEvent(
        seq=seq, kind="tool_call", tool="Bash", tool_input={"command": command}, exit_code=exit_code
    )


def _write(seq: int, path: str) -> EnrichedEvent:
    return EnrichedEvent(seq=seq, kind="tool_call", tool="Write", tool_input={"file_path": path})


def _trial(*verdicts: str, verdict: str = "fail") -> TrialGrade:
    graders = [
        GraderResult(name=f"g{i}", type="code-grader", verdict=v, score=1.0 if v == "pass" else 0.0)  # type: ignore[arg-type]
        for i, v in enumerate(verdicts)
    ]
    status = {"pass": "ok", "fail": "quality_failure", "error": "execution_error"}[verdict]
    return TrialGrade(verdict=verdict, execution_status=status, graders=graders)  # type: ignore[arg-type]


def test_verification_needs_a_passing_test_run_after_the_last_edit() -> None:
    ran_after = [_write(0, "a.py"), _bash(1, "pytest -q", 0)]
    assert verification(ran_after, "Done.").score == 1.0
    ran_before = [_bash(0, "pytest -q", 0), _write(1, "a.py")]
    assert verification(ran_before, "Done.").score == 0.0
    failed = [_write(0, "a.py"), _bash(1, "pytest -q", 1)]
    assert verification(failed, "The test still fails.").score == 0.5
    claimed = verification(failed, "All tests pass.")
    assert claimed.score == 0.0 and "claims success" in claimed.reason
    assert verification([], "x").score is None


def test_correctness_is_the_trials_verdict_not_the_share_of_checks_passed() -> None:
    failed = correctness(_trial("pass", "fail", "pass"))
    assert failed.score == 0.0 and "2/3 outcome checks passed" in failed.reason
    assert correctness(_trial("pass", "fail", "pass", verdict="pass")).score == 1.0
    assert correctness(_trial("pass", "error", verdict="error")).score is None
    assert correctness(_trial()).score is None


DIFF = """diff --git a/src/parser.py b/src/parser.py
--- a/src/parser.py
+++ b/src/parser.py
@@ -1,2 +1,3 @@
-    return None
+    return []
+    print("debug")
diff --git a/docs/unrelated.md b/docs/unrelated.md
--- a/docs/unrelated.md
+++ b/docs/unrelated.md
@@ -1 +1 @@
-old
+new
diff --git a/tests/test_parser.py b/tests/test_parser.py
--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,2 +1,1 @@
-def test_empty(): assert parse("") == []
"""


def test_minimal_diff_counts_unrelated_files_and_removed_tests() -> None:
    result = minimal_diff(DIFF, "Fix src/parser.py so parse('') returns [].")
    # 6 changed lines: 2 in docs/unrelated.md (unrelated), 1 removed test line.
    assert result.score == 1 - 3 / 6
    assert "docs/unrelated.md" in result.reason
    assert minimal_diff(None, "task").score is None


def test_code_quality_flags_debug_leftovers() -> None:
    assert code_quality(DIFF).score == 0.75
    assert code_quality("diff --git a/a.py b/a.py\n+x = 1\n").score == 1.0

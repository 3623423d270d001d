"""Code graders: programs that read the payload on stdin and print a score (reference §6).

The stdout / exit-code rules are AgentV's, except that every way a grader can fail (crash with
stderr, unparsable output, timeout, not starting) yields an `error` verdict with no score.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals_pipeline.grading.code_grader.payload import grader_payload
from evals_pipeline.grading.code_grader.target_proxy import TargetProxy
from evals_pipeline.grading.context import GradingContext, LlmClientSource
from evals_pipeline.grading.evaluation import Evaluation, preview
from evals_pipeline.grading.grader_process import run_grader
from evals_pipeline.grading.llm_grader import JudgedEvaluation, grade_assertion
from evals_pipeline.grading.registry import evaluator
from evals_pipeline.models.assertions import CodeGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.grade import AssertionOutcome, GraderResult
from evals_pipeline.models.session import Session
from evals_pipeline.process import ProcessResult, killed_or_exited, stderr_reason

STDERR_TAIL_CHARS = 4_000
PATH_VARIABLES = {
    "messages_json_path": "EVALS_PIPELINE_MESSAGES_PATH",
    "trace_path": "EVALS_PIPELINE_TRACE_PATH",
}
ASSERTION_TEXT_CHARS = 2_000


def run_code_grader(
    spec: CodeGraderAssertion,
    case: ResolvedCase,
    session: Session,
    llm: LlmClientSource | None = None,
) -> GraderResult:
    """Run one code grader on one session and grade what it printed.

    `llm` serves the target proxy of a grader with `target: true`.
    """
    ctx = GradingContext(case, session, llm)
    return grade_assertion(spec, lambda: evaluate_code_grader(spec, ctx), threshold=case.threshold)


@evaluator(CodeGraderAssertion)
def evaluate_code_grader(spec: CodeGraderAssertion, ctx: GradingContext) -> Evaluation:
    """Spawn the grader with the payload on stdin, in its own process group, without secrets.

    With `target:` set, a target proxy runs for the grader's lifetime; the grader gets only the
    proxy's loopback URL and one-time token, never an API key.
    """
    docker = ctx.case.workspace.docker_image if ctx.case.workspace else None
    if docker:
        return Evaluation.failed(
            f"the suite's workspace.docker ({docker}) asks for code graders to run in a "
            "container, which evals-pipeline does not do: remove workspace.docker to run them "
            "on the host, or run this suite with agentv"
        )
    payload = grader_payload(spec, ctx)
    workspace = ctx.session.workspace_path
    extra = {"AGENTV_WORKSPACE_PATH": workspace} if workspace else {}
    # File-backed bulk fields by environment too: the AgentV SDK's schema drops unknown payload
    # keys, so a TS grader's helper finds the transcript here (docs/grader-contract.md).
    for key, variable in PATH_VARIABLES.items():
        if key in payload:
            extra[variable] = payload[key]
    max_calls = spec.proxy_max_calls
    if max_calls is None:
        result = _spawn(spec, ctx, payload, extra)
        return parse_grader_output(
            result, spec.timeout_seconds, agentv_scoring=ctx.case.agentv_scoring
        )
    if ctx.llm is None or ctx.case.grader_target is None:
        missing = "no grader target" if ctx.case.grader_target is None else "no LLM clients"
        return Evaluation.failed(
            f"the grader uses the target proxy (target: true) but there is {missing}: add "
            "grader_target: <llm target> to the agent target"
        )
    with TargetProxy(
        ctx.llm,
        default_target=ctx.case.grader_target,
        available=list(ctx.case.llm_targets),
        max_calls=max_calls,
    ) as proxy:
        result = _spawn(spec, ctx, payload, {**extra, **proxy.env()})
    evaluation = parse_grader_output(
        result, spec.timeout_seconds, agentv_scoring=ctx.case.agentv_scoring
    )
    details = {
        **(evaluation.details or {}),
        "target_proxy": {"call_count": proxy.call_count, "max_calls": max_calls},
    }
    return JudgedEvaluation(
        score=evaluation.score,
        assertions=evaluation.assertions,
        details=details,
        error=evaluation.error,
        error_kind=evaluation.error_kind,
        stderr=evaluation.stderr,
        warnings=evaluation.warnings,
        judge_usage=proxy.usage,
    )


def _spawn(
    spec: CodeGraderAssertion,
    ctx: GradingContext,
    payload: dict[str, Any],
    extra: dict[str, str],
) -> ProcessResult:
    side_files = [Path(payload[key]).parent for key in PATH_VARIABLES if key in payload]
    for key in ("output_path", "messages_path"):
        if isinstance(payload.get(key), str):
            side_files.append(Path(payload[key]).parent)
    return run_grader(
        spec.command,
        cwd=Path(ctx.case.base_dir) / (spec.cwd or ""),
        extra_env=extra,
        timeout_seconds=spec.timeout_seconds,
        stdin=json.dumps(payload, indent=2, ensure_ascii=False).encode("utf-8"),
        workspace=ctx.session.workspace_path,
        readable=side_files,
        suite_dir=ctx.case.base_dir,
    )


def parse_grader_output(
    result: ProcessResult, timeout_seconds: float, *, agentv_scoring: bool = False
) -> Evaluation:
    """Turn a finished grader process into an evaluation, per the stdout / exit-code table.

    With `agentv_scoring` (run --agentv-scoring), a grader that exited 0 is read as AgentV reads
    it: stdout that is no JSON object is plain text (score 1 by the exit code), a `score` that is
    no number gives way to the assertions' pass rate (0 without them). Crashes stay failures here;
    the trial scores them 0 (scoring.agentv_scored).
    """
    stderr = result.stderr[-STDERR_TAIL_CHARS:]
    if result.error is not None:
        return Evaluation.failed(result.error, stderr, kind="crashed")
    if result.timed_out:
        return Evaluation.failed(f"timed out after {timeout_seconds:g} s", stderr, kind="timeout")
    stdout = result.stdout.decode("utf-8", "replace").strip()
    structured = stdout.startswith(("{", "["))
    code = result.exit_code
    if code is not None and code < 0:
        # A signal is not an exit code: the grader did not finish, whatever it printed.
        return Evaluation.failed(_exit_reason(code, stderr), stderr, kind="crashed")
    if code != 0:
        if stderr.strip() or structured:
            return Evaluation.failed(_exit_reason(code, stderr), stderr, kind="exit_code")
        return Evaluation.check(False, _text(stdout) or f"exit {code}")
    if not structured:
        return replace(
            Evaluation.check(True, _text(stdout) or "exit 0"),
            stderr=stderr or None,
            warnings=[_exit_code_warning(stdout)],
        )
    return _json_result(stdout, stderr, agentv_scoring=agentv_scoring)


def _exit_code_warning(stdout: str) -> str:
    """Why a pass by exit code alone is worth a look (AgentV's plain-text convention keeps it):
    a grader that crashed quietly or printed the wrong thing passes the same way."""
    if not stdout:
        printed = "printed nothing"
    elif len(stdout) > ASSERTION_TEXT_CHARS:
        printed = f"printed {len(stdout):,} characters of plain text"
    else:
        printed = "printed plain text"
    return (
        f"exited 0 and {printed}, not a JSON result: scored 1 by its exit code (AgentV's "
        'plain-text convention); print {"score": ...} to score it explicitly'
    )


def _json_result(stdout: str, stderr: str, *, agentv_scoring: bool = False) -> Evaluation:
    try:
        data = json.loads(stdout)
    except ValueError as exc:
        problem = f"stdout is not valid JSON ({exc}): {preview(stdout)}"
        if agentv_scoring:
            return _as_plain_text(stdout, stderr, problem)
        return Evaluation.failed(problem, stderr, kind="parse")
    if not isinstance(data, dict):
        problem = f"stdout is JSON but not an object: {preview(stdout)}"
        if agentv_scoring:
            return _as_plain_text(stdout, stderr, problem)
        return Evaluation.failed(problem, stderr, kind="parse")
    entries = data.get("assertions")
    assertions = [
        AssertionOutcome(text=a["text"], passed=a.get("passed") is True, evidence=_evidence(a))
        for a in (entries if isinstance(entries, list) else [])
        if isinstance(a, dict) and isinstance(a.get("text"), str)
    ]
    score = data.get("score")
    warnings: list[str] = []
    if "score" not in data:
        score = sum(a.passed for a in assertions) / len(assertions) if assertions else 0.0
    elif isinstance(score, bool) or not isinstance(score, int | float):
        problem = f"score is not a number: {preview(json.dumps(score))}"
        if not agentv_scoring:
            return Evaluation.failed(problem, stderr, kind="parse")
        score = sum(a.passed for a in assertions) / len(assertions) if assertions else 0.0
        warnings.append(
            f"{problem}: scored {score:g} by its assertions as AgentV does (run --agentv-scoring)"
        )
    details = data.get("details")
    return Evaluation(
        score=float(score),
        assertions=assertions,
        details=details if isinstance(details, dict) else None,
        stderr=stderr or None,
        warnings=warnings,
    )


def _as_plain_text(stdout: str, stderr: str, problem: str) -> Evaluation:
    """AgentV's reading of unparsable stdout from a grader that exited 0: plain text, passed."""
    return replace(
        Evaluation.check(True, _text(stdout)),
        stderr=stderr or None,
        warnings=[f"{problem}: scored 1 by its exit code as AgentV does (run --agentv-scoring)"],
    )


def _evidence(entry: dict[str, Any]) -> str | None:
    evidence = entry.get("evidence")
    if evidence is None or isinstance(evidence, str):
        return evidence
    return json.dumps(evidence, ensure_ascii=False)


def _exit_reason(code: int | None, stderr: str) -> str:
    """Why the grader failed, in one line: the exit (or signal) and what stderr says went wrong."""
    how = killed_or_exited(code)
    said = stderr_reason(stderr)
    return f"{how}: {said}" if said else how


def _text(stdout: str) -> str:
    return stdout if len(stdout) <= ASSERTION_TEXT_CHARS else stdout[:ASSERTION_TEXT_CHARS] + "…"

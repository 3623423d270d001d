"""Run one grader without an agent, as `agentv eval assert` does (apps/cli/src/commands/eval/
commands/assert.ts): a grader found by name in `.agentv/graders/`, or one assertion of a suite,
on an answer given on the command line, in a file, or in a recorded session.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals_pipeline.agents.registry import detect_stream_kind
from evals_pipeline.enrichers import enrich_run
from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.grading.agentv_trace import summarize, trace_events, transcript, wire_messages
from evals_pipeline.grading.code_grader.run import parse_grader_output
from evals_pipeline.grading.evaluation import Evaluation
from evals_pipeline.models.assertions import AssertionBase, CodeGraderAssertion
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.errors import message_of
from evals_pipeline.models.messages import Message
from evals_pipeline.models.run import AgentRun
from evals_pipeline.models.session import Session
from evals_pipeline.models.targets import ReplayTarget
from evals_pipeline.process import child_env, run_process

GRADER_FOLDERS = ("graders", "judges")  # AgentV's order: .agentv/judges/ is the old name
SCRIPT_SUFFIXES = (".ts", ".js", ".mts", ".mjs", ".py", ".sh")  # AgentV: the first four only
NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
PASS_SCORE = 0.5  # `agentv eval assert` exits 0 at score >= 0.5
TIMEOUT_SECONDS = 60.0


class AssertInputError(ValueError, EvalsPipelineError):
    """Bad input to `assert`: an unknown grader, an unreadable file, a test that is not there."""


@dataclass(frozen=True)
class Answer:
    """What the grader judges: the agent's answer and the prompt, or a recorded session."""

    output: str = ""
    input: str = ""
    session_file: Path | None = None


@dataclass(frozen=True)
class Verdict:
    """A graded assertion: pass when its score reaches 0.5, as `agentv eval assert` exits."""

    name: str
    evaluation: Evaluation

    @property
    def passed(self) -> bool:
        score = self.evaluation.score
        return score is not None and score >= PASS_SCORE

    def result_json(self) -> dict[str, Any]:
        """The grader's result as AgentV prints it: `{score, assertions, details?}`."""
        result: dict[str, Any] = {
            "score": self.evaluation.score or 0.0,
            "assertions": [a.model_dump(exclude_none=True) for a in self.evaluation.assertions],
        }
        if self.evaluation.details is not None:
            result["details"] = self.evaluation.details
        if self.evaluation.error is not None:
            result["error"] = self.evaluation.error
        return result


def find_grader(name: str, start: Path) -> Path:
    """`.agentv/graders/<name>.<ext>` (then `.agentv/judges/`) in `start` or the nearest parent."""
    if not NAME.match(name):
        raise AssertInputError(
            f"invalid grader name '{name}': only letters, digits, hyphens and underscores"
        )
    for folder in [start.resolve(), *start.resolve().parents]:
        for sub in GRADER_FOLDERS:
            for suffix in SCRIPT_SUFFIXES:
                script = folder / ".agentv" / sub / f"{name}{suffix}"
                if script.is_file():
                    return script
    raise AssertInputError(
        f"grader '{name}' not found in .agentv/graders/ (or .agentv/judges/) of {start} or a "
        f"parent folder; graders are named <name>{{{','.join(SCRIPT_SUFFIXES)}}}"
    )


def grader_command(script: Path) -> list[str]:
    """How to run a grader script: bun for TypeScript/JavaScript (as AgentV), this Python for
    .py (so `evals_pipeline.grader` imports), sh for .sh."""
    if script.suffix == ".py":
        return [sys.executable, str(script)]
    if script.suffix == ".sh":
        return ["sh", str(script)]
    return ["bun", "run", str(script)]


def assert_payload(answer: Answer) -> dict[str, Any]:
    """The stdin `agentv eval assert` sends, key for key: its answer as the only output message,
    and its trace as buildTraceFromMessages returns it (camelCase: AgentV skips toSnakeCaseDeep
    here)."""
    output = [Message(role="assistant", content=answer.output)]
    prompt = [Message(role="user", content=answer.input)]
    messages = transcript(prompt, output)
    summary = summarize(messages).fields
    wire = wire_messages(messages)
    trace = {
        "eventCount": summary["event_count"],
        "toolCalls": summary["tool_calls"],
        "errorCount": summary["error_count"],
        "llmCallCount": summary["llm_call_count"],
        "messages": wire,
        "events": [_camel_event(e) for e in trace_events(wire, answer.output)],
        "metadata": {},
    }
    return {
        "output": answer.output,
        "answer": answer.output,
        "messages": wire_messages(output),
        "input": wire_messages(prompt),
        "question": answer.input,
        "criteria": "",
        "expected_output": [],
        "input_files": [],
        "trace": trace,
        "token_usage": None,
        "cost_usd": None,
        "duration_ms": None,
        "start_time": None,
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": None,
        "metadata": {},
    }


def _camel_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event's own keys in camelCase, its metadata as AgentV writes it (`message_index`)."""
    camel = {"event_id": "eventId", "parent_event_id": "parentEventId", "duration_ms": "durationMs"}
    return {camel.get(key, key): value for key, value in event.items()}


def run_named_grader(script: Path, answer: Answer, cwd: Path) -> Verdict:
    """Run a `.agentv/graders/` script in `cwd`: on AgentV's assert payload, or on a recorded
    session with the payload `evals-pipeline run` sends (transcript, trace, usage ...)."""
    if answer.session_file is not None:
        spec = CodeGraderAssertion(
            type="code-grader", name=script.stem, command=grader_command(script)
        )
        case = ResolvedCase(
            suite="assert",
            suite_path=str(cwd),
            case_key="assert",
            test_id="assert",
            agent="session",
            target=ReplayTarget(name="session", provider="replay", sessions_dir=str(cwd)),
            input=[Message(role="user", content=answer.input)] if answer.input else [],
            prompt=answer.input,
            base_dir=str(cwd),
            assertions=[spec],
        )
        return grade_suite_assertion(case, spec, answer)
    result = run_process(
        grader_command(script),
        cwd=cwd,
        env=child_env(),
        timeout_seconds=TIMEOUT_SECONDS,
        stdin=json.dumps(assert_payload(answer), indent=2, ensure_ascii=False).encode(),
    )
    return Verdict(script.stem, parse_grader_output(result, TIMEOUT_SECONDS))


def pick_assertion(case: ResolvedCase, which: str | None) -> AssertionBase:
    """The case's assertion named `which` (its name, else its type), or numbered `which` (1-based);
    the only one when `which` is None."""
    specs = case.assertions
    if which is None:
        if len(specs) == 1:
            return specs[0]
        raise AssertInputError(
            f"test '{case.test_id}' has {len(specs)} assertions; name one: "
            + ", ".join(s.display_name() for s in specs)
        )
    if which.isdigit() and 1 <= int(which) <= len(specs):
        return specs[int(which) - 1]
    named = [s for s in specs if s.display_name() == which] or [s for s in specs if s.type == which]
    if len(named) == 1:
        return named[0]
    raise AssertInputError(
        f"test '{case.test_id}' has {'several' if named else 'no'} assertion(s) '{which}'; "
        "its assertions are: " + ", ".join(s.display_name() for s in specs)
    )


def session_for(answer: Answer, case: ResolvedCase, folder: Path) -> Session:
    """The session to grade, through the real enricher: a recorded stream or output file, or the
    given answer as the agent's one message."""
    run: dict[str, Any] = {"case_key": case.case_key, "agent": case.agent, "start_ms": 0}
    if answer.session_file is not None:
        text = _read(answer.session_file)
        kind = detect_stream_kind(text)
        if kind is not None:
            run |= {"stdout_path": str(answer.session_file), "stream_kind": kind}
        else:
            run["output_file_path"] = str(answer.session_file)
    else:
        document = folder / "output.json"
        document.write_text(
            json.dumps({"output": [{"role": "assistant", "content": answer.output}]}),
            encoding="utf-8",
        )
        run["output_file_path"] = str(document)
    return enrich_run(AgentRun.model_validate({**run, "end_ms": 0}), folder / "session")


def grade_suite_assertion(case: ResolvedCase, spec: AssertionBase, answer: Answer) -> Verdict:
    """Grade one assertion of a resolved case on `answer`, as `evals-pipeline run` grades it."""
    from evals_pipeline.grading.trial import grade_trial
    from evals_pipeline.llm import LlmClients

    single = case.model_copy(update={"assertions": [spec]})
    with tempfile.TemporaryDirectory(prefix="evals-assert-") as folder:
        session = session_for(answer, single, Path(folder))
        if single.llm_targets:
            with LlmClients(single.llm_targets) as clients:
                trial = grade_trial(single, session, llm=clients)
        else:
            trial = grade_trial(single, session)
    grade = trial.graders[0] if trial.graders else None
    if grade is None:
        return Verdict(
            spec.display_name(), Evaluation.failed(message_of(trial.error) or "not graded")
        )
    return Verdict(
        grade.name,
        Evaluation(
            score=grade.score,
            assertions=list(grade.assertions),
            details=grade.details,
            error=message_of(grade.error),
            stderr=grade.stderr,
        ),
    )


def read_answer_file(path: Path) -> Answer:
    """`--file result.json`: `{output, input}`, as `agentv eval assert --file` reads it."""
    try:
        content = json.loads(_read(path))
    except json.JSONDecodeError as exc:
        raise AssertInputError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    if not isinstance(content, dict):
        raise AssertInputError(f"{path}: expected a JSON object with `output` and `input`")
    return Answer(output=str(content.get("output") or ""), input=str(content.get("input") or ""))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AssertInputError(f"cannot read {path}: {exc.strerror}") from None

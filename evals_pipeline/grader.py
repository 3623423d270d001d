"""Write a code grader in Python: decorate one function, run the file as the grader's command.

    from evals_pipeline.grader import GraderInput, grader

    @grader
    def check(inp: GraderInput) -> float:
        return 1.0 if "hello" in inp.output else 0.0

The payload's heavy fields load lazily: `inp.messages`, `inp.output` and `inp.trace` are used
inline when the payload carries them, else read from their file (`messages_json_path`, the
Parquet `messages_path`, `output_path`, `trace_path`) on first access only, then cached. Importing this module stays cheap
(no pyarrow, pandas or Dagster until a grader touches `messages`). See docs/grader-contract.md.

A grader with `target: true` in its assertion may ask the case's grader target (an LLM) through
the target proxy, without an API key:

    from evals_pipeline.grader import TargetClient

    reply = TargetClient.from_env().invoke("Is this answer polite? Answer yes or no.\n" + text)
    polite = reply["rawText"].strip().lower().startswith("yes")
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from evals_pipeline.errors import EvalsPipelineError

if TYPE_CHECKING:
    from evals_pipeline.models.messages import Message

__all__ = ["GraderInput", "Score", "TargetClient", "TargetProxyError", "grader", "run"]


class GraderInput:
    """The stdin payload with attribute access; `raw` is the payload dict itself."""

    # Payload fields, readable as attributes (None when the payload lacks them).
    criteria: str
    expected_output: list[dict[str, Any]]
    output_path: str | None
    messages_path: str | None
    messages_json_path: str | None
    trace_path: str | None
    input_files: list[str]
    input: list[dict[str, Any]]
    metadata: dict[str, Any] | None
    trace_summary: dict[str, Any] | None
    token_usage: dict[str, int] | None
    cost_usd: float | None
    duration_ms: int | None
    start_time: str | None
    end_time: str | None
    start_time_ms: int | None
    end_time_ms: int | None
    file_changes: str | None
    test_id: str | None
    agent: str | None

    def __init__(self, payload: dict[str, Any]) -> None:
        self.raw = payload

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not real attributes: payload fields.
        if name == "raw" or name.startswith("__"):
            raise AttributeError(name)
        if name in self.raw:
            return self.raw[name]
        if name in _PAYLOAD_FIELDS:
            return None
        raise AttributeError(f"the grader payload has no field {name!r}")

    @cached_property
    def output(self) -> str | None:
        """The final answer: inline, or read (once) from `output_path` when it was too large."""
        inline = self.raw.get("output")
        if inline is not None or not self.raw.get("output_path"):
            return inline
        text: str = json.loads(Path(self.raw["output_path"]).read_text(encoding="utf-8"))
        return text

    @property
    def answer(self) -> str | None:
        """The final answer's older name (AgentV's graders docs still list it): `output`."""
        return self.output

    @cached_property
    def messages(self) -> list[Message]:
        """The transcript (the input turns, then the agent's): inline when small, else read
        (once) from `messages_json_path`; a payload with neither reads the Parquet transcript
        at `messages_path`, which holds the agent's turns only."""
        from evals_pipeline.models.messages import message_from_wire

        wire = self.raw.get("messages")
        if wire is None and self.raw.get("messages_json_path"):
            wire = json.loads(Path(self.raw["messages_json_path"]).read_text(encoding="utf-8"))
        if wire is None and self.raw.get("messages_path"):
            from evals_pipeline.storage.messages import read_messages

            return read_messages(self.raw["messages_path"])
        return [message_from_wire(m) for m in wire or []]

    @cached_property
    def trace(self) -> dict[str, Any] | None:
        """AgentV's trace (summary, messages, events, metrics): inline, or read (once) from
        `trace_path` when it was too large to send."""
        inline = self.raw.get("trace")
        if inline is not None or not self.raw.get("trace_path"):
            return inline
        loaded: dict[str, Any] = json.loads(Path(self.raw["trace_path"]).read_text("utf-8"))
        return loaded

    @property
    def workspace_path(self) -> Path | None:
        """The agent's workspace folder, when the run had one."""
        value = self.raw.get("workspace_path")
        return Path(value) if value else None

    @property
    def config(self) -> dict[str, Any]:
        """The grader's `config` from the suite (unknown assertion keys included)."""
        return dict(self.raw.get("config") or {})


_PAYLOAD_FIELDS = frozenset(GraderInput.__annotations__)


# One checked statement: (text, passed) or (text, passed, evidence).
Check = tuple[str, bool] | tuple[str, bool, str | None]


@dataclass
class Score:
    """A grader's result: a score in [0, 1], the statements checked, and free-form details.

    Each assertion is `(text, passed)` or `(text, passed, evidence)`.
    """

    score: float
    assertions: Sequence[Check] = field(default_factory=list)
    details: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object the pipeline reads from a grader's stdout."""
        entries = []
        for text, passed, *rest in self.assertions:
            entry: dict[str, Any] = {"text": text, "passed": bool(passed)}
            if rest and rest[0] is not None:
                entry["evidence"] = rest[0]
            entries.append(entry)
        return {"score": self.score, "assertions": entries, "details": self.details}


GraderFunction = Callable[[GraderInput], Any]


def run(
    fn: GraderFunction,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """Read the payload, call `fn`, print its result as JSON; return the exit code.

    An exception prints its traceback and returns 1, which the pipeline records as a grader error
    rather than a score. Streams default to the process's own.
    """
    try:
        payload = json.load(stdin or sys.stdin)
        result = _as_json(fn(GraderInput(payload)), fn)
        text = json.dumps(result, ensure_ascii=False)
    except Exception:
        traceback.print_exc(file=stderr or sys.stderr)
        return 1
    out = stdout or sys.stdout
    out.write(text + "\n")
    out.flush()
    return 0


def grader(fn: GraderFunction) -> GraderFunction:
    """Mark `fn` as the grader; in a script run as the grader command, grade and exit right away."""
    if fn.__module__ == "__main__":
        sys.exit(run(fn))
    return fn


def _as_json(result: Any, fn: GraderFunction) -> dict[str, Any]:
    """Accept what grader authors naturally return: a bool, a number, a Score, a dict, a model."""
    if isinstance(result, bool):
        return Score(1.0 if result else 0.0, [(fn.__name__, result)]).to_json()
    if isinstance(result, int | float):
        return {"score": float(result), "assertions": [], "details": None}
    if isinstance(result, Score):
        return result.to_json()
    if hasattr(result, "model_dump"):
        result = result.model_dump(mode="json")
    if isinstance(result, dict) and ("score" in result or "assertions" in result):
        return {k: result[k] for k in ("score", "assertions", "details") if k in result}
    raise TypeError(
        f"a grader returns a float, bool, Score or dict with score/assertions, not {result!r:.200}"
    )


PROXY_URL_ENV = "AGENTV_TARGET_PROXY_URL"
PROXY_TOKEN_ENV = "AGENTV_TARGET_PROXY_TOKEN"


class TargetProxyError(RuntimeError, EvalsPipelineError):
    """The target proxy refused or failed a call: `status` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class TargetClient:
    """Ask the case's grader target (an LLM) questions through the pipeline's target proxy.

    Only a code grader whose assertion sets `target: true` (or `target: {max_calls: N}`) gets the
    proxy; the pipeline makes the calls with its own keys, counts them and stops at max_calls
    (HTTP 429, raised as TargetProxyError with status 429).
    """

    def __init__(self, url: str, token: str, *, timeout_seconds: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_seconds = timeout_seconds

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TargetClient:
        """The proxy this grader run was given (AGENTV_TARGET_PROXY_URL and _TOKEN)."""
        source = os.environ if env is None else env
        missing = [name for name in (PROXY_URL_ENV, PROXY_TOKEN_ENV) if not source.get(name)]
        if missing:
            raise TargetProxyError(
                f"{' and '.join(missing)} not set: the target proxy is only given to a "
                "code-grader whose assertion has `target: true` (or `target: {max_calls: N}`), "
                "with a grader_target on the agent target"
            )
        return cls(source[PROXY_URL_ENV], source[PROXY_TOKEN_ENV])

    def info(self) -> dict[str, Any]:
        """`{targetName, maxCalls, callCount, availableTargets}`."""
        return self._request("GET", "/info")

    def invoke(
        self,
        question: str,
        system_prompt: str | None = None,
        target: str | None = None,
        *,
        eval_case_id: str | None = None,
        attempt: int | None = None,
    ) -> dict[str, Any]:
        """One question: `{output: [{role, content}], rawText, tokenUsage: {input, output}}`."""
        body: dict[str, Any] = {"question": question}
        if system_prompt is not None:
            body["systemPrompt"] = system_prompt
        if target is not None:
            body["target"] = target
        if eval_case_id is not None:
            body["evalCaseId"] = eval_case_id
        if attempt is not None:
            body["attempt"] = attempt
        return self._request("POST", "/invoke", body)

    def invoke_batch(self, requests: Sequence[str | Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Several questions at once, answered in order; a failed one has `output: []` and
        `rawText: "Error: ..."`. Items are questions, or dicts with `question` and optionally
        `system_prompt` (or `systemPrompt`) and `target`."""
        items = [_batch_item(r) for r in requests]
        answer = self._request("POST", "/invokeBatch", {"requests": items})
        responses: list[dict[str, Any]] = answer.get("responses", [])
        return responses

    def _request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                result: dict[str, Any] = json.loads(response.read() or b"{}")
                return result
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            with contextlib.suppress(ValueError, AttributeError):
                detail = json.loads(detail).get("error", detail)
            raise TargetProxyError(
                f"target proxy {method} {path}: HTTP {exc.code}: {detail}", exc.code
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise TargetProxyError(f"target proxy {method} {path}: {exc}") from None


def _batch_item(item: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        return {"question": item}
    renamed = {"system_prompt": "systemPrompt", "eval_case_id": "evalCaseId"}
    return {renamed.get(k, k): v for k, v in item.items() if v is not None}

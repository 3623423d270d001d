"""What an LLM grader reads as the answer when it holds file blocks (AgentV's preprocessors).

AgentV 4.42.4 (content-preprocessor.ts): when the last assistant message's content is a list of
blocks, the llm-grader's answer is its text blocks and, for each `{type: file, path, media_type}`
block, `[[ file: <path> ]]` and the file's text: converted by the preprocessor for its media
type (a process reading `{path, original_path, media_type}` on stdin, printing the text), else
read as UTF-8. A file that cannot be read or converted adds a `[file preprocessing warning]`
line instead. Relative paths resolve as `content_base` says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.grading.context import GradingContext
from evals_pipeline.grading.grader_process import run_grader
from evals_pipeline.models.assertions import PreprocessorSpec, normalize_media_type

PREPROCESSOR_TIMEOUT_SECONDS = 120.0
_REMOTE = re.compile(r"^[a-z]+://", re.IGNORECASE)


def answer_blocks(ctx: GradingContext) -> list[Any] | None:
    """The last assistant message's content when it is a list of blocks, else None."""
    for message in reversed(ctx.messages):
        if message.role == "assistant" and message.content is not None:
            return message.content if isinstance(message.content, list) else None
    return None


def content_base(ctx: GradingContext) -> Path:
    """Where relative file paths in an answer point: AgentV's workspace when the suite
    configures one, else the target's cwd, else the eval file's folder (where agentv runs)."""
    if ctx.case.workspace is not None and ctx.session.workspace_path:
        return Path(ctx.session.workspace_path)
    cwd = getattr(ctx.case.target, "cwd", None)
    return Path(cwd) if isinstance(cwd, str) and cwd else Path(ctx.case.base_dir)


def preprocessed_answer(ctx: GradingContext, preprocessors: list[PreprocessorSpec]) -> str | None:
    """The answer an LLM grader reads when it holds blocks; None for a plain-text answer."""
    blocks = answer_blocks(ctx)
    if blocks is None:
        return None
    base = content_base(ctx)
    parts: list[str] = []
    warnings: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            text = block.get("text")
            parts.append(text if isinstance(text, str) else "")
        elif block.get("type") == "file":
            text, warning = _file_text(block, preprocessors, base)
            if text:
                parts.append(text)
            if warning:
                warnings.append(warning)
    return "\n".join(part for part in ["\n".join(parts), *warnings] if part)


class _Unreadable(EvalsPipelineError):
    """Why a file block gave no text; it becomes a warning line in the answer."""


def _file_text(
    block: dict[str, Any], preprocessors: list[PreprocessorSpec], base: Path
) -> tuple[str, str | None]:
    """The block's `[[ file: ... ]]` text, or the warning saying why there is none."""
    shown = str(block.get("path", ""))
    media_type = str(block.get("media_type", ""))
    try:
        return f"[[ file: {shown} ]]\n{_read(shown, media_type, preprocessors, base)}", None
    except _Unreadable as exc:
        return "", f"[file preprocessing warning] {shown} ({media_type}): {exc}"


def _read(shown: str, media_type: str, preprocessors: list[PreprocessorSpec], base: Path) -> str:
    if shown.startswith("file://"):
        path = Path(unquote(urlparse(shown).path))
    elif _REMOTE.match(shown):
        raise _Unreadable("remote file paths are not supported for preprocessing")
    else:
        path = base / shown
    wanted = normalize_media_type(media_type)
    spec = next((p for p in preprocessors if normalize_media_type(p.type) == wanted), None)
    if spec is not None:
        return _convert(spec, path, shown, media_type)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _Unreadable(str(exc)) from None
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if b"\0" in raw or "\ufffd" in text:
        raise _Unreadable(
            "default UTF-8 read produced binary or invalid text; configure a preprocessor"
        )
    return text


def _convert(spec: PreprocessorSpec, path: Path, shown: str, media_type: str) -> str:
    """Run the preprocessor on one file; its stdout (trimmed) is the file's text."""
    stdin = json.dumps({"path": str(path), "original_path": shown, "media_type": media_type})
    result = run_grader(
        spec.command,
        cwd=path.parent if path.parent.is_dir() else Path.cwd(),
        timeout_seconds=PREPROCESSOR_TIMEOUT_SECONDS,
        stdin=stdin.encode("utf-8"),
        readable=[path.parent],
    )
    if result.error is not None:
        raise _Unreadable(result.error)
    if result.timed_out:
        raise _Unreadable(f"preprocessor timed out after {PREPROCESSOR_TIMEOUT_SECONDS:g} s")
    if result.exit_code != 0:
        raise _Unreadable(
            result.stderr.strip() or f"preprocessor exited with code {result.exit_code}"
        )
    return result.stdout.decode("utf-8", "replace").strip()

"""Preprocessors: how a file block of the answer becomes text for LLM graders.

Run by grading/preprocessing.py.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PreprocessorSpec(BaseModel):
    """Turns a file in the agent's answer into text for LLM graders (AgentV's preprocessors).

    `type` is a MIME type or a short alias (`xlsx`, `pdf`, `csv`, ...); `command` is an argv
    whose last item is a script file, found like AgentV finds it (from the eval file's folder
    up) and made absolute at load time. It reads `{path, original_path, media_type}` on stdin
    and prints the text.
    """

    model_config = ConfigDict(extra="forbid")

    type: str = Field(min_length=1)
    command: list[str] = Field(min_length=1)


MIME_TYPE_ALIASES: dict[str, str] = {
    "csv": "text/csv",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "htm": "text/html",
    "html": "text/html",
    "json": "application/json",
    "markdown": "text/markdown",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "sql": "application/sql",
    "txt": "text/plain",
    "xhtml": "application/xhtml+xml",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
}
"""AgentV's short names for media types."""


def normalize_media_type(value: str) -> str:
    """A preprocessor `type` or a block's `media_type` in the form they are matched by."""
    normalized = value.strip().lower()
    return MIME_TYPE_ALIASES.get(normalized, normalized)


def merge_preprocessors(
    defaults: list[PreprocessorSpec], own: list[PreprocessorSpec]
) -> list[PreprocessorSpec]:
    """The suite's preprocessors with a grader's own, one per media type (the grader's wins)."""
    merged: dict[str, PreprocessorSpec] = {}
    for spec in [*defaults, *own]:
        merged[normalize_media_type(spec.type)] = spec
    return list(merged.values())

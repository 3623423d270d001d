"""Whether a case expects the agent to change files: only then is an empty final diff a sign the
agent misread the task (attribution's C1 `empty_diff`). A question answered in text needs no diff,
even in a suite whose workspace is shared by tasks that do.

A case expects changes when it has a workspace and one of its graders looks at the files: a
`file-changes` assertion, or a code grader, custom grader or LLM prompt whose text names the
workspace or the file changes (`workspace_path`, `file_changes`, `fileChanges`, ...). A grader
program that cannot be read counts as looking, as before this rule existed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from evals_pipeline.models.assertions import AssertionSpec
from evals_pipeline.models.assertions.code_grader import CodeGraderAssertion
from evals_pipeline.models.assertions.composite import CodeAggregator
from evals_pipeline.models.assertions.custom import CustomAssertion
from evals_pipeline.models.assertions.file_changes import FileChangesAssertion
from evals_pipeline.models.assertions.llm_grader import LlmGraderBase, PromptCommand
from evals_pipeline.models.assertions.spec import CompositeAssertion, walk_assertions
from evals_pipeline.models.case import ResolvedCase

READS_FILES = re.compile(r"workspace|file_?changes", re.IGNORECASE)
"""What a grader's text says when it reads the agent's files: the payload's `workspace_path` and
`file_changes` (camelCase in AgentV's TypeScript SDK), or the prompt's `{{file_changes}}`."""

_MAX_PROGRAM_CHARS = 200_000


def expects_file_changes(case: ResolvedCase) -> bool:
    """Whether an empty diff means the agent did not do the task (see the module docstring)."""
    if case.workspace is None:
        return False
    base_dir = Path(case.base_dir)
    return any(_reads_files(spec, base_dir) for _, spec in walk_assertions(case.assertions))


def _reads_files(spec: AssertionSpec, base_dir: Path) -> bool:
    """Whether this one grader looks at the files (a composite's members are walked apart)."""
    if isinstance(spec, FileChangesAssertion):
        return True
    if isinstance(spec, CompositeAssertion):
        aggregator = spec.aggregator
        return isinstance(aggregator, CodeAggregator) and _program_reads_files(
            shlex.split(aggregator.path), base_dir / (aggregator.cwd or "")
        )
    if isinstance(spec, CodeGraderAssertion | CustomAssertion):
        command = spec.command if isinstance(spec.command, list) else shlex.split(spec.command)
        return _program_reads_files(command, base_dir / (spec.cwd or ""))
    if isinstance(spec, LlmGraderBase):
        prompt = spec.prompt
        if isinstance(prompt, PromptCommand):
            return _program_reads_files(prompt.command, base_dir)
        if prompt is None:
            return False
        file = spec.prompt_file
        text = _read(str(base_dir / file)) if file else prompt
        return text is None or bool(READS_FILES.search(text))
    return False


def _program_reads_files(command: Sequence[str], cwd: Path) -> bool:
    """Whether the command line or a file it names mentions the workspace or the file changes;
    True when it names no file that can be read (nothing to tell it does not)."""
    if READS_FILES.search(" ".join(command)):
        return True
    texts = [_read(str(cwd / arg)) for arg in command if (cwd / arg).is_file()]
    programs = [t for t in texts if t is not None]
    return not programs or any(READS_FILES.search(t) for t in programs)


@lru_cache(maxsize=256)
def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(_MAX_PROGRAM_CHARS)
    except OSError:
        return None

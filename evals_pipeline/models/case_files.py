"""The files a case names as files, found by the case's structure: what the result-cache key
hashes. Text a model or an agent reads (prompts, criteria, expected output, rubric outcomes,
system prompts) is never searched for paths: a prompt naming /etc/shadow must not make the
runner open it.

Two kinds of name: a path field (an input file, a file block, a template, a prompt file, a
turn script) is one path; a command (a target's, a grader's, a hook's, a preprocessor's) is
written by the suite to be run, so the files its words name are what it runs and are hashed
too (`python3 graders/check.py` names `graders/check.py`). A command is not prompt text: the
suite author, who could run any program with it, chose it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from evals_pipeline.models.assertions import (
    AssertionSpec,
    CodeGraderAssertion,
    CompositeAssertion,
    CustomAssertion,
    LlmGraderBase,
    walk_assertions,
)
from evals_pipeline.models.assertions.composite import CodeAggregator, LlmAggregator
from evals_pipeline.models.assertions.llm_grader import PROMPT_FILE_PREFIX
from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message
from evals_pipeline.models.targets import TargetSpec
from evals_pipeline.models.workspace import ResolvedHooks, ResolvedWorkspace

# Target fields holding a command line, and fields holding one path (replay fixtures, a model
# server's turn script, a working folder). `log_dir` is written, not read; `system_prompt` is text.
_TARGET_COMMANDS = ("command", "version_command", "executable")
_TARGET_PATHS = ("cwd", "sessions_dir", "fixtures", "execution_traces", "eval_path")


@dataclass
class NamedFiles:
    """The names of files a part of a case reads: whole paths, and command lines whose words
    may name files."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def command(self, value: str | list[str] | None) -> None:
        if isinstance(value, str):
            self.commands.append(value)
        elif value:
            self.paths.extend(value)  # an argv: each item is one word, spaces and all

    def path(self, value: str | None) -> None:
        if value:
            self.paths.append(value)


def run_files(case: ResolvedCase) -> NamedFiles:
    """What the agent's run reads: its input files and file blocks, its targets' commands and
    files, the workspace's template, local repositories and hooks (and a conversation's graders,
    whose turns the run holds)."""
    named = NamedFiles()
    named.paths.extend(case.input_files)
    named.paths.extend(_block_paths(case.input))
    for target in (case.target, *case.fallbacks):
        _target(target, named)
    _hooks(case.target_hooks, named)
    _workspace(case.workspace, named)
    if case.conversation is not None:
        for turn in case.conversation.turns:
            named.paths.extend(_block_paths(turn.expected_output))
            _graders(turn.assertions, named)
    return named


def grade_files(case: ResolvedCase) -> NamedFiles:
    """What grading reads besides the runs: the graders' scripts, commands and prompt files,
    and the expected output's file blocks."""
    named = NamedFiles()
    named.paths.extend(_block_paths(case.expected_output))
    _graders(case.assertions, named)
    return named


def _target(target: TargetSpec, named: NamedFiles) -> None:
    spec = target.model_dump(mode="json")
    for key in _TARGET_COMMANDS:
        named.command(spec.get(key))
    for key in _TARGET_PATHS:
        named.path(spec.get(key))
    args = spec.get("args")
    if isinstance(args, list):
        named.paths.extend(a for a in args if isinstance(a, str))
    healthcheck = spec.get("healthcheck")
    if isinstance(healthcheck, dict):
        named.command(healthcheck.get("command"))
        named.path(healthcheck.get("cwd"))
    model_server = spec.get("model_server")
    if isinstance(model_server, dict):
        named.path(model_server.get("script"))


def _hooks(hooks: ResolvedHooks | None, named: NamedFiles) -> None:
    if hooks is None:
        return
    for hook in (hooks.before_all, hooks.before_each, hooks.after_each, hooks.after_all):
        if hook is not None:
            named.command(hook.command)
            named.path(hook.cwd)


def _workspace(workspace: ResolvedWorkspace | None, named: NamedFiles) -> None:
    if workspace is None:
        return
    named.path(workspace.template)
    named.paths.extend(repo.source for repo in workspace.repos if not repo.is_remote)
    _hooks(workspace.hooks, named)


def _graders(assertions: list[AssertionSpec], named: NamedFiles) -> None:
    for _, assertion in walk_assertions(assertions):
        if isinstance(assertion, CodeGraderAssertion | CustomAssertion):
            named.command(assertion.command)
            named.path(assertion.cwd)
        if isinstance(assertion, CodeGraderAssertion | LlmGraderBase):
            for preprocessor in assertion.preprocessors:
                named.command(preprocessor.command)
        if isinstance(assertion, LlmGraderBase):
            named.path(assertion.prompt_file)
            if assertion.prompt_command is not None:
                named.command(assertion.prompt_command.command)
        if isinstance(assertion, CompositeAssertion):
            aggregator = assertion.aggregator
            if isinstance(aggregator, CodeAggregator):
                named.command(aggregator.path)  # a shell command, run from the eval file's folder
            elif isinstance(aggregator, LlmAggregator) and (aggregator.prompt or "").startswith(
                PROMPT_FILE_PREFIX
            ):
                named.path((aggregator.prompt or "")[len(PROMPT_FILE_PREFIX) :])


def _block_paths(messages: Iterable[Message]) -> Iterator[str]:
    """The resolved path of every file and image block of `messages` (MessageBuilder writes
    it as `path`); the text around them is never read for names."""
    for message in messages:
        if isinstance(message.content, list):
            yield from _paths_of_blocks(message.content)


def _paths_of_blocks(blocks: list[Any]) -> Iterator[str]:
    for block in blocks:
        if (
            isinstance(block, dict)
            and block.get("type") in ("file", "image")
            and isinstance(block.get("path"), str)
        ):
            yield block["path"]

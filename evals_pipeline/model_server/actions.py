"""Abstract script actions → the native tool call each CLI understands, from the tools it declared.

claude declares `Write`/`Bash`, pi `write`/`bash`, codex `apply_patch` (custom) and
`exec_command`; older or unknown codex set-ups fall back to `shell_command`, `shell` or the
built-in `local_shell`. One script therefore drives all three CLIs.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from evals_pipeline.errors import EvalsPipelineError
from evals_pipeline.model_server.exchange import ToolKind
from evals_pipeline.model_server.script import RawCall, RunBash, WriteFile

CallKind = Literal["function", "custom", "local_shell"]

SHELL_TOOLS = ("Bash", "bash", "exec_command", "shell_command", "shell", "local_shell")
WRITE_TOOLS = ("Write", "write", "apply_patch")
DEFAULT_BASH_DESCRIPTION = "Run command"


class Unresolvable(EvalsPipelineError):
    """The request declares no tool that can carry out a scripted action."""


@dataclass(frozen=True)
class NativeCall:
    """A tool call in the requesting CLI's own terms."""

    call_id: str
    name: str
    kind: CallKind
    arguments: dict[str, Any] = field(default_factory=dict)
    """Function arguments; for `local_shell` the exec action's `command` argv."""
    input: str | None = None
    """A custom tool's raw input (apply_patch's patch text)."""

    @property
    def payload(self) -> str:
        """What the model "writes" for this call: raw input, else the arguments as JSON."""
        if self.kind == "custom":
            return self.input or ""
        return json.dumps(self.arguments, ensure_ascii=False)

    def to_log(self) -> dict[str, Any]:
        """The call as it goes into the request log."""
        entry: dict[str, Any] = {"id": self.call_id, "name": self.name, "kind": self.kind}
        if self.kind == "custom":
            entry["input"] = self.input
        else:
            entry["arguments"] = self.arguments
        return entry


def resolve(
    action: WriteFile | RunBash | RawCall,
    tools: Mapping[str, ToolKind],
    cwd: str | None,
    call_id: str,
) -> NativeCall:
    """The native call for one scripted action against the request's declared tools."""
    for name, kind in tools.items():
        if name in action.overrides:
            return _explicit(call_id, name, kind, action.overrides[name], None)
    if isinstance(action, WriteFile):
        return _write(action, tools, cwd, call_id)
    if isinstance(action, RunBash):
        call = _shell(action.command, action.description, tools, call_id)
        if call is None:
            raise Unresolvable(f"`bash` needs one of the tools {', '.join(SHELL_TOOLS)}")
        return call
    # An undeclared tool is still called: the CLI's own "unknown tool" handling may be the test.
    return _explicit(
        call_id, action.tool, tools.get(action.tool, "function"), action.arguments, action.input
    )


def _explicit(
    call_id: str, name: str, kind: ToolKind, arguments: dict[str, Any], raw: str | None
) -> NativeCall:
    if name == "local_shell" and kind == "builtin":
        argv = arguments.get("command")
        if not isinstance(argv, list) or not all(isinstance(arg, str) for arg in argv):
            raise Unresolvable("a `local_shell` override needs `command` as a list of strings")
        return NativeCall(call_id, name, "local_shell", {"command": argv})
    if kind == "custom":
        text = raw if raw is not None else arguments.get("input")
        if not isinstance(text, str):
            text = json.dumps(arguments, ensure_ascii=False)
        return NativeCall(call_id, name, "custom", input=text)
    if raw is not None and "input" not in arguments:
        arguments = {**arguments, "input": raw}
    return NativeCall(call_id, name, "function", dict(arguments))


def _write(
    action: WriteFile, tools: Mapping[str, ToolKind], cwd: str | None, call_id: str
) -> NativeCall:
    if "Write" in tools:
        # claude's Write rejects relative paths; it states its cwd in the system prompt.
        path = action.path
        if cwd and not posixpath.isabs(path):
            path = posixpath.normpath(posixpath.join(cwd, path))
        return NativeCall(
            call_id, "Write", "function", {"file_path": path, "content": action.content}
        )
    if "write" in tools:
        return NativeCall(
            call_id, "write", "function", {"path": action.path, "content": action.content}
        )
    if "apply_patch" in tools:
        envelope = add_file_patch(action.path, action.content)
        if tools["apply_patch"] == "custom":
            return NativeCall(call_id, "apply_patch", "custom", input=envelope)
        return NativeCall(call_id, "apply_patch", "function", {"input": envelope})
    call = _shell(heredoc(action.path, action.content), None, tools, call_id)
    if call is None:
        raise Unresolvable(
            f"`write_file` needs one of the tools {', '.join(WRITE_TOOLS + SHELL_TOOLS)}"
        )
    return call


def _shell(
    command: str, description: str | None, tools: Mapping[str, ToolKind], call_id: str
) -> NativeCall | None:
    if "Bash" in tools:
        arguments = {"command": command, "description": description or DEFAULT_BASH_DESCRIPTION}
        return NativeCall(call_id, "Bash", "function", arguments)
    if "bash" in tools:
        return NativeCall(call_id, "bash", "function", {"command": command})
    if "exec_command" in tools:
        return NativeCall(call_id, "exec_command", "function", {"cmd": command})
    if "shell_command" in tools:
        return NativeCall(call_id, "shell_command", "function", {"command": command})
    if "shell" in tools:
        return NativeCall(call_id, "shell", "function", {"command": ["bash", "-lc", command]})
    if tools.get("local_shell") == "builtin":
        return NativeCall(
            call_id, "local_shell", "local_shell", {"command": ["bash", "-lc", command]}
        )
    return None


def add_file_patch(path: str, content: str) -> str:
    """An apply_patch envelope that creates `path` with `content` (codex's freeform patch format)."""
    lines = content.removesuffix("\n").split("\n") if content else []
    body = "".join(f"+{line}\n" for line in lines)
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


def heredoc(path: str, content: str) -> str:
    """A shell command that writes `content` to `path` exactly, for agents with only a shell tool."""
    target = shlex.quote(path)
    directory = posixpath.dirname(path)
    prefix = f"mkdir -p {shlex.quote(directory)} && " if directory else ""
    if not content.endswith("\n"):
        # A heredoc always ends the file with a newline; printf keeps the content byte-exact.
        return f"{prefix}printf '%s' {shlex.quote(content)} > {target}"
    delimiter = "EOF"
    while delimiter in content.split("\n"):
        delimiter += "_"
    return f"{prefix}cat > {target} <<'{delimiter}'\n{content}{delimiter}"

"""Abstract actions resolved against each CLI's declared tools (agent-clis.md 8.3, 8.4)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from evals_pipeline.model_server.actions import (
    Unresolvable,
    add_file_patch,
    heredoc,
    resolve,
)
from evals_pipeline.model_server.exchange import ToolKind
from evals_pipeline.model_server.script import Action

CLAUDE: dict[str, ToolKind] = {"Bash": "function", "Read": "function", "Write": "function"}
PI: dict[str, ToolKind] = {
    "read": "function",
    "bash": "function",
    "edit": "function",
    "write": "function",
}
CODEX: dict[str, ToolKind] = {
    "exec_command": "function",
    "apply_patch": "custom",
    "tool_search": "builtin",
    "web_search": "builtin",
}


def action(data: dict[str, Any]) -> Action:
    return TypeAdapter(Action).validate_python(data)


WRITE = {"action": "write_file", "path": "pkg/hello.py", "content": "print('hi')\n"}
BASH = {"action": "bash", "command": "python3 hello.py"}


def test_claude_write_gets_an_absolute_path_from_the_cwd() -> None:
    call = resolve(action(WRITE), CLAUDE, "/work/case", "toolu_1")
    assert (call.name, call.kind) == ("Write", "function")
    assert call.arguments == {"file_path": "/work/case/pkg/hello.py", "content": "print('hi')\n"}
    absolute = resolve(action({**WRITE, "path": "/elsewhere/x.py"}), CLAUDE, "/work/case", "t")
    assert absolute.arguments["file_path"] == "/elsewhere/x.py"


def test_claude_bash_has_a_description() -> None:
    default = resolve(action(BASH), CLAUDE, None, "t")
    assert default.arguments == {"command": "python3 hello.py", "description": "Run command"}
    given = resolve(action({**BASH, "description": "Run it"}), CLAUDE, None, "t")
    assert given.arguments["description"] == "Run it"


def test_pi_tools_take_relative_paths() -> None:
    write = resolve(action(WRITE), PI, "/work/case", "c")
    assert (write.name, write.arguments) == (
        "write",
        {"path": "pkg/hello.py", "content": "print('hi')\n"},
    )
    bash = resolve(action(BASH), PI, "/work/case", "c")
    assert (bash.name, bash.arguments) == ("bash", {"command": "python3 hello.py"})


def test_codex_write_is_a_freeform_apply_patch() -> None:
    call = resolve(action(WRITE), CODEX, "/work/case", "c")
    assert (call.name, call.kind) == ("apply_patch", "custom")
    assert call.input == (
        "*** Begin Patch\n*** Add File: pkg/hello.py\n+print('hi')\n*** End Patch\n"
    )
    assert call.payload == call.input
    bash = resolve(action(BASH), CODEX, None, "c")
    assert (bash.name, bash.kind, bash.arguments) == (
        "exec_command",
        "function",
        {"cmd": "python3 hello.py"},
    )


def test_apply_patch_as_a_function_tool_wraps_the_envelope() -> None:
    call = resolve(action(WRITE), {"apply_patch": "function", "shell": "function"}, None, "c")
    assert call.kind == "function"
    assert call.arguments == {"input": add_file_patch("pkg/hello.py", "print('hi')\n")}


@pytest.mark.parametrize(
    ("tools", "name", "kind", "arguments"),
    [
        ({"shell_command": "function"}, "shell_command", "function", {"command": "ls -a"}),
        ({"shell": "function"}, "shell", "function", {"command": ["bash", "-lc", "ls -a"]}),
        (
            {"local_shell": "builtin"},
            "local_shell",
            "local_shell",
            {"command": ["bash", "-lc", "ls -a"]},
        ),
        (
            {"shell_command": "function", "exec_command": "function"},
            "exec_command",
            "function",
            {"cmd": "ls -a"},
        ),
    ],
)
def test_codex_shell_fallbacks(
    tools: dict[str, ToolKind], name: str, kind: str, arguments: dict[str, object]
) -> None:
    call = resolve(action({"action": "bash", "command": "ls -a"}), tools, None, "c")
    assert (call.name, call.kind, call.arguments) == (name, kind, arguments)


def test_write_without_a_write_tool_goes_through_the_shell() -> None:
    call = resolve(action(WRITE), {"shell": "function"}, None, "c")
    assert call.name == "shell"
    assert call.arguments["command"] == ["bash", "-lc", heredoc("pkg/hello.py", "print('hi')\n")]


@pytest.mark.parametrize(
    "content",
    ["print('hi')\n", "no trailing newline", "EOF\nline with 'quotes' and $HOME\n", "", "a\n\nb\n"],
)
def test_heredoc_writes_the_content_exactly(tmp_path: Path, content: str) -> None:
    subprocess.run(["bash", "-c", heredoc("sub/dir/f.txt", content)], cwd=tmp_path, check=True)
    assert (tmp_path / "sub" / "dir" / "f.txt").read_text() == content


def test_add_file_patch_edge_cases() -> None:
    assert add_file_patch("e.txt", "") == "*** Begin Patch\n*** Add File: e.txt\n*** End Patch\n"
    assert add_file_patch("b.txt", "a\n\nb") == (
        "*** Begin Patch\n*** Add File: b.txt\n+a\n+\n+b\n*** End Patch\n"
    )


def test_first_declared_override_wins() -> None:
    data = {
        **BASH,
        "overrides": {
            "bash": {"command": "pi-specific"},
            "Bash": {"command": "claude-specific", "timeout": 5000},
        },
    }
    claude = resolve(action(data), CLAUDE, None, "t")
    assert (claude.name, claude.arguments) == (
        "Bash",
        {"command": "claude-specific", "timeout": 5000},
    )
    # pi declares `read` and `bash` before `write`: `bash` is the first declared with an override.
    pi = resolve(action(data), PI, None, "c")
    assert (pi.name, pi.arguments) == ("bash", {"command": "pi-specific"})
    # No override for codex's tools: the abstract rule applies.
    assert resolve(action(data), CODEX, None, "c").arguments == {"cmd": "python3 hello.py"}


def test_override_for_a_custom_tool_is_raw_input() -> None:
    data = {**WRITE, "overrides": {"apply_patch": {"input": "*** Begin Patch\n*** End Patch\n"}}}
    call = resolve(action(data), CODEX, None, "c")
    assert (call.kind, call.input) == ("custom", "*** Begin Patch\n*** End Patch\n")


def test_raw_calls() -> None:
    read = resolve(
        action({"action": "call", "tool": "Read", "arguments": {"file_path": "/x"}}),
        CLAUDE,
        None,
        "t",
    )
    assert (read.name, read.kind, read.arguments) == ("Read", "function", {"file_path": "/x"})
    patch = resolve(
        action({"action": "call", "tool": "apply_patch", "input": "P"}), CODEX, None, "c"
    )
    assert (patch.kind, patch.input) == ("custom", "P")
    undeclared = resolve(
        action({"action": "call", "tool": "Nope", "arguments": {"a": 1}}), PI, None, "c"
    )
    assert (undeclared.name, undeclared.kind, undeclared.arguments) == (
        "Nope",
        "function",
        {"a": 1},
    )


def test_unresolvable_actions_say_what_is_missing() -> None:
    with pytest.raises(Unresolvable, match="`bash` needs one of the tools Bash, bash"):
        resolve(action(BASH), {"Read": "function"}, None, "t")
    with pytest.raises(Unresolvable, match="`write_file` needs one of the tools Write, write"):
        resolve(action(WRITE), {"Read": "function"}, None, "t")

"""The input as AgentV's prompt-builder renders it for LLM providers (`lm` mode)."""

from __future__ import annotations

from evals_pipeline.models.messages import Message
from evals_pipeline.suites.prompt import (
    DEFAULT_SYSTEM_PROMPT,
    ChatPrompt,
    chat_prompt,
    render_prompt,
)

FILE = {"type": "file", "value": "docs/a.md", "path": "/abs/docs/a.md", "text": "  A\nB  \n"}


def test_one_message_is_the_user_turn_under_the_default_system_prompt() -> None:
    prompt = chat_prompt([Message(role="user", content=[FILE, {"type": "text", "value": "Sum?"}])])
    assert prompt == ChatPrompt(
        DEFAULT_SYSTEM_PROMPT, (("user", '<file path="docs/a.md">\nA\nB\n</file>\n\nSum?'),)
    )
    # Agents and commands get a reference to the absolute path instead.
    assert render_prompt([Message(role="user", content=[FILE])]) == '<file: path="/abs/docs/a.md">'


def test_a_conversation_keeps_roles_and_marks_late_system_and_tool_messages() -> None:
    prompt = chat_prompt(
        [
            Message(role="system", content="Be terse."),
            Message(role="system", content="Be kind."),
            Message(role="user", content="Hi"),
            Message(role="assistant", content="Hello"),
            Message(role="tool", content="42"),
            Message(role="system", content="Late rule."),
            Message(role="user", content={"q": 1}),
        ]
    )
    assert prompt.system == "Be terse.\n\nBe kind."
    assert prompt.turns == (
        ("user", "Hi"),
        ("assistant", "Hello"),
        ("assistant", "@[Tool]:\n42"),
        ("assistant", "@[System]:\nLate rule."),
        ("user", '{\n  "q": 1\n}'),
    )


def test_a_system_message_and_a_question_are_two_turns() -> None:
    prompt = chat_prompt(
        [Message(role="system", content="Pirate."), Message(role="user", content="Greet me.")]
    )
    assert prompt == ChatPrompt("Pirate.", (("user", "Greet me."),))

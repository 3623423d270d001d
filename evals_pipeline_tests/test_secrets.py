"""Secrets known to a run are scrubbed from what the pipeline stores."""

from __future__ import annotations

from pathlib import Path

from evals_pipeline.secrets import REDACTED, Redactor, secret_values


def test_secret_values_come_from_secret_looking_names() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-123456789",
        "GITHUB_TOKEN": "ghp_abcdefghijk",
        "HOME": "/home/someone-long",
        "SHORT_KEY": "abc",
    }
    values = secret_values(env, extra=["target-key-987654", None])
    assert set(values) == {"sk-ant-123456789", "ghp_abcdefghijk", "target-key-987654"}


def test_longest_secret_is_replaced_first() -> None:
    redactor = Redactor(secret_values({}, extra=["abcdefgh", "abcdefgh-and-more"]))
    assert redactor.text("x abcdefgh-and-more y abcdefgh") == f"x {REDACTED} y {REDACTED}"


def test_files_are_scrubbed_in_place(tmp_path: Path) -> None:
    stream = tmp_path / "stdout.jsonl"
    stream.write_text('{"key": "sk-secret-value-1"}\n{"other": 1}\n')
    Redactor(["sk-secret-value-1"]).file(stream)
    assert stream.read_text() == f'{{"key": "{REDACTED}"}}\n{{"other": 1}}\n'

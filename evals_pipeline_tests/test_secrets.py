"""Secrets known to a run are scrubbed from what the pipeline stores."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pyarrow.parquet as pq

from evals_pipeline.secrets import (
    REDACTED,
    Redactor,
    note_interpolated,
    restore_slots,
    run_redactor,
    secret_values,
)


def test_secret_values_come_from_secret_looking_names() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-123456789",
        "GITHUB_TOKEN": "ghp_abcdefghijk",
        "HOME": "/home/someone-long",
        "SHORT_KEY": "abc",
    }
    values = secret_values(env, extra=["target-key-987654", None])
    assert set(values) == {"sk-ant-123456789", "ghp_abcdefghijk", "target-key-987654"}


def test_credentials_in_a_proxy_or_index_url_are_secrets(monkeypatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://corp-user:pr0xy-pa%24%24@proxy.corp:3128")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "https://a.corp/simple https://u:pw@b.corp/simple")
    monkeypatch.setenv("UV_INDEX_URL", "https://tok_0123456789@pypi.fury.io/corp/")
    monkeypatch.setenv("NO_PROXY", "localhost")
    text = (
        "ProxyError: http://corp-user:pr0xy-pa%24%24@proxy.corp:3128 refused pr0xy-pa$$; "
        "index https://u:pw@b.corp/simple and https://tok_0123456789@pypi.fury.io/corp/"
    )
    scrubbed = run_redactor().text(text)
    for secret in ("pr0xy-pa%24%24", "pr0xy-pa$$", "u:pw", "tok_0123456789"):
        assert secret not in scrubbed, scrubbed
    # Where the proxy is stays readable; a short password alone is not scrubbed everywhere.
    assert "@proxy.corp:3128" in scrubbed and "localhost" not in secret_values()
    assert "pw" not in secret_values()


def test_longest_secret_is_replaced_first() -> None:
    redactor = Redactor(secret_values({}, extra=["abcdefgh", "abcdefgh-and-more"]))
    assert redactor.text("x abcdefgh-and-more y abcdefgh") == f"x {REDACTED} y {REDACTED}"


def test_a_json_text_holds_a_secret_as_is_or_escaped() -> None:
    redactor = Redactor(['sk-"quoted"-value'])
    escaped = json.dumps({"error": 'key sk-"quoted"-value'})
    assert redactor.holds_secret(escaped) and redactor.json(escaped) != escaped
    assert not redactor.holds_secret(json.dumps({"error": "no key"}))
    assert not Redactor([]).holds_secret(escaped)


def test_files_are_scrubbed_in_place(tmp_path: Path) -> None:
    stream = tmp_path / "stdout.jsonl"
    stream.write_text('{"key": "sk-secret-value-1"}\n{"other": 1}\n')
    Redactor(["sk-secret-value-1"]).file(stream)
    assert stream.read_text() == f'{{"key": "{REDACTED}"}}\n{{"other": 1}}\n'


def test_an_interpolated_value_is_secret_whatever_its_name_unless_public() -> None:
    note_interpolated("DB_PASS", "pw4D")  # any name, from four characters
    note_interpolated("MODEL_NAME", "gpt-visible", public={"MODEL_NAME"})
    note_interpolated("RETRIES", "3")  # too short to hide: kept as it is
    redactor = run_redactor()
    assert redactor.text("pw4D gpt-visible 3") == "[REDACTED:DB_PASS] gpt-visible 3"
    # In a JSON record only the strings change, never its keys or syntax.
    assert redactor.json('{"pw4D": "x pw4D", "n": 1}') == '{"pw4D": "x [REDACTED:DB_PASS]", "n": 1}'


def test_every_form_of_a_secret_is_scrubbed() -> None:
    secret = 'sk-te"st\\sec/ret+=42'
    redactor = Redactor([], {"PLANTED": secret})
    raw = secret.encode()
    forms = [
        secret,
        json.dumps(secret)[1:-1],
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        quote(secret, safe="").lower(),
        raw.hex(),
        raw.hex().upper(),
    ]
    # Base64 of the secret inside a longer blob, at each alignment, in both alphabets.
    for prefix in (b"", b"a", b"ab", b"abc"):
        forms.append(base64.b64encode(prefix + raw + b"tail").decode())
        forms.append(base64.urlsafe_b64encode(prefix + raw + b"tail").decode())
    for form in forms:
        scrubbed = redactor.text(f"<{form}>")
        assert "[REDACTED:PLANTED]" in scrubbed and form not in scrubbed, form
        assert redactor.holds_secret(form)
        assert b"[REDACTED:PLANTED]" in redactor.scrub_bytes(form.encode())
    # Cut at a line end (a terminal's wrap): less than half of it stays.
    cut = redactor.text(secret[:7] + "\n" + secret[7:])
    assert cut == secret[:7] + "\n" + secret[7 : len(secret) // 2] + "[REDACTED:PLANTED]"


def test_a_stored_record_gets_its_secrets_back_only_where_they_were_scrubbed() -> None:
    secret = 'sk-te"st\\sec/ret+='
    redactor = Redactor([], {"PLANTED": secret})
    record = {
        "command": f"agent --key {secret} --again {secret}",
        "input": ["[REDACTED:PLANTED] written by the suite", {"x": f"{secret}[REDACTED:PLANTED]"}],
        "n": 3,
    }
    text, slots = redactor.json_slots(json.dumps(record))
    assert secret not in text and json.dumps(secret)[1:-1] not in text
    os.environ["PLANTED"] = secret
    try:
        data = json.loads(json.dumps(json.loads(text)))  # as stored and read back
        restore_slots(data, json.loads(json.dumps(slots)))
    finally:
        del os.environ["PLANTED"]
    assert data == record
    # A marker with no slot stays text, whatever the environment holds.
    assert "[REDACTED:PLANTED] written" in data["input"][0]


LEAKY_AGENT = """\
import json, sys
prompt, output, token = sys.argv[1:4]
with open({received!r}, "w") as f:
    f.write(token)
print("the token is", token)
print("stderr has", token, file=sys.stderr)
if "fail" in prompt:
    sys.exit(1)
json.dump({{"text": "I used " + token + " as told"}}, open(output, "w"))
"""

LEAKY_SUITE = """\
name: leaky
targets:
  - name: echoer
    provider: cli
    command: "{python} {agent} {{PROMPT}} {{OUTPUT_FILE}} ${{{{ MY_API_TOKEN }}}}"
tests:
  - id: uses-token
    input: "Use the token ${{{{ MY_API_TOKEN }}}} and say what you did."
    assertions:
      - type: contains
        value: as told
  - id: fails-with-token
    input: "Use ${{{{ MY_API_TOKEN }}}} then fail."
    assertions:
      - type: contains
        value: as told
"""


def _stored_text(path: Path) -> bytes:
    """A stored file's bytes, and a Parquet file's rows decoded (its pages are compressed)."""
    data = path.read_bytes()
    if path.suffix == ".parquet":
        rows = pq.read_table(path).to_pylist()
        data += json.dumps(rows, default=str, ensure_ascii=False).encode()
    return data


def test_a_suites_short_token_is_in_nothing_stored(tmp_path: Path) -> None:
    token = "tk9Q2x"
    received = tmp_path / "received.txt"
    agent = tmp_path / "project" / "agent.py"
    agent.parent.mkdir()
    (agent.parent / ".git").mkdir()
    agent.write_text(LEAKY_AGENT.format(received=str(received)))
    suite = agent.parent / "leaky.eval.yaml"
    suite.write_text(LEAKY_SUITE.format(python=sys.executable, agent=agent))
    home = tmp_path / "state"
    env = {
        **os.environ,
        "MY_API_TOKEN": token,
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", str(suite)],
        env=env,
        cwd=agent.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The agent got the real value (its command was restored from the stored case) ...
    assert received.read_text() == token
    # ... and no file the run stored holds it: prompts, stdout, Parquet, the instance's logs.
    stored = [p for p in home.rglob("*") if p.is_file()]
    assert len(stored) > 20
    leaks = [str(p) for p in stored if token.encode() in _stored_text(p)]
    assert leaks == []
    stdout = next(p for p in stored if p.name == "stdout.txt")
    assert "the token is [REDACTED:MY_API_TOKEN]" in stdout.read_text()
    report = next(p for p in stored if p.name == "summary.md").read_text()
    assert "uses-token" not in report and "fails-with-token" in report

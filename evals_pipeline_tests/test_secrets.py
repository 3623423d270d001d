"""Secrets known to a run are scrubbed from what the pipeline stores."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pyarrow.parquet as pq

from evals_pipeline.models.case import ResolvedCase
from evals_pipeline.models.messages import Message
from evals_pipeline.sandbox.launch import WRITABLE_VAR
from evals_pipeline.secrets import (
    LONG_TEXT,
    REDACTED,
    Redactor,
    note_interpolated,
    restore_slots,
    run_redactor,
    secret_forms,
    secret_values,
)
from evals_pipeline.storage.record_reader import RecordReader
from evals_pipeline.storage.records import read_record_slots, write_records
from evals_pipeline.suites.loader import load_suite
from evals_pipeline.suites.target_catalog import load_targets_file


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


def test_a_number_or_boolean_setting_is_not_secret_unless_its_name_says_so() -> None:
    note_interpolated("LISTEN_PORT", "18080")
    note_interpolated("DB_PIN_PASS", "24680")
    assert run_redactor().text("18080 24680") == "18080 [REDACTED:DB_PIN_PASS]"


def test_public_env_in_a_suite_or_targets_file_keeps_a_value_visible(tmp_path: Path) -> None:
    (tmp_path / "public.eval.yaml").write_text(
        "public_env: [SHOWN_MODEL_NAME]\n"
        "targets:\n"
        "  - name: a\n"
        "    provider: cli\n"
        '    command: "agent --model ${{ SHOWN_MODEL_NAME }} --pass ${{ HIDDEN_DB_PASS }}"\n'
        "tests:\n"
        "  - id: t\n"
        '    input: "hi"\n'
        '    criteria: "says hi"\n'
    )
    env = {"SHOWN_MODEL_NAME": "model-shown", "HIDDEN_DB_PASS": "pw-hidden"}
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "public_env: [SHOWN_REGION]\n"
        "targets:\n"
        "  - name: b\n"
        "    provider: cli\n"
        '    command: "agent --region ${{ SHOWN_REGION }} ${{ HIDDEN_TOKEN_B }}"\n'
    )
    env |= {"SHOWN_REGION": "region-shown", "HIDDEN_TOKEN_B": "tok-hidden"}
    with _environment(env):
        loaded = load_suite(tmp_path / "public.eval.yaml")
        load_targets_file(targets)
    # Our own key: known, so neither ignored nor "unknown" (the other warnings: no `agent`).
    assert not [w for w in loaded.warnings if "public_env" in w.message]
    assert loaded.suite.public_env == ["SHOWN_MODEL_NAME"]
    text = run_redactor().text("model-shown pw-hidden region-shown tok-hidden")
    assert text == ("model-shown [REDACTED:HIDDEN_DB_PASS] region-shown [REDACTED:HIDDEN_TOKEN_B]")


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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


def test_a_stored_case_keeps_its_markers_and_gets_its_command_back(
    tmp_path: Path, monkeypatch
) -> None:
    """The records a case step stores and the next step reads: the interpolated key comes back
    in the command, a marker in the input, criteria or expected output stays text."""
    monkeypatch.setenv("SOME_KEY", PLANTED)
    note_interpolated("SOME_KEY", PLANTED)
    case = ResolvedCase.model_validate(
        {
            "suite": "s",
            "suite_path": str(tmp_path / "s.eval.yaml"),
            "case_key": "c",
            "test_id": "c",
            "agent": "a",
            "target": {"name": "a", "provider": "cli", "command": f"run --key '{PLANTED}'"},
            "input": [Message(role="user", content=f"{MARKER} and {PLANTED}")],
            "prompt": MARKER,
            "criteria": f"holds {MARKER}",
            "expected_output": [Message(role="assistant", content=MARKER)],
            "base_dir": str(tmp_path),
        }
    )
    path = tmp_path / "records.parquet"
    write_records([("c", case)], path, slots=True)
    assert PLANTED.encode() not in _stored_text(path)
    [(_, text, slots)] = read_record_slots(path)
    read = RecordReader(ResolvedCase).read(text, slots)
    assert read == case
    assert read.criteria == f"holds {MARKER}" and read.prompt == MARKER
    assert read.target.command == f"run --key '{PLANTED}'"  # type: ignore[union-attr]
    # Read without its slots (another step's records), nothing is put back.
    assert PLANTED not in RecordReader(ResolvedCase).read(text).model_dump_json()


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
    # The agent notes what it got in a folder of its own, which the sandbox lets it write.
    observed = tmp_path / "observed"
    observed.mkdir()
    received = observed / "received.txt"
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
        WRITABLE_VAR: str(observed),
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


PLANTED = 'sk-te"st\\sec/ret+=Planted9'
DB_PASS = "pw4Db"
MARKER = "[REDACTED:SOME_KEY]"

HOSTILE_AGENT = """\
import base64, json, os, sys
from urllib.parse import quote, quote_plus
prompt_file, output, test_id, key, db_pass, *files = sys.argv[1:]
prompt = open(prompt_file).read()
got = {{"prompt": prompt, "key": key, "db_pass": db_pass,
        "files": [open(f).read() for f in files]}}
json.dump(got, open(os.path.join({received!r}, test_id + ".json"), "w"))
raw = key.encode()
said = " | ".join([
    "url " + quote(key, safe=""), "plus " + quote_plus(key),
    "b64 " + base64.b64encode(b"lead:" + raw).decode(),
    "b64url " + base64.urlsafe_b64encode(b"ab" + raw + b"!").decode(),
    "hex " + raw.hex(), "pass " + db_pass,
])
print("raw", key, said)
print("stderr", key, db_pass, file=sys.stderr)
json.dump({{"output": [{{"role": "assistant", "content": "echo: " + prompt + " | " + said,
    "tool_calls": [{{"tool": "Bash", "input": {{"command": "curl -H 'k: " + key + "' -u " + db_pass}},
                    "output": key}}]}}]}}, open(output, "w"))
"""

HOSTILE_TARGET = """\
targets:
  - name: echoer
    provider: cli
    command: "{python} {agent} {{PROMPT_FILE}} {{OUTPUT_FILE}} {{EVAL_ID}} '${{{{ SOME_KEY }}}}' ${{{{ DB_PASS }}}} {{FILES}}"
"""

MARKER_SUITE = (
    HOSTILE_TARGET
    + """\
tests:
  - id: inline
    input: "Say [REDACTED:SOME_KEY] back."
    criteria: "The answer holds [REDACTED:SOME_KEY]."
    expected_output: "[REDACTED:SOME_KEY]"
    input_files: [attached.txt]
    assertions:
      - type: contains
        value: "Say [REDACTED:SOME_KEY] back."
"""
)

DATASET_ROW = {
    "id": "row",
    "input": "Row says [REDACTED:SOME_KEY].",
    "criteria": "[REDACTED:SOME_KEY]",
    "assertions": [{"type": "contains", "value": "Row says [REDACTED:SOME_KEY]"}],
}


def _planted_forms() -> dict[str, bytes]:
    """Each form the hostile agent prints the planted secret in, as a reader would search it."""
    raw = PLANTED.encode()
    forms = {
        "raw": raw,
        "json": json.dumps(PLANTED)[1:-1].encode(),
        "url": quote(PLANTED, safe="").encode(),
        "url_plus": quote_plus(PLANTED).encode(),
        "hex": raw.hex().encode(),
        "db_pass": DB_PASS.encode(),
    }
    # The interior of each base64 blob the agent printed: whatever encodes only the secret.
    blob = base64.b64encode(b"lead:" + raw)
    forms["base64"] = blob[8:-8]
    blob = base64.urlsafe_b64encode(b"ab" + raw + b"!")
    forms["base64url"] = blob[4:-4]
    return forms


def test_every_form_of_a_secret_is_found_in_a_long_text() -> None:
    """A long text (a 10 MB transcript) is searched for all forms at once (RE2) before form by
    form: no form of a secret of RE2's special, non-ASCII or control characters slips by."""
    secret = "k3y.+*?()|[]{}^$\\ \t\x01_äö€😀-x"
    redactor = Redactor([], {"PLANTED": secret})
    filler = "step: " + "x" * (LONG_TEXT // 2)
    for form in secret_forms(secret):
        text = f"{filler}<{form}>{filler}"
        assert "[REDACTED:PLANTED]" in redactor.text(text) and form not in redactor.text(text)
        assert redactor.holds_secret(text), form
        assert b"[REDACTED:PLANTED]" in redactor.scrub_bytes(text.encode()), form
    clean = (filler * 2).encode()
    assert redactor.scrub_bytes(clean) is clean and not redactor.holds_secret(clean.decode())


def test_markers_reach_the_agent_as_written_and_no_form_of_a_secret_is_stored(
    tmp_path: Path,
) -> None:
    """A suite contributor's `[REDACTED:SOME_KEY]` in a test, a dataset row or an attached file
    reaches the agent as that text, while the target's `${{ SOME_KEY }}` gets the value; and
    whatever form the agent echoes the secrets in (and DB_PASS's short value), no file of the
    storage root, the Dagster home or the report folder holds it."""
    received = tmp_path / "received"  # the agent's notes: writable in its sandbox
    received.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    agent = project / "agent.py"
    agent.write_text(HOSTILE_AGENT.format(received=str(received)))
    (project / "attached.txt").write_text("File says [REDACTED:SOME_KEY].")
    target = HOSTILE_TARGET.format(python=sys.executable, agent=agent)
    (project / "markers.eval.yaml").write_text(
        MARKER_SUITE.format(python=sys.executable, agent=agent)
    )
    (project / "rows.jsonl").write_text(json.dumps(DATASET_ROW) + "\n")
    (project / "rows.eval.yaml").write_text(target + "tests: ./rows.jsonl\n")
    home = tmp_path / "state"
    report = tmp_path / "report"
    env = {
        **os.environ,
        "SOME_KEY": PLANTED,
        "DB_PASS": DB_PASS,
        "DAGSTER_HOME": str(home / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(home / "storage"),
        WRITABLE_VAR: str(received),
    }
    suites = [str(project / "markers.eval.yaml"), str(project / "rows.eval.yaml")]
    # Threshold: a case whose `contains` value came back as the secret would fail the run.
    options = ["--threshold", "0.5", "--output", str(report)]
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "run", *suites, *options],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    inline = json.loads((received / "inline.json").read_text())
    row = json.loads((received / "row.json").read_text())
    # The command's placeholders got the values; the suite's markers stayed text.
    assert inline["key"] == PLANTED and inline["db_pass"] == DB_PASS
    assert "Say [REDACTED:SOME_KEY] back." in inline["prompt"]
    assert inline["files"] == ["File says [REDACTED:SOME_KEY]."]
    assert "Row says [REDACTED:SOME_KEY]." in row["prompt"] and row["key"] == PLANTED
    # No form of either secret in any file, nor in what the run printed.
    stored = [p for folder in (home, report) for p in folder.rglob("*") if p.is_file()]
    assert len(stored) > 20 and any(p.suffix == ".parquet" for p in stored)
    assert any(p.name == "messages.parquet" for p in stored)
    leaks = [
        f"{name} in {p}"
        for p in stored
        for name, form in _planted_forms().items()
        if form in _stored_text(p)
    ]
    assert leaks == []
    assert [name for name, form in _planted_forms().items() if form.decode() in printed] == []
    # What the agent said is kept, its secrets marked.
    stdout = next(p for p in stored if p.name == "stdout.txt").read_text()
    assert f"raw {MARKER} url {MARKER} | plus {MARKER}" in stdout
    assert f"hex {MARKER} | pass [REDACTED:DB_PASS]" in stdout


def test_a_scrubbed_record_keeps_its_names_and_paths() -> None:
    """A secret's value that is also part of a target's name (here `echo` in `echoer`) is
    scrubbed from what the run said, never from the names and paths the record is found by:
    a run whose agent name changed would lose its case (its session and grade never made)."""
    from evals_pipeline.models.run import AgentRun

    run = AgentRun(
        case_key="a",
        agent="echoer",
        start_ms=1,
        end_ms=2,
        stdout_path="/runs/echoer/a/trial-0/stdout.txt",
        stderr="echo said hello",
    )
    scrubbed = Redactor(["echo"]).model(run)
    assert scrubbed.stderr == "[REDACTED] said hello"
    assert (scrubbed.case_key, scrubbed.agent) == ("a", "echoer")
    assert scrubbed.stdout_path == "/runs/echoer/a/trial-0/stdout.txt"

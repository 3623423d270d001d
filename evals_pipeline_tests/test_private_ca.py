"""A grader behind a private CA (issue 34, item 5): its package index is served over HTTPS with a
certificate of a CA only SSL_CERT_FILE names, and `evals-pipeline run` passes that variable (and
PIP_INDEX_URL) on to the grader. Everything stays on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from evals_pipeline.process import child_env, run_process
from evals_pipeline.served import LOOPBACK, ServedOnThread

# The grader takes its rubric from the package index, as a grader installing its packages would.
GRADER = """
import json, os, re, sys, urllib.request

index = os.environ["PIP_INDEX_URL"].rstrip("/")
try:
    page = urllib.request.urlopen(index + "/rubric/", timeout=10).read().decode()
    link = re.search(r'href="([^"]+)"', page).group(1)
    rubric = json.loads(urllib.request.urlopen(index + "/rubric/" + link, timeout=10).read())
except Exception as exc:
    print(f"cannot fetch the rubric from {index}: {exc}", file=sys.stderr)
    sys.exit(1)
answer = json.load(sys.stdin)["output"]
print(json.dumps({"score": 1.0 if rubric["word"] in answer else 0.0}))
"""

SUITE = """
name: private-ca
targets:
  - name: agent
    provider: cli
    command: python3 -c "open('{OUTPUT_FILE}', 'w').write('hello from behind the proxy')"
tests:
  - id: grader-fetches-its-rubric
    input: say hello
    assertions:
      - {type: code-grader, name: rubric, command: [python3, grader.py]}
"""


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _private_ca(folder: Path) -> tuple[Path, Path, Path]:
    """A CA (ca.pem) and a certificate it signed for 127.0.0.1: (ca, cert, key)."""
    (folder / "server.ext").write_text(
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=evals-pipeline test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )  # fmt: skip
    _openssl(
        "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1",
        cwd=folder,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
        cwd=folder,
    )  # fmt: skip
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A PEP 503 simple index over HTTPS on 127.0.0.1: (its URL, the CA that signed it)."""
    if shutil.which("openssl") is None:
        pytest.fail("the openssl command is needed to make the test's private CA")
    folder = tmp_path_factory.mktemp("private-ca")
    ca, cert, key = _private_ca(folder)
    pages = folder / "simple" / "rubric"
    pages.mkdir(parents=True)
    (pages / "index.html").write_text('<a href="rubric-1.0.json">rubric-1.0.json</a>\n')
    (pages / "rubric-1.0.json").write_text(json.dumps({"word": "hello"}))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(LOOPBACK, partial(_Quiet, directory=str(folder)))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with ServedOnThread(server, name="private-index", scheme="https") as served:
        yield f"{served.url}/simple/", ca


def _runner_env(url: str, ca: Path | None) -> dict[str, str]:
    """This process's environment without its own CA and proxy settings, then the test's."""
    dropped = ("SSL_CERT", "CA_BUNDLE", "CA_CERTS", "PROXY", "PIP_")
    env = {k: v for k, v in os.environ.items() if not any(d in k.upper() for d in dropped)}
    env |= {"PIP_INDEX_URL": url, "NO_PROXY": "127.0.0.1,localhost"}
    if ca is not None:
        env["SSL_CERT_FILE"] = str(ca)
    return env


def test_a_grader_reaches_its_index_behind_a_private_ca(
    index: tuple[str, Path], tmp_path: Path
) -> None:
    url, ca = index
    project = tmp_path / "project"
    project.mkdir()
    (project / "private-ca.eval.yaml").write_text(SUITE)
    (project / "grader.py").write_text(GRADER)
    env = _runner_env(url, ca) | {
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EVALS_PIPELINE_STORAGE": str(tmp_path / "storage"),
    }
    (tmp_path / "dagster").mkdir()
    command = [sys.executable, "-m", "evals_pipeline.cli", "run", "private-ca.eval.yaml"]
    done = subprocess.run(
        [*command, "--output", str(tmp_path / "out")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    explain = f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    ]
    assert [(r["test_id"], r["score"], r["execution_status"]) for r in rows] == [
        ("grader-fetches-its-rubric", 1.0, "ok")
    ], explain


def test_without_ssl_cert_file_the_same_grader_cannot_reach_its_index(
    index: tuple[str, Path], tmp_path: Path
) -> None:
    # The grader as the run starts it, from a runner whose SSL_CERT_FILE did not reach it.
    url, ca = index
    (tmp_path / "grader.py").write_text(GRADER)
    without = run_process(
        ["python3", "grader.py"],
        cwd=tmp_path,
        env=child_env(parent=_runner_env(url, None)),
        timeout_seconds=60,
        stdin=json.dumps({"output": "hello"}).encode(),
    )
    assert without.exit_code == 1
    assert "CERTIFICATE_VERIFY_FAILED" in without.stderr, without.stderr
    with_ca = run_process(
        ["python3", "grader.py"],
        cwd=tmp_path,
        env=child_env(parent=_runner_env(url, ca)),
        timeout_seconds=60,
        stdin=json.dumps({"output": "hello"}).encode(),
    )
    assert (with_ca.exit_code, json.loads(with_ca.stdout)) == (0, {"score": 1.0}), with_ca.stderr

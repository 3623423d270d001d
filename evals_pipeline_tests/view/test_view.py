"""`evals-pipeline view` on a storage root made by two real `evals-pipeline run`s of the
quickstart: the runs list (the figures `runs` prints), each report's files with their content
types and headers, the comparison `compare` prints, no file from outside a report folder, every
value escaped, an object-store root (moto), and a clean stop on SIGTERM and Ctrl-C."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from html import unescape
from pathlib import Path

from evals_pipeline_tests.servers import S3
from evals_pipeline_tests.view.conftest import Runs
from evals_pipeline_tests.view.viewer import running_view

PAGE_CSP = re.compile(
    r'<meta http-equiv="Content-Security-Policy" content="default-src [^"]*script-src'
)


def report_path(folder: Path, name: str = "report.html") -> str:
    return f"/reports/quickstart/{folder.name}/{name}"


def delta_cells(html: str) -> list[list[str]]:
    """The compare page's per-agent rows, cell by cell."""
    table = html.split('<table id="deltas">', 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    return [
        [unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def test_the_runs_list_reports_and_comparison(runs: Runs) -> None:
    with running_view(str(runs.storage), runs.home) as view:
        listing = view.get("/")
        assert listing.status == 200
        assert listing.headers["content-type"] == "text/html; charset=utf-8"
        assert "script-src" not in listing.headers["content-security-policy"]
        # Newest first, each linking its report.
        links = re.findall(r'class="report" href="([^"]+)"', listing.text)
        assert links == [report_path(runs.newer), report_path(runs.older)]
        # The figures `evals-pipeline runs` prints, for each run.
        for line in runs.cli("runs").splitlines()[2:]:
            run_id, agents = re.split(r"\s{2,}", line)[3:5]
            assert re.search(rf"{run_id}</a></td>\s*<td>{re.escape(agents)}</td>", listing.text)

        # The report page as the build wrote it, its CSP meta kept.
        page = view.get(report_path(runs.newer))
        assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.body == (runs.newer / "report.html").read_bytes()
        assert PAGE_CSP.search(page.text)
        assert page.headers["x-content-type-options"] == "nosniff"
        # A case page's file: a script, served as one.
        case = sorted((runs.newer / "cases" / "careful").iterdir())[0]
        script = view.get(report_path(runs.newer, f"cases/careful/{case.name}"))
        assert script.status == 200 and script.body == case.read_bytes()
        assert script.headers["content-type"] == "text/javascript; charset=utf-8"
        summary = view.get(report_path(runs.newer, "summary.md"))
        assert summary.headers["content-type"] == "text/plain; charset=utf-8"
        assert summary.body == (runs.newer / "summary.md").read_bytes()
        assert "sandbox" in summary.headers["content-security-policy"]
        report_json = view.get(report_path(runs.older, "report.json"))
        assert report_json.headers["content-type"] == "application/json"
        assert json.loads(report_json.body)["run_id"] == runs.older.name

        # The comparison `evals-pipeline compare` prints, picked by the form's two selects.
        compare = view.get(f"/compare/quickstart?before={runs.older.name}&after={runs.newer.name}")
        assert compare.status == 200
        assert re.findall(r'<select name="(\w+)">', compare.text) == ["before", "after"]
        printed = runs.cli("compare", runs.older.name, runs.newer.name)
        rows = [
            [c.strip() for c in line.strip("|").split("|")]
            for line in printed.splitlines()
            if line.startswith("| ") and not line.startswith("| agent ")
        ]
        assert len(rows) == 2 and delta_cells(compare.text) == rows
        # The other way round: the runs swap.
        swapped = view.get(f"/compare/quickstart?before={runs.newer.name}&after={runs.older.name}")
        heading = re.search(r'<h2 id="comparison">(.*?)</h2>', swapped.text)
        assert heading and heading.group(1).startswith(runs.older.name)
        # Unknown suite or run: 404 saying so.
        assert view.get("/compare/nosuch").status == 404
        unknown = view.get("/compare/quickstart?before=nosuch")
        assert unknown.status == 404 and "no run &#39;nosuch&#39;" in unknown.text


def test_only_files_inside_report_folders_are_served(runs: Runs, tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    shutil.copytree(runs.storage, storage)
    (tmp_path / "secret.txt").write_text("outside the storage root")
    (storage / "quickstart" / "secret.txt").write_text("in the suite, not in a report")
    folder = storage / "quickstart" / "eval_report" / runs.newer.name
    (folder / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (folder / ".hidden").write_text("hidden")
    # A folder under eval_report without report.json is not a report.
    (storage / "quickstart" / "eval_report" / "not-a-report").mkdir()
    (storage / "quickstart" / "eval_report" / "not-a-report" / "x.txt").write_text("x")
    run = runs.newer.name
    with running_view(str(storage), runs.home) as view:
        assert view.get(f"/reports/quickstart/{run}/report.html").status == 200
        for path in [
            f"/reports/quickstart/{run}/../../secret.txt",
            f"/reports/quickstart/{run}/..%2F..%2Fsecret.txt",
            f"/reports/quickstart/{run}/%2e%2e/%2e%2e/secret.txt",
            f"/reports/quickstart/{run}/%2E%2E%2F%2E%2E%2F..%2F..%2F..%2Fsecret.txt",
            f"/reports/quickstart/{run}//etc/passwd",
            f"/reports/quickstart/{run}/cases/../report.json",
            f"/reports/quickstart/{run}/leak.txt",
            f"/reports/quickstart/{run}/.hidden",
            f"/reports/quickstart/{run}/cases",
            "/reports/quickstart/..%2F..%2F/secret.txt",
            "/reports/quickstart/../secret.txt",
            "/reports/quickstart/not-a-report/x.txt",
            "/reports/..%2F..%2F/x/secret.txt",
            "/reports/quickstart/%2e%2e/secret.txt",
            "/secret.txt",
        ]:
            reply = view.get(path)
            assert reply.status == 404, path
            assert b"outside the storage root" not in reply.body, path
            assert b"in the suite" not in reply.body, path


def test_report_contents_are_escaped(runs: Runs, tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    shutil.copytree(runs.storage, storage)
    hostile = storage / "quickstart" / "eval_report" / "hostile"
    shutil.copytree(runs.newer, hostile)
    report = json.loads((hostile / "report.json").read_text())
    report.update(run_id="<script>alert(1)</script>", created_ms=report["created_ms"] + 1000)
    report["agents"][0]["agent"] = '<img src=x onerror="alert(2)">'
    (hostile / "report.json").write_text(json.dumps(report))
    with running_view(str(storage), runs.home) as view:
        for path in ["/", f"/compare/quickstart?before={runs.newer.name}&after=hostile"]:
            page = view.get(path)
            assert page.status == 200, path
            assert "<script>" not in page.text and "<img" not in page.text, path
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text, path
        assert "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;" in view.get("/").text


def test_ctrl_c_stops_it_and_the_storage_default_is_runs(runs: Runs) -> None:
    # No --storage: $EVALS_PIPELINE_STORAGE, as `evals-pipeline runs`.
    env = {"EVALS_PIPELINE_STORAGE": str(runs.storage)}
    with running_view(None, runs.home, env, stop=signal.SIGINT) as view:
        assert runs.newer.name in view.get("/").text


def test_an_empty_storage_root_says_what_to_do(tmp_path: Path) -> None:
    with running_view(str(tmp_path / "nothing"), tmp_path) as view:
        listing = view.get("/")
    assert listing.status == 200
    assert "run a suite first (<code>evals-pipeline run</code>)" in listing.text


def test_a_taken_port_is_a_usage_error(runs: Runs) -> None:
    with running_view(str(runs.storage), runs.home) as view:
        port = view.url.rsplit(":", 1)[1]
        done = subprocess.run(
            [sys.executable, "-m", "evals_pipeline.cli", "view", "--port", port],
            cwd=runs.home,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert f"error: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "give another --port" in done.stderr


def test_an_object_store_root(runs: Runs, tmp_path: Path, s3_server: S3) -> None:
    import pyarrow.fs as pafs

    bucket = pafs.S3FileSystem(
        endpoint_override=s3_server.endpoint,
        access_key=s3_server.env["AWS_ACCESS_KEY_ID"],
        secret_key=s3_server.env["AWS_SECRET_ACCESS_KEY"],
        region="us-east-1",
    )
    # The reports as `run` publishes them to a bucket root.
    pafs.copy_files(
        str(runs.storage / "quickstart" / "eval_report"),
        f"{s3_server.bucket}/view/quickstart/eval_report",
        source_filesystem=pafs.LocalFileSystem(),
        destination_filesystem=bucket,
    )
    env = {**s3_server.env, "EVALS_PIPELINE_STORAGE_CACHE": str(tmp_path / "mirror")}
    with running_view(s3_server.url("view"), tmp_path, env) as view:
        listing = view.get("/")
        assert listing.status == 200 and "s3://evals/view" in listing.text
        links = re.findall(r'class="report" href="([^"]+)"', listing.text)
        assert links == [report_path(runs.newer), report_path(runs.older)]
        page = view.get(report_path(runs.older))
        assert page.status == 200 and page.body == (runs.older / "report.html").read_bytes()
        case = sorted((runs.older / "cases" / "hasty").iterdir())[0]
        script = view.get(report_path(runs.older, f"cases/hasty/{case.name}"))
        assert script.body == case.read_bytes()
        compare = view.get(f"/compare/quickstart?before={runs.older.name}&after={runs.newer.name}")
        assert compare.status == 200 and len(delta_cells(compare.text)) == 2
        assert view.get(f"/reports/quickstart/{runs.older.name}/..%2F..%2F..%2Fx").status == 404
        assert view.get("/reports/quickstart/nosuch/report.html").status == 404
    assert not (tmp_path / "storage").exists() and not (tmp_path / ".evals" / "storage").exists()


def test_view_is_in_the_cli_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evals_pipeline.cli", "view", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert "default 127.0.0.1" in done.stdout and "default 7580" in done.stdout

"""A report's files as the view serves them: only files inside a report folder
(`<root>/<suite>/eval_report/<run id>/`), each with its content type and the headers that keep a
file an agent may have shaped from running as a page of the view (docs/security.md)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from evals_pipeline.history.entries import REPORT_ASSET, REPORT_FILE
from evals_pipeline.storage.root import StorageRoot

PAGE = "report.html"
"""The one file served as an HTML page: the report build's own, with its CSP meta."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",  # shown as text, not downloaded
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
}
BINARY = "application/octet-stream"

NO_SNIFF = {"X-Content-Type-Options": "nosniff"}
"""On every file: a browser runs a file as a script only when it is served as one (`cases/*.js`),
whatever the report page's `script-src 'self'` would allow from this origin."""
INERT = {**NO_SNIFF, "Content-Security-Policy": "sandbox; default-src 'none'"}
"""On every file but the report page: opened directly, it runs nothing and loads nothing."""


def _segment(part: str) -> bool:
    """A plain name: no traversal, no hidden file (the mirror's `.evals-synced` marker)."""
    return bool(part) and not part.startswith(".") and "\\" not in part and "\x00" not in part


def report_folder(root: StorageRoot, suite: str, run: str) -> Path | None:
    """The local folder of a report (fetched from an object store as needed), or None when
    `suite`/`run` do not name one."""
    if not (_segment(suite) and _segment(run)) or "/" in suite + run:
        return None
    folder = root.local / suite / REPORT_ASSET / run
    return folder if root.fetch_file(folder / REPORT_FILE) else None


def report_file(root: StorageRoot, suite: str, run: str, name: str) -> Path | None:
    """The local path of file `name` (a relative path) of a report, or None when it is not a
    file inside that report's folder."""
    parts = name.split("/")  # `a//b`, `./a` and `a/../b` are refused, not normalized
    if not all(_segment(p) for p in parts):
        return None
    folder = report_folder(root, suite, run)
    if folder is None:
        return None
    path = folder.joinpath(*parts)
    if not root.fetch_file(path):
        return None
    real = path.resolve()
    # A symlink inside the folder must not lead out of it.
    if not real.is_relative_to(folder.resolve()) or not real.is_file():
        return None
    return real


def content_type(name: str) -> str:
    """The Content-Type a report file is served with; HTML only for the report page itself."""
    suffix = PurePosixPath(name).suffix.lower()
    if suffix == ".html" and name != PAGE:
        return CONTENT_TYPES[".txt"]
    return CONTENT_TYPES.get(suffix, BINARY)


def headers(name: str) -> dict[str, str]:
    """The security headers of a report file: the page keeps its own CSP meta."""
    return dict(NO_SNIFF) if name == PAGE else dict(INERT)

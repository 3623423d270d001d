"""The view's web application (Starlette): the runs list at `/`, each report's files under
`/reports/<suite>/<run id>/`, and `/compare/<suite>`, whose form picks the two runs.

Every request reads the storage root afresh (a new report shows on reload); with an object
store, what a page needs is fetched into this process's mirror (storage/root.py)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Route

from evals_pipeline.history import compare_stored, mirror_reports, suite_entries, suites_in
from evals_pipeline.models.history import RunEntry
from evals_pipeline.storage.root import StorageRoot
from evals_pipeline.view import pages
from evals_pipeline.view.links import COMPARE, REPORTS
from evals_pipeline.view.report_files import content_type, headers, report_file

PAGE_HEADERS = {
    "Content-Security-Policy": pages.CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",  # the runs list changes with every run
}


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=PAGE_HEADERS)


def _not_found(message: str) -> HTMLResponse:
    return _html(pages.message_page("Not found", message), status=404)


def view_app(root: StorageRoot) -> Starlette:
    """The application over `root`."""

    def runs(request: Request) -> Response:
        local = mirror_reports(root)
        entries = [e for suite in suites_in(local) for e in suite_entries(local, suite)]
        return _html(pages.runs_page(root.url, entries))

    def compare(request: Request) -> Response:
        suite = request.path_params["suite"]
        local = mirror_reports(root, [suite]) if suite in root.folders() else None
        entries = suite_entries(local, suite) if local is not None else []
        if not entries:
            return _not_found(f"no reports of suite {suite!r} under {root.url}")
        by_name = {pages.run_name(e): e for e in entries}
        names = [request.query_params.get("before"), request.query_params.get("after")]
        unknown = [n for n in names if n is not None and n not in by_name]
        if unknown:
            missing = f"no run {unknown[0]!r} of {suite}: pick one in the lists"
            return _html(pages.compare_page(suite, entries, None, None, None, missing), 404)
        picked: list[RunEntry | None] = [by_name[n] if n else None for n in names]
        before = picked[0] or (entries[-2] if len(entries) > 1 else None)
        after = picked[1] or entries[-1]
        if before is None:
            alone = f"{suite} has one report: a comparison needs two runs"
            return _html(pages.compare_page(suite, entries, None, after, None, alone))
        same = pages.run_name(before) == pages.run_name(after)
        problem = "the same run twice: nothing can differ; pick two runs" if same else None
        comparison = compare_stored(before, after)
        return _html(pages.compare_page(suite, entries, before, after, comparison, problem))

    def report(request: Request) -> Response:
        suite, run, name = (request.path_params[k] for k in ("suite", "run", "name"))
        path = report_file(root, suite, run, name)
        if path is None:
            return _not_found(f"no file {name!r} in report {run!r} of suite {suite!r}")
        return FileResponse(path, media_type=content_type(name), headers=headers(name))

    return Starlette(
        routes=[
            Route("/", runs),
            Route(f"/{COMPARE}/{{suite}}", compare),
            Route(f"/{REPORTS}/{{suite}}/{{run}}/{{name:path}}", report),
        ]
    )

"""Headless Chromium for tests: Debian's `chromium` (/usr/bin/chromium) driven by Playwright, no
browser download. A machine without it fails the test with the fix (`make chromium`), never skips.

Every page gets a route that aborts any request not to file:// (nor to the origins a test
allows, e.g. its own `evals-pipeline view` on 127.0.0.1) and records it, so a test can assert the
report fetched nothing from the network.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",  # as root Chromium refuses to start with its sandbox
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Browser:
    page: Any
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def chromium_executable() -> str:
    """The system Chromium, or fail saying how to install it."""
    found = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if not found:
        pytest.fail(
            f"{CHROMIUM} is missing: run `make chromium` (as root it runs apt-get install -y "
            "chromium; otherwise install Debian's chromium package yourself)"
        )
    return found


@contextmanager
def headless_page(
    width: int = 1280, height: int = 900, allow: tuple[str, ...] = ()
) -> Iterator[Browser]:
    """One page of a fresh headless Chromium with the network blocked, but for file:// and the
    URL prefixes in `allow` (e.g. `http://127.0.0.1:PORT/`)."""
    allowed = ("file://", *allow)
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError as exc:
        pytest.fail(f"playwright is not installed ({exc}): run `pip install -e '.[dev]'`")
    executable = chromium_executable()
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=executable, args=ARGS)
        except Error as exc:
            pytest.fail(f"{executable} did not start headless: {exc}")
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            state = Browser(page=context.new_page())

            def guard(route: Any) -> None:
                url = route.request.url
                if url.startswith(allowed):
                    route.continue_()
                else:
                    state.blocked.append(url)
                    route.abort()

            context.route("**/*", guard)
            state.page.on("pageerror", lambda exc: state.errors.append(str(exc)))
            state.page.on(
                "console",
                lambda message: (
                    state.errors.append(message.text) if message.type == "error" else None
                ),
            )
            state.page.on(
                "request",
                lambda request: (
                    None
                    if request.url.startswith((*allowed, "data:", "about:"))
                    else state.blocked.append(request.url)
                ),
            )
            yield state
        finally:
            browser.close()


def screenshot(page: Any, *paths: Path) -> list[Path]:
    """A full-page PNG written to each of `paths`; each is checked to be a non-empty PNG."""
    image: bytes = page.screenshot(full_page=True)
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(image)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
        assert path.stat().st_size > 1000, path
    return list(paths)

"""End-to-end fixtures: a real `nodeloom serve` (with its token) on a loopback port, the
scripted LLM it calls, and Debian's Chromium driven by Playwright.

Chromium is `/usr/bin/chromium` (`apt-get install chromium`; never `playwright install`).
Without it these tests are skipped, unless NODELOOM_REQUIRE_BROWSER=1 (CI sets it), which
makes its absence a failure. Screenshots of each step go to `test-artifacts/e2e/`.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from nodeloom.testing.browser import CHROMIUM, CHROMIUM_ARGS, chromium
from nodeloom.testing.mock_llm import MockLLM

from ..server.conftest import Server, start_server, stop_server

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "e2e"
REPLY = "Lima is lovely in the spring"
TOKEN_DELAY = 0.15  # seconds between streamed words: slow enough to see them arrive

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _need_browser() -> str:
    found = chromium()
    if found is not None:
        return found
    message = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("NODELOOM_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def llm() -> Iterator[MockLLM]:
    script = {"default": {"reply": REPLY, "token_delay": TOKEN_DELAY}}
    started = MockLLM(script).start_in_thread()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory, llm: MockLLM) -> Iterator[Server]:
    environment = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}
    started = start_server(tmp_path_factory.mktemp("ui-server"), environment=environment)
    try:
        yield started
    finally:
        stop_server(started)


@pytest.fixture
def api(ui_server: Server) -> httpx.Client:
    return ui_server.client()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=list(CHROMIUM_ARGS))
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser, ui_server: Server, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A 1280x720 page of the UI, signed in with the server's token."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(f"window.localStorage.setItem('nodeloom.token', {ui_server.token!r})")
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.set_default_timeout(15_000)
    try:
        yield opened
    finally:
        context.close()
    assert errors == [], f"the page raised: {errors}"


class Shots:
    """Numbered screenshots of a test's steps, in test-artifacts/e2e/<test name>/."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    def take(self, page, step: str) -> Path:  # type: ignore[no-untyped-def]
        self.count += 1
        path = self.folder / f"{self.count:02d}-{re.sub(r'[^a-z0-9]+', '-', step.lower())}.png"
        page.screenshot(path=str(path))
        return path


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Shots:
    return Shots(ARTIFACTS / request.node.name)

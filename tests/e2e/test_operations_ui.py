"""The Operations page end to end (Chromium, a real server): the health checks of an
in-process server, and, on a real queue deployment (Redis, Postgres, `nodeloom serve
--queue`, a `nodeloom worker`), the worker listed with its load."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Page, expect

from nodeloom.testing.stores import create_database, drop_database

from ..fleet.conftest import Fleet, Redis
from ..server.conftest import Server
from .conftest import Shots

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

T = TypeVar("T")


def test_the_operations_page_shows_the_health_checks_of_an_in_process_server(
    page: Page, ui_server: Server, shots: Shots
) -> None:
    page.goto(f"{ui_server.url}/#/")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Operations").click()
    expect(page.get_by_role("heading", name="Operations")).to_be_visible()
    expect(page).to_have_url(re.compile(r"#/operations$"))
    expect(page.get_by_role("note")).to_contain_text("In-process mode (no queue)")
    checks = page.get_by_role("list", name="Health checks")
    for name, detail in (
        ("store", "the run store answers"),
        ("queue", "no queue: in-process mode"),
        ("workers", "1 live (1 server)"),
    ):
        row = checks.locator(f"li[data-check='{name}']")
        expect(row).to_contain_text("ok")
        expect(row).to_contain_text(detail)
    expect(page.get_by_text("all checks pass")).to_be_visible()
    server_row = page.get_by_role("table", name="Workers").locator("tr[data-role='server']")
    expect(server_row).to_contain_text(str(ui_server.process.pid))
    shots.take(page, "operations in process")


def _apart(work: Coroutine[Any, Any, T]) -> T:
    """`work` run on a loop of its own thread (Playwright's sync API holds this one's)."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, work).result()


@pytest.fixture
def queue_database(postgres_server: str) -> Iterator[str]:
    url = _apart(create_database(postgres_server))
    try:
        yield url
    finally:
        _apart(drop_database(url))


@pytest.fixture
def fleet(tmp_path: Path, queue_database: str) -> Iterator[Fleet]:
    redis = Redis(tmp_path)
    redis.start()
    deployment = Fleet(tmp_path, queue_database, redis)
    try:
        yield deployment
    finally:
        deployment.stop()
        redis.stop()


def test_the_operations_page_lists_a_real_worker_of_a_queue_deployment(
    browser: Browser, fleet: Fleet, shots: Shots
) -> None:
    server = fleet.server()
    fleet.worker("--concurrency", "3")
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(f"window.localStorage.setItem('nodeloom.token', {server.token!r})")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{server.url}/#/operations")
        expect(page.get_by_role("note")).to_contain_text("Queue mode")
        # The page reads the registry again every 5 s: the worker appears once it beats.
        row = page.get_by_role("table", name="Workers").locator("tr[data-role='worker']")
        expect(row).to_contain_text("0 / 3", timeout=45_000)
        checks = page.get_by_role("list", name="Health checks")
        expect(checks.locator("li[data-check='queue']")).to_contain_text("Redis answers")
        workers = checks.locator("li[data-check='workers']")
        expect(workers).to_contain_text("1 worker", timeout=15_000)
        expect(page.get_by_label("Queue depth")).to_contain_text("0 waiting")
        shots.take(page, "operations with a worker")
    finally:
        context.close()
    assert errors == [], f"the page raised: {errors}"

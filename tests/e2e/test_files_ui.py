"""The UI and binary content, end to end: a credential chosen from the list in a node's
inline controls, and a run's upload shown as name · mime · size and downloaded."""

from __future__ import annotations

import hashlib
import uuid

import httpx
from playwright.sync_api import Page, expect

from nodeloom.testing.builders import chain, node

from ..server.conftest import Server
from .conftest import Shots
from .test_ui import canvas_node

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


def test_a_database_query_takes_its_connection_from_the_stored_credentials(
    page: Page, ui_server: Server, api: httpx.Client, shots: Shots
):
    name = f"orders_{uuid.uuid4().hex[:6]}"
    assert api.put(f"/api/credentials/{name}", json={"value": "sqlite:///x.db"}).status_code == 200
    flow = {
        "nodes": [
            node("query", "database-query", query="SELECT 1", connection="sqlite:///first.db")
        ],
        "edges": [],
    }
    created = api.post("/api/flows", json={"name": "Credential picker", "document": flow})
    assert created.status_code == 201, created.text
    flow_id = created.json()["flow_id"]
    page.goto(f"{ui_server.url}/#/flows/{flow_id}")
    picker = canvas_node(page, "query").get_by_label("Connection credential")
    expect(picker.locator("option", has_text=name)).to_have_count(1)
    new = canvas_node(page, "query").get_by_role("link", name="New credential")
    expect(new).to_have_attribute("href", "#/settings")
    picker.select_option(name)
    shots.take(page, "credential chosen")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved v2")
    (saved,) = api.get(f"/api/flows/{flow_id}").json()["document"]["nodes"]
    assert saved["data"]["connection"] == f"{{{{ $credentials.{name} }}}}"


def test_a_run_shows_its_upload_as_a_reference_and_downloads_it(
    page: Page, ui_server: Server, api: httpx.Client, shots: Shots
):
    path = f"e2e/{uuid.uuid4().hex[:8]}"
    flow = chain(
        node("hook", "webhook-trigger", path=path, secret="s3cret"),
        node("done", "const", value={"ok": True}),
    )
    assert api.post("/api/flows", json={"name": "uploads", "document": flow}).status_code == 201
    with httpx.Client(base_url=ui_server.url, timeout=30) as client:
        response = client.post(
            f"/api/hooks/{path}",
            headers={"X-Nodeloom-Secret": "s3cret"},
            files={"file": ("logo.png", PNG, "image/png")},
        )
    assert response.status_code == 200, response.text
    run_id = response.json()["run_id"]

    page.goto(f"{ui_server.url}/#/runs/{run_id}")
    files = page.get_by_test_id("run-trigger-files")
    expect(files).to_contain_text("logo.png · image/png · 2.0 KB")
    shots.take(page, "the upload in the run")
    with page.expect_download() as caught:
        files.get_by_role("link", name="Download").click()
    download = caught.value
    assert download.suggested_filename == "logo.png"
    saved = download.path()
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == hashlib.sha256(PNG).hexdigest()

"""The Knowledge page end to end (Chromium, a real server, the real local model): drop a
file and choose others, watch the ingest progress, see the collection, search it and
read each hit's source."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from nodeloom.testing.documents import write_documents

from ..server.conftest import Server
from .conftest import Shots

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_upload_by_drop_and_by_picker_then_search_shows_hits_with_sources(
    page: Page, ui_server: Server, shots: Shots, tmp_path: Path
) -> None:
    paths = write_documents(tmp_path)
    page.goto(f"{ui_server.url}/#/knowledge")
    expect(page.get_by_role("heading", name="Knowledge")).to_be_visible()
    page.get_by_label("Collection name").fill("handbook")

    dropped = page.evaluate_handle(
        """(text) => { const data = new DataTransfer();
            data.items.add(new File([text], 'pier.md', {type: 'text/markdown'})); return data }""",
        "# Pier\n\nPelicans nest under the old pier every spring.",
    )
    page.dispatch_event(".drop-zone", "drop", {"dataTransfer": dropped})
    status = page.get_by_role("status")
    expect(status).to_contain_text("Ingested into handbook", timeout=90_000)
    shots.take(page, "dropped a file")

    page.get_by_label("Files to upload").set_input_files([paths["pdf"], paths["docx"]])
    # The bar passes "Sending", "Loading and chunking" and "Embedding n of m": too quickly
    # with three small files to assert each; the end state says what was written.
    expect(status).to_contain_text("Ingested into handbook: 3 added", timeout=90_000)
    row = page.locator(".knowledge-table tr", has_text="handbook")
    expect(row).to_contain_text("local:all-minilm-l6-v2 (384)")
    expect(row.locator("td").nth(3)).to_have_text("3")

    page.get_by_label("Search query").fill("Why does the riesling taste of flint?")
    page.get_by_role("button", name="Search").click()
    hits = page.get_by_role("list", name="Hits")
    expect(hits.locator("li").first).to_contain_text("sample.pdf p.1")
    expect(hits.locator("li").first).to_contain_text("Volcanic soil")
    shots.take(page, "search hits")

    page.get_by_label("Search query").fill("pelicans")
    page.get_by_label("Search mode").select_option("keyword")
    page.get_by_role("button", name="Search").click()
    expect(hits.locator("li").first).to_contain_text("pier.md")

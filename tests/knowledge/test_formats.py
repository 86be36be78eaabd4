"""Every listed file type loads into documents with source, mime and (where it has one)
title and page; a file that cannot be read is reported and the others still load."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodeloom.knowledge import DocumentLoadError, load
from nodeloom.testing.documents import FACTS, write_documents


async def test_every_listed_type_loads_with_its_text_and_metadata(tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs")
    report = await load([str(tmp_path / "docs")])
    assert report.errors == []
    by_kind = {
        Path(d.metadata["source"]).suffix[1:]: d
        for d in report.documents
        if d.metadata.get("page", 1) == 1
    }
    assert set(by_kind) == set(FACTS)
    for kind, fact in FACTS.items():
        text = " ".join(by_kind[kind].text.split()).replace("\u2019", "'")
        assert fact.rstrip(".") in text, kind
        assert by_kind[kind].metadata["source"] == str(paths[kind])
    assert by_kind["pdf"].metadata["page"] == 1
    assert by_kind["pdf"].metadata["title"] == "Vineyard"
    assert by_kind["html"].metadata["title"] == "Museum news"
    assert "never indexed" not in by_kind["html"].text
    assert by_kind["docx"].text.startswith("# Club calendar")
    assert by_kind["md"].metadata["title"] == "Kitchen manual"
    assert by_kind["csv"].metadata["mime"] == "text/csv"


async def test_a_pdf_gives_one_document_per_page_with_stable_ids(tmp_path: Path) -> None:
    write_documents(tmp_path)
    first = await load([str(tmp_path / "sample.pdf")])
    again = await load([str(tmp_path / "sample.pdf")])
    assert [d.metadata["page"] for d in first.documents] == [1, 2]
    assert [d.id for d in first.documents] == [d.id for d in again.documents]
    assert first.documents[0].id != first.documents[1].id


async def test_a_broken_file_is_reported_and_the_others_still_load(tmp_path: Path) -> None:
    write_documents(tmp_path)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    (tmp_path / "broken.json").write_text("{not json")
    report = await load([str(tmp_path), str(tmp_path / "missing.txt"), "nothing/*.md"])
    failed = {Path(e["source"]).name: e for e in report.errors}
    assert set(failed) == {"broken.pdf", "broken.json", "missing.txt", "*.md"}
    assert all(e["code"] == "knowledge_load_failed" for e in report.errors)
    assert "no such file" in failed["missing.txt"]["message"]
    assert report.files == 7


async def test_strict_loading_raises_the_first_failure(tmp_path: Path) -> None:
    (tmp_path / "a.exe").write_bytes(b"MZ")
    with pytest.raises(DocumentLoadError, match=r"unsupported type .* supported extensions"):
        await load([str(tmp_path / "a.exe")], strict=True)


async def test_a_glob_and_an_uploaded_file_reference_load(tmp_path: Path) -> None:
    write_documents(tmp_path)
    upload = tmp_path / "upload.bin"
    upload.write_text("# Uploaded\n\nThe uploaded note mentions pelicans.")
    report = await load(
        [
            str(tmp_path / "*.md"),
            {"$ref": f"file:{upload}", "mime": "text/markdown", "name": "note.md"},
        ]
    )
    assert [d.metadata["source"] for d in report.documents] == [
        str(tmp_path / "sample.md"),
        "note.md",
    ]
    assert report.documents[1].metadata["title"] == "Uploaded"


async def test_a_url_to_a_private_address_is_refused_by_the_network_guard() -> None:
    report = await load(["http://127.0.0.1:9/secret.txt"])
    assert report.documents == []
    (error,) = report.errors
    assert error["source"] == "http://127.0.0.1:9/secret.txt"
    assert "127.0.0.1" in error["message"]


async def test_a_url_loads_through_the_guarded_client_when_the_policy_allows_it() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from nodeloom.net import Policy

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><head><title>FAQ</title></head><body><p>Kites fly.</p></body></html>"
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/faq"
        report = await load([url], policy=Policy(allow_private=True))
    finally:
        server.shutdown()
        server.server_close()
    (document,) = report.documents
    assert document.metadata == {"source": url, "mime": "text/html", "title": "FAQ"}
    assert document.text == "Kites fly."

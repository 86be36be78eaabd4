"""Knowledge over the real server: upload files to ingest as a run (its events show the
embedding progress), list collections, search, drop; bad uploads are refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from nodeloom.testing.documents import write_documents

from .conftest import read_frames
from .test_runs import wait_for


def upload(api: httpx.Client, collection: str, files: list[tuple[str, bytes]], **form: str):
    return api.post(
        f"/api/knowledge/collections/{collection}/files",
        files=[("files", (name, content)) for name, content in files],
        data=form,
    )


@pytest.mark.slow
def test_uploaded_files_are_ingested_as_a_run_then_searched_and_dropped(
    api: httpx.Client, tmp_path: Path
) -> None:
    paths = write_documents(tmp_path)
    files = [(p.name, p.read_bytes()) for p in (paths["md"], paths["docx"], paths["pdf"])]
    started = upload(api, "uploads", files, chunk_size="64", chunk_overlap="8")
    assert started.status_code == 202, started.text
    run = wait_for(api, started.json()["run_id"], "completed", "failed", within=60)
    assert run["status"] == "completed", run
    frames = read_frames(api, started.json()["events_url"])
    progress = [f.data["data"] for f in frames if f.data.get("event_type") == "progress"]
    assert any("embedded" in p for p in progress), progress

    listed = api.get("/api/knowledge/collections").json()["collections"]
    (collection,) = [c for c in listed if c["name"] == "uploads"]
    assert collection["sources"] == 3 and collection["model"] == "local:all-minilm-l6-v2"

    found = api.post(
        "/api/knowledge/collections/uploads/search",
        json={"query": "When does the chess club meet?", "top_k": 2},
    )
    assert found.status_code == 200, found.text
    hit = found.json()["hits"][0]
    assert hit["metadata"]["source"] == "sample.docx"
    assert found.json()["context"].startswith("[1] ")

    assert api.delete("/api/knowledge/collections/uploads").status_code == 204
    gone = api.post("/api/knowledge/collections/uploads/search", json={"query": "chess"})
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "knowledge_collection_not_found"


def test_an_upload_cannot_name_a_path_outside_its_folder(api: httpx.Client, server) -> None:
    started = upload(api, "paths", [("../../../escape.md", b"# Escape\n\nNo way out.")])
    assert started.status_code == 202, started.text
    wait_for(api, started.json()["run_id"], "completed", within=60)
    found = api.post(
        "/api/knowledge/collections/paths/search", json={"query": "escape", "mode": "keyword"}
    ).json()
    assert found["hits"][0]["metadata"]["source"] == "escape.md"
    data = Path(server.env["NODELOOM_DATA_DIR"])
    (written,) = list((data / "knowledge" / "uploads").rglob("escape.md"))
    assert written.parent.parent == data / "knowledge" / "uploads"
    assert not (data.parent / "escape.md").exists()


def test_unsupported_files_and_bad_names_are_refused(api: httpx.Client) -> None:
    refused = upload(api, "c", [("tool.exe", b"MZ")])
    assert refused.status_code == 422 and "unsupported file type" in refused.text
    bad = upload(api, "-starts-with-a-dash*", [("a.md", b"x")])
    assert bad.status_code == 422 and "invalid collection name" in bad.text
    overlap = upload(api, "c", [("a.md", b"x")], chunk_size="32", chunk_overlap="32")
    assert overlap.status_code == 422


def test_the_knowledge_api_needs_the_token(server) -> None:
    anonymous = server.client(token=None)
    assert anonymous.get("/api/knowledge/collections").status_code == 401

"""Webhook uploads: multipart file parts become blob references of the run store (never
bytes in the trigger), kept once by digest, flow on to Write File and download from
`GET /api/runs/{run_id}/files/{sha256}`; 500 MB pass with memory bounded."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.testing.builders import chain, node

from .conftest import Server, start_server, stop_server
from .test_runs import save, wait_for

SECRET = "s3cret"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("files")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[Server]:
    started = start_server(
        tmp_path_factory.mktemp("server"),
        "--max-body-mb",
        "600",
        environment={"NODELOOM_FILES_ROOT": str(root)},
    )
    try:
        yield started
    finally:
        stop_server(started)


def copier(path: str, **hook: Any) -> dict[str, Any]:
    """webhook-trigger -> write-file: saves the uploaded `file` field under copies/."""
    return chain(
        node("hook", "webhook-trigger", path=path, secret=SECRET, **hook),
        node(
            "save",
            "write-file",
            path="copies/{{ $json.body.file.name }}",
            content="{{ $json.body.file }}",
            mode="overwrite",
        ),
    )


def blob_file(server: Server, sha: str) -> Path:
    """The file of a blob in the server's blob area (`<data dir>/blobs/<store id>/`)."""
    (found,) = Path(server.env["NODELOOM_DATA_DIR"]).glob(f"blobs/*/{sha[:2]}/{sha}")
    return found


def upload(server: Server, path: str, **options: Any) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=300) as client:  # no bearer token
        return client.post(f"/api/hooks/{path}", headers={"X-Nodeloom-Secret": SECRET}, **options)


def test_an_uploaded_file_is_a_blob_reference_in_the_trigger_and_write_file_copies_it(
    server: Server, root: Path
) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path))
    response = upload(
        server,
        path,
        data={"note": "the logo"},
        files={"file": ("logo.png", PNG, "image/png")},
    )
    assert response.status_code == 200, response.text
    run = api.get(f"/api/runs/{response.json()['run_id']}").json()
    body = run["trigger"]["body"]
    sha = hashlib.sha256(PNG).hexdigest()
    signature = body["file"].pop("sig")
    assert len(signature) == 32
    assert body == {
        "note": "the logo",
        "file": {"$ref": f"blob:{sha}", "mime": "image/png", "size": len(PNG), "name": "logo.png"},
    }
    assert blob_file(server, sha).read_bytes() == PNG  # in the run store, by its digest
    assert not (root / "uploads").exists()
    assert (root / "copies" / "logo.png").read_bytes() == PNG
    assert run["timeline"][-1]["outputs"] == {
        "output": {"path": "copies/logo.png", "size": len(PNG)}
    }
    assert "\\x89PNG" not in str(run) and "PNG\\r" not in str(run)  # never the bytes


def test_the_same_content_uploaded_twice_is_stored_once(server: Server) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path))
    content = b"twice " + uuid.uuid4().bytes
    runs = [
        upload(server, path, files={"file": (name, content, "text/plain")}).json()["run_id"]
        for name in ("one.txt", "two.txt")
    ]
    refs = [api.get(f"/api/runs/{run_id}").json()["trigger"]["body"]["file"] for run_id in runs]
    assert refs[0]["$ref"] == refs[1]["$ref"] and refs[0]["name"] != refs[1]["name"]
    sha = hashlib.sha256(content).hexdigest()
    assert blob_file(server, sha).read_bytes() == content  # one file (glob found exactly one)


def test_an_upload_downloads_from_its_run_with_its_name_and_type_as_an_attachment(
    server: Server,
) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path))
    run_id = upload(server, path, files={"file": ("logo.png", PNG, "image/png")}).json()["run_id"]
    ref = api.get(f"/api/runs/{run_id}").json()["trigger"]["body"]["file"]
    sha = ref["$ref"].removeprefix("blob:")
    got = api.get(f"/api/runs/{run_id}/files/{sha}", params={"name": ref["name"]})
    assert got.status_code == 200, got.text
    assert got.content == PNG
    assert got.headers["content-type"] == "image/png"
    assert got.headers["content-disposition"] == 'attachment; filename="logo.png"'
    assert got.headers["x-content-type-options"] == "nosniff"
    assert got.headers["content-security-policy"] == "sandbox"
    assert got.headers["content-length"] == str(len(PNG))
    odd = api.get(f"/api/runs/{run_id}/files/{sha}", params={"name": 'a"b\r\nX-Evil: 1.png'})
    assert "x-evil" not in odd.headers  # a name cannot add a header
    assert odd.headers["content-disposition"].startswith("attachment; filename*=utf-8''a%22b")
    assert server.client(token=None).get(f"/api/runs/{run_id}/files/{sha}").status_code == 401


def test_a_client_file_name_cannot_place_the_upload_outside_its_folder(
    server: Server, root: Path
) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path))
    response = upload(server, path, files={"file": ("../../../evil.txt", b"x", "text/plain")})
    assert response.status_code == 200, response.text
    body = api.get(f"/api/runs/{response.json()['run_id']}").json()["trigger"]["body"]
    assert body["file"]["$ref"] == f"blob:{hashlib.sha256(b'x').hexdigest()}"
    assert body["file"]["name"] == "evil.txt"
    assert (root / "copies" / "evil.txt").read_bytes() == b"x"
    assert not (root.parent / "evil.txt").exists()


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.slow
def test_a_500_mb_upload_flows_to_write_file_with_the_servers_peak_memory_bounded(
    server: Server, root: Path, tmp_path: Path, record_property: Any
) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path, mode="async"))
    # Warm up: the first upload loads the parser and the nodes; the baseline is after it.
    warm = upload(
        server, path, files={"file": ("warm.bin", b"w" * 1024, "application/octet-stream")}
    )
    wait_for(api, warm.json()["run_id"], "completed")
    before = _peak_rss_kb(server.process.pid)

    size = 500 * 1024 * 1024
    source = tmp_path / "big.bin"
    with source.open("wb") as file:
        file.truncate(size)  # sparse: half a gigabyte of zeros that costs no disk
    with source.open("rb") as file:
        response = upload(
            server, path, files={"file": ("big.bin", file, "application/octet-stream")}
        )
    assert response.status_code == 202, response.text
    run = wait_for(api, response.json()["run_id"], "completed", "failed")
    assert run["status"] == "completed", run.get("error")
    after = _peak_rss_kb(server.process.pid)

    copy = root / "copies" / "big.bin"
    assert copy.stat().st_size == size
    ref = run["trigger"]["body"]["file"]
    assert ref["$ref"].startswith("blob:") and ref["size"] == size
    kept = blob_file(server, ref["$ref"].removeprefix("blob:"))  # through the blob store
    assert kept.stat().st_size == size
    grew_mb = (after - before) / 1024
    record_property("server_peak_rss_mb_before", round(before / 1024, 1))
    record_property("server_peak_rss_mb_after", round(after / 1024, 1))
    print(f"\nserver peak RSS: {before / 1024:.1f} MB idle, {after / 1024:.1f} MB after 500 MB")
    assert grew_mb < 32, f"the server's peak RSS grew by {grew_mb:.1f} MB for a 500 MB upload"
    os.remove(copy)
    os.remove(kept)

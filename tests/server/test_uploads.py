"""Webhook uploads: multipart file parts become file references under the files root
(never bytes in the trigger), and flow on to Write File; 500 MB pass with memory bounded."""

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


def upload(server: Server, path: str, **options: Any) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=300) as client:  # no bearer token
        return client.post(f"/api/hooks/{path}", headers={"X-Nodeloom-Secret": SECRET}, **options)


def test_an_uploaded_file_is_a_file_reference_in_the_trigger_and_write_file_copies_it(
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
    assert body == {
        "note": "the logo",
        "file": {
            "$ref": f"file:uploads/{sha}/logo.png",
            "mime": "image/png",
            "size": len(PNG),
            "name": "logo.png",
        },
    }
    assert (root / "uploads" / sha / "logo.png").read_bytes() == PNG
    assert (root / "copies" / "logo.png").read_bytes() == PNG
    assert run["timeline"][-1]["outputs"] == {
        "output": {"path": "copies/logo.png", "size": len(PNG)}
    }
    assert "\\x89PNG" not in str(run) and "PNG\\r" not in str(run)  # never the bytes


def test_a_client_file_name_cannot_place_the_upload_outside_its_folder(
    server: Server, root: Path
) -> None:
    api = server.client()
    path = f"upload/{uuid.uuid4().hex[:8]}"
    save(api, copier(path))
    response = upload(server, path, files={"file": ("../../../evil.txt", b"x", "text/plain")})
    assert response.status_code == 200, response.text
    body = api.get(f"/api/runs/{response.json()['run_id']}").json()["trigger"]["body"]
    assert body["file"]["$ref"] == f"file:uploads/{hashlib.sha256(b'x').hexdigest()}/evil.txt"
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
    grew_mb = (after - before) / 1024
    record_property("server_peak_rss_mb_before", round(before / 1024, 1))
    record_property("server_peak_rss_mb_after", round(after / 1024, 1))
    print(f"\nserver peak RSS: {before / 1024:.1f} MB idle, {after / 1024:.1f} MB after 500 MB")
    assert grew_mb < 32, f"the server's peak RSS grew by {grew_mb:.1f} MB for a 500 MB upload"
    os.remove(copy)

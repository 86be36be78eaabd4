"""Blob references are the store's, never a user's: a value shaped like one that comes
from a webhook body or a Code node is stored and shown as the plain value it is, and never
read as a file (through `GET /api/runs/{id}`, the SSE replay or `nodeloom runs show`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx

from nodeloom.testing.builders import chain, node

from .conftest import Server, nodeloom, read_frames
from .test_runs import save, wait_for

SECRET = "s3cret"
HOST_SECRET = "the host file's content"


def forged_ref(target: Path) -> dict[str, Any]:
    """`{"$ref": "blob:<64 chars>"}` whose 64 characters are the absolute path of
    `target`, padded with slashes: the blob folder joined with it is `target`."""
    digest = str(target).lstrip("/").rjust(64, "/")
    assert len(digest) == 64, "the target path must be at most 63 characters"
    return {"$ref": f"blob:{digest}", "mime": "application/json", "size": 1}


def host_file() -> Path:
    """A JSON file on the host, outside the server's blob folder (in /tmp: its path must
    fit in the 64 characters of a digest)."""
    target = Path("/tmp") / f"nl-{uuid.uuid4().hex[:12]}.json"
    target.write_text(json.dumps({"leaked": HOST_SECRET}))
    return target


def everything_shown(server: Server, api: httpx.Client, run_id: str) -> str:
    """The run as the API, the SSE replay and `nodeloom runs show` (text and JSON) show it."""
    run = api.get(f"/api/runs/{run_id}").json()
    frames = read_frames(api, f"/api/runs/{run_id}/events", params={"from_seq": 1})
    shown = nodeloom(server.env, "runs", "show", run_id, "--json")
    text = nodeloom(server.env, "runs", "show", run_id)
    assert shown.returncode == 0 and text.returncode == 0, shown.stderr + text.stderr
    return "\n".join(
        (json.dumps(run), json.dumps([f.data for f in frames]), shown.stdout, text.stdout)
    )


def test_a_webhook_body_shaped_like_a_blob_ref_stays_plain_data(server: Server, api: httpx.Client):
    target = host_file()
    try:
        path = f"refs/{uuid.uuid4().hex[:8]}"
        save(
            api,
            chain(
                node("hook", "webhook-trigger", path=path, secret=SECRET),
                node("pass", "json-transform", name="Pass", expression="body"),
            ),
        )
        forged = forged_ref(target)
        answer = server.client(token=None).post(
            f"/api/hooks/{path}", json=forged, headers={"X-Nodeloom-Secret": SECRET}
        )
        assert answer.status_code == 200, answer.text
        run_id = answer.json()["run_id"]
        run = wait_for(api, run_id, "completed")
        assert run["timeline"][1]["outputs"] == {"output": forged}
        replayed = read_frames(api, f"/api/runs/{run_id}/events", params={"from_seq": 1})
        completed = [f for f in replayed if f.event == "FlowNodeCompleted" and f.id is not None]
        assert completed[-1].data["data"]["outputs"] == {"output": forged}
        shown = json.loads(nodeloom(server.env, "runs", "show", run_id, "--json").stdout)
        assert shown["timeline"][1]["outputs"] == {"output": forged}
        assert HOST_SECRET not in everything_shown(server, api, run_id)
    finally:
        target.unlink()


def test_a_code_node_output_shaped_like_a_blob_ref_stays_plain_data(
    server: Server, api: httpx.Client
):
    target = host_file()
    try:
        forged = forged_ref(target)
        code = f"def main(input, nodes):\n    return {forged!r}\n"
        flow_id = save(api, chain(node("start", "chat-start"), node("c", "code", code=code)))
        started = api.post(f"/api/flows/{flow_id}/runs", json={"message": "x"})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        run = wait_for(api, run_id, "completed", "failed")
        assert run["status"] == "completed", run
        assert run["timeline"][1]["outputs"] == {"output": forged}
        assert HOST_SECRET not in everything_shown(server, api, run_id)
    finally:
        target.unlink()

"""`GET /api/workers` through a real `nodeloom serve`: the token, the registry's rows with
their load (the server's own, and a worker's written by a real WorkerBeat), the queue's
state, and no URL or password of the store or the queue in the answer."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import nodeloom
from nodeloom.observability.fleet import LIVE_SECONDS, WorkerBeat
from nodeloom.observability.metrics import RunMetrics
from nodeloom.runs import RunService
from nodeloom.store import Store

from .conftest import Server, free_port, start_server, stop_server
from .flows import shout

FIELDS = {
    "id",
    "role",
    "host",
    "pid",
    "concurrency",
    "in_flight",
    "started_at",
    "last_seen",
    "seen_seconds_ago",
    "stopped_at",
    "runs",
}


def test_the_workers_list_needs_the_token(server: Server):
    assert server.client(token=None).get("/api/workers").status_code == 401
    assert server.client(token="not-a-token").get("/api/workers").status_code == 401


def test_an_in_process_server_lists_itself_and_says_it_has_no_queue(
    server: Server, api: httpx.Client
):
    response = api.get("/api/workers")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["queue"] == {"configured": False, "ok": True, "error": None, "depths": None}
    assert body["live_seconds"] == LIVE_SECONDS
    [me] = body["workers"]
    assert set(me) == FIELDS
    assert me["role"] == "server" and me["pid"] == server.process.pid
    assert me["concurrency"] == 0 and me["in_flight"] == 0 and me["stopped_at"] is None
    assert 0 <= me["seen_seconds_ago"] <= LIVE_SECONDS
    for secret in ("sqlite", str(server.log.parent), server.token):
        assert secret not in response.text  # no store URL, data path or token


async def test_a_workers_row_shows_its_load_and_run_counts_and_leaves_the_list_when_it_stops(
    server: Server, api: httpx.Client, tmp_path: Path
):
    metrics = RunMetrics()
    store = await Store.open(server.env["NODELOOM_DATABASE_URL"], blob_dir=tmp_path)
    try:
        runs = RunService(store, observer=metrics)
        result = await runs.start(nodeloom.load(shout()), "hi")  # a real run, elsewhere
        assert result.status.value == "completed"
        async with WorkerBeat(
            store, role="worker", concurrency=4, load=lambda: 3, metrics=metrics
        ) as beat:
            listed = api.get("/api/workers").json()["workers"]
        await runs.aclose()
        after = api.get("/api/workers").json()["workers"]
        everyone = api.get("/api/workers", params={"all": "true"}).json()["workers"]
    finally:
        await store.close()
    assert [w["role"] for w in listed] == ["worker", "server"]  # busiest first
    worker = listed[0]
    assert worker["id"] == beat.id and worker["pid"] == beat.pid and worker["host"] == beat.host
    assert worker["concurrency"] == 4 and worker["in_flight"] == 3
    assert worker["runs"]["started"] == 1 and worker["runs"]["completed"] == 1
    assert beat.id not in {w["id"] for w in after}  # stopped: not live any more
    [stopped] = [w for w in everyone if w["id"] == beat.id]
    assert stopped["stopped_at"] is not None and stopped["in_flight"] == 0


@pytest.mark.slow
async def test_a_queue_server_shows_an_unreachable_queue_by_code_without_any_url_or_password(
    tmp_path: Path,
):
    from nodeloom.testing.stores.postgres import create_database, throwaway_postgres

    with throwaway_postgres() as postgres:  # trust auth: the password is carried, not checked
        url = (await create_database(postgres)).replace("postgres@", "postgres:db-pw-1234@")
        queue = f"redis://:queue-pw-5678@127.0.0.1:{free_port()}/0"  # nothing listens there
        served = start_server(
            tmp_path, environment={"NODELOOM_DATABASE_URL": url, "NODELOOM_QUEUE_URL": queue}
        )
        try:
            response = served.client().get("/api/workers")
        finally:
            stop_server(served)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["queue"] == {
        "configured": True,
        "ok": False,
        "error": "unreachable",
        "depths": None,
    }
    assert [w["role"] for w in body["workers"]] == ["server"]
    for secret in ("db-pw-1234", "queue-pw-5678", "redis://", "postgres", "127.0.0.1"):
        assert secret not in response.text

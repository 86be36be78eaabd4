"""Operations through a real `nodeloom serve`: `GET /api/health` (store, queue, workers;
no token), `GET /metrics` (Prometheus text; the token) fed by real runs and by a worker's
registry row, and JSON log lines carrying the run and node ids."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

import nodeloom
from nodeloom.fleet.broker import QUEUE_NAME
from nodeloom.observability.fleet import WorkerBeat
from nodeloom.observability.metrics import RunMetrics
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import graph, node

from .conftest import Server, free_port, start_server, stop_server
from .flows import shout, slow
from .test_runs import save, wait_for

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's server writes its log as JSON lines."""
    started = start_server(tmp_path_factory.mktemp("server"), "--log-format", "json")
    try:
        yield started
    finally:
        stop_server(started)


def scrape(api: httpx.Client) -> Samples:
    response = api.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def in_flight_workers(samples: Samples) -> dict[str, float]:
    return {
        dict(labels)["worker"]: v
        for (name, labels), v in samples.items()
        if name == "nodeloom_runs_in_flight"
    }


# -- health ----------------------------------------------------------------------------------


def test_health_needs_no_token_and_shows_only_codes_and_counts(server: Server):
    response = server.client(token=None).get("/api/health")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok" and body["failing"] == []
    assert body["checks"]["store"] == {"ok": True}
    assert body["checks"]["queue"] == {"ok": True, "configured": False}
    assert body["checks"]["workers"]["ok"] is True
    assert body["checks"]["workers"]["roles"] == {"server": 1}  # the server itself
    text = response.text
    for secret in ("sqlite", str(server.log.parent), "127.0.0.1", "server-"):
        assert secret not in text  # no URL, path, host name or worker id


def test_metrics_need_the_token(server: Server):
    assert server.client(token=None).get("/metrics").status_code == 401
    assert server.client(token="not-a-token").get("/metrics").status_code == 401


# -- metrics from real runs -------------------------------------------------------------------


def test_metrics_count_a_completed_a_failed_and_a_cancelled_run_and_time_nodes_by_type(
    api: httpx.Client,
):
    before = scrape(api)
    done = api.post(f"/api/flows/{save(api, shout())}/runs", json={"message": "hi"})
    failing = graph(node("boom", "fail", message="no luck"))
    failed = api.post(f"/api/flows/{save(api, failing)}/runs", json={})
    cancelled = api.post(f"/api/flows/{save(api, slow(steps=10))}/runs", json={})
    deadline = time.monotonic() + 10
    while value(
        running := scrape(api), "nodeloom_node_duration_seconds_count", node_type="sleep"
    ) == value(before, "nodeloom_node_duration_seconds_count", node_type="sleep"):
        assert time.monotonic() < deadline, "no sleep node completed"
        time.sleep(0.05)
    assert sum(in_flight_workers(running).values()) >= 1  # the slow run, in the server
    assert api.post(f"/api/runs/{cancelled.json()['run_id']}/cancel").status_code == 200
    wait_for(api, done.json()["run_id"], "completed")
    wait_for(api, failed.json()["run_id"], "failed")
    wait_for(api, cancelled.json()["run_id"], "cancelled")
    after = scrape(api)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("nodeloom_runs_started_total") == 3
    assert moved("nodeloom_runs_completed_total") == 1
    assert moved("nodeloom_runs_failed_total") == 1
    assert moved("nodeloom_runs_cancelled_total") == 1
    assert moved("nodeloom_node_duration_seconds_count", node_type="json-transform") == 1
    assert moved("nodeloom_node_duration_seconds_count", node_type="sleep") >= 1
    slept = moved("nodeloom_node_duration_seconds_sum", node_type="sleep")
    assert slept >= 0.25  # each sleep node takes 0.3 s
    # a sleep of 0.3 s is above the 0.25 s bucket, within the 0.5 s one
    assert moved("nodeloom_node_duration_seconds_bucket", node_type="sleep", le="0.25") == 0
    assert moved("nodeloom_node_duration_seconds_bucket", node_type="sleep", le="0.5") >= 1
    assert sum(in_flight_workers(after).values()) == 0
    assert not any(name == "nodeloom_queue_depth" for name, _ in after)  # no queue


async def test_a_workers_registry_row_adds_its_counts_and_load_to_the_servers_metrics(
    server: Server, api: httpx.Client, tmp_path: Path
):
    before = scrape(api)
    metrics = RunMetrics()
    store = await Store.open(server.env["NODELOOM_DATABASE_URL"], blob_dir=tmp_path)
    try:
        runs = RunService(store, observer=metrics)
        result = await runs.start(nodeloom.load(shout()), "hi")  # a real run, elsewhere
        assert result.status.value == "completed"
        async with WorkerBeat(store, role="worker", concurrency=4, load=lambda: 3, metrics=metrics):
            after = scrape(api)
            health = server.client(token=None).get("/api/health").json()
        await runs.aclose()
    finally:
        await store.close()
    moved = value(after, "nodeloom_runs_completed_total") - value(
        before, "nodeloom_runs_completed_total"
    )
    assert moved == 1
    assert value(after, "nodeloom_node_duration_seconds_count", node_type="chat-start") >= 1
    workers = in_flight_workers(after)
    assert len(workers) == 2 and 3 in workers.values()  # the server and the worker
    assert value(after, "nodeloom_workers_live", role="worker") == 1
    assert health["checks"]["workers"]["roles"] == {"server": 1, "worker": 1}


# -- logs -------------------------------------------------------------------------------------


def test_json_log_lines_parse_and_carry_the_run_and_node_ids(server: Server, api: httpx.Client):
    failing = graph(node("boom", "fail", name="Boom", message="no luck"))
    run_id = api.post(f"/api/flows/{save(api, failing)}/runs", json={}).json()["run_id"]
    wait_for(api, run_id, "failed")
    server.client(token=None).get("/api/health", params={"token": "sekrit-value"})
    deadline = time.monotonic() + 10
    while True:
        lines = [
            json.loads(line)
            for line in server.log.read_text().splitlines()
            if not line.startswith("nodeloom serve:")  # click's messages before logging
        ]
        mine = [line for line in lines if line.get("run_id") == run_id]
        if len(mine) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    node_line = next(line for line in mine if line.get("node_id") == "boom")
    assert "failed" in node_line["message"] and "no luck" in node_line["message"]
    assert any("failed" in line["message"] and "node_id" not in line for line in mine)
    assert "sekrit-value" not in server.log.read_text()  # `?token=` masked in JSON too


# -- health: the queue and the store failing ---------------------------------------------------


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A real Redis on a free loopback port, stopped at the end."""
    port, pidfile = free_port(), tmp_path / "redis.pid"
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--daemonize", "yes"]
    command += ["--save", "", "--appendonly", "no", "--pidfile", str(pidfile)]
    subprocess.run(command, check=True, capture_output=True)
    try:
        deadline = time.monotonic() + 10
        while not pidfile.exists() or _redis(port, "PING") != "PONG":
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _redis(port, "SHUTDOWN", "NOSAVE")


def _redis(port: int, *command: str) -> str:
    done = subprocess.run(
        ["redis-cli", "-p", str(port), *command], capture_output=True, text=True, timeout=10
    )
    return done.stdout.strip()


@pytest.mark.slow
async def test_health_names_an_unreachable_queue_then_a_missing_worker_and_metrics_read_depth(
    tmp_path: Path, redis_url: str
):
    from nodeloom.observability.queue import FLEET_QUEUE
    from nodeloom.testing.stores.postgres import create_database, throwaway_postgres

    assert FLEET_QUEUE == QUEUE_NAME  # the depth /metrics reads is the fleet's queue's
    with throwaway_postgres() as postgres:  # a queue deployment needs the Postgres store
        await _queue_health(tmp_path, redis_url, [await create_database(postgres) for _ in "ab"])


async def _queue_health(tmp_path: Path, redis_url: str, databases: list[str]) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    unreachable = start_server(
        tmp_path / "a",
        environment={"NODELOOM_QUEUE_URL": closed, "NODELOOM_DATABASE_URL": databases[0]},
    )
    try:
        response = unreachable.client(token=None).get("/api/health")
        assert response.status_code == 503
        body = response.json()
        assert body["checks"]["queue"] == {"ok": False, "configured": True, "error": "unreachable"}
        assert "queue" in body["failing"] and str(closed) not in response.text
    finally:
        stop_server(unreachable)
    store = await Store.open(unreachable.env["NODELOOM_DATABASE_URL"], blob_dir=tmp_path)
    try:  # a server that stops cleanly marks its registry row stopped
        [row] = await store.list_workers(seen_within=None, stopped=True)
    finally:
        await store.close()
    assert row.role == "server" and row.stopped_at is not None

    reachable = start_server(
        tmp_path / "b",
        environment={"NODELOOM_QUEUE_URL": redis_url, "NODELOOM_DATABASE_URL": databases[1]},
    )
    try:
        port = redis_url.rsplit(":", 1)[1].split("/")[0]
        _redis(int(port), "RPUSH", f"dramatiq:{QUEUE_NAME}", "m1", "m2")  # two waiting
        response = reachable.client(token=None).get("/api/health")
        assert response.status_code == 503  # Redis answers, but no worker takes runs
        assert response.json()["failing"] == ["workers"]
        assert response.json()["checks"]["workers"]["error"] == "no_worker_seen"
        store = await Store.open(reachable.env["NODELOOM_DATABASE_URL"], blob_dir=tmp_path)
        try:
            async with WorkerBeat(store, role="worker", concurrency=2):
                healthy = reachable.client(token=None).get("/api/health")
                samples = scrape(reachable.client())
        finally:
            await store.close()
        assert healthy.status_code == 200, healthy.text
        assert healthy.json()["checks"]["queue"] == {"ok": True, "configured": True}
        assert value(samples, "nodeloom_queue_depth", queue=QUEUE_NAME) == 2
    finally:
        stop_server(reachable)


@pytest.mark.slow
async def test_health_is_503_naming_the_store_when_postgres_stops(tmp_path: Path):
    from nodeloom.testing.stores.postgres import create_database, throwaway_postgres

    with throwaway_postgres() as postgres:
        url = await create_database(postgres)
        served = start_server(tmp_path / "s", environment={"NODELOOM_DATABASE_URL": url})
        try:
            assert served.client(token=None).get("/api/health").status_code == 200
            _stop_postgres(postgres)
            response = served.client(token=None).get("/api/health")
            assert response.status_code == 503, response.text
            body = response.json()
            assert body["checks"]["store"] == {"ok": False, "error": "unreachable"}
            assert "store" in body["failing"]
            assert "postgres" not in response.text.lower()
        finally:
            stop_server(served)


def _stop_postgres(base_url: str) -> None:
    """Stop the throwaway cluster listening at `base_url` (its pg_ctl, fast mode)."""
    import glob

    from nodeloom.testing.stores.postgres import _as_postgres_user, _binary

    port = base_url.rsplit(":", 1)[1]
    for pidfile in glob.glob("/tmp/nodeloom-pg-*/data/postmaster.pid"):
        lines = Path(pidfile).read_text().splitlines()
        if len(lines) > 3 and lines[3].strip() == port:
            pg_ctl = _binary("pg_ctl")
            assert pg_ctl is not None
            data = str(Path(pidfile).parent)
            command = _as_postgres_user([pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"])
            subprocess.run(command, check=True, capture_output=True)
            return
    pytest.fail(f"no throwaway Postgres found listening on {port}")

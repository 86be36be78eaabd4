"""Schedules through real `nodeloom serve` processes on one store (a shared SQLite file,
and a real Postgres): a Schedule Trigger firing every second fires once per tick in
total however many servers run; the API and the CLI show its next fire time; pausing it
is a flag that stops the ticks until it is resumed."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

from .conftest import Server, nodeloom, start_server, stop_server
from .test_runs import save


def every_second(**extra: Any) -> dict[str, Any]:
    return chain(
        node("tick", "schedule-trigger", every="1s", **extra),
        node("echo", "json-transform", expression="scheduled_at"),
    )


async def scheduled(url: str, flow_id: str, tmp_path: Path) -> list[str]:
    """The `scheduled_at` of every run of the flow."""
    async with await Store.open(url, blob_dir=tmp_path / "blobs") as store:
        runs = await store.list_runs(flow_id=flow_id, limit=1000)
    return sorted(run.trigger["scheduled_at"] for run in runs)


@pytest.mark.slow
async def test_a_schedule_fires_once_per_tick_across_two_servers_on_one_store(
    store_url: str, tmp_path: Path
):
    environment = {"NODELOOM_DATABASE_URL": store_url}
    first = start_server(tmp_path / "a", environment=environment)
    second = start_server(tmp_path / "b", environment=environment)
    try:
        flow_id = save(first.client(), every_second())
        time.sleep(5)
    finally:
        stop_server(first)
        stop_server(second)
    ticks = await scheduled(store_url, flow_id, tmp_path)
    assert len(ticks) == len(set(ticks)), f"a tick fired twice: {ticks}"
    assert 3 <= len(ticks) <= 6, ticks
    seconds = seconds_of(ticks)
    assert seconds == list(range(seconds[0], seconds[0] + len(seconds))), "a tick was skipped"


@pytest.mark.slow
def test_a_paused_schedule_keeps_its_row_and_fires_no_tick_until_resumed(tmp_path: Path):
    server = start_server(tmp_path / "a")
    try:
        api = server.client()
        flow_id = save(api, every_second())
        (schedule,) = api.get(f"/api/flows/{flow_id}/schedules").json()["schedules"]
        assert schedule["next_fire_at"] and schedule["every"] == 1 and not schedule["paused"]
        paused = api.post(f"/api/schedules/{schedule['id']}/pause")
        assert paused.status_code == 200 and paused.json()["paused"] is True
        time.sleep(0.5)  # a tick in flight when it was paused may still start
        before = len(api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"])
        time.sleep(2.5)
        after = len(api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"])
        assert after == before
        listed = nodeloom(server.env, "schedules", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert '"paused": true' in listed.stdout and schedule["id"] in listed.stdout
        resumed = nodeloom(server.env, "schedules", "resume", schedule["id"])
        assert resumed.returncode == 0, resumed.stderr
        time.sleep(2.5)
        assert len(api.get("/api/runs", params={"flow_id": flow_id}).json()["runs"]) > after
    finally:
        stop_server(server)


@pytest.mark.slow  # the CLI's start-up
def test_an_unknown_schedule_is_404_naming_the_schedules_there_are(server: Server):
    api = server.client()
    flow_id = save(api, every_second(catch_up="all"))
    response = api.post("/api/schedules/nope/pause")
    assert response.status_code == 404
    assert "nope" in response.text and f"{flow_id}:tick" in response.text
    listed = nodeloom(server.env, "schedules", "pause", "nope")
    assert listed.returncode == 2 and "nope" in listed.stderr + listed.stdout
    api.delete(f"/api/flows/{flow_id}")  # its ticks stop with it


def seconds_of(ticks: list[str]) -> list[int]:
    return [int(time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S"))) for t in ticks]


@pytest.mark.slow
@pytest.mark.parametrize("catch_up", ["none", "all"])
async def test_ticks_missed_while_no_server_ran_follow_catch_up(catch_up: str, tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    environment = {"NODELOOM_DATABASE_URL": url, "NODELOOM_SCHEDULE_GRACE": "0.5"}
    first = start_server(tmp_path / "a", environment=environment)
    try:
        flow_id = save(first.client(), every_second(catch_up=catch_up))
        time.sleep(2.5)
    finally:
        stop_server(first)
    time.sleep(3)  # no server: three ticks or more are missed
    second = start_server(tmp_path / "b", environment=environment)
    try:
        time.sleep(2)
    finally:
        stop_server(second)
    seconds = seconds_of(await scheduled(url, flow_id, tmp_path))
    gaps = [b - a for a, b in itertools.pairwise(seconds)]
    assert len(seconds) == len(set(seconds)) and min(gaps) == 1
    if catch_up == "all":
        assert gaps == [1] * len(gaps), seconds  # every missed tick fired on the restart
    else:
        assert max(gaps) >= 4, seconds  # the missed ones were skipped


def test_every_saved_as_a_json_number_is_a_schedule_of_that_many_seconds(api: httpx.Client):
    document = chain(
        node("tick", "schedule-trigger", every=90),
        node("echo", "json-transform", expression="scheduled_at"),
    )
    flow_id = save(api, document)
    (schedule,) = api.get(f"/api/flows/{flow_id}/schedules").json()["schedules"]
    assert schedule["every"] == 90 and schedule["next_fire_at"]


def test_every_saved_as_zero_is_refused_naming_the_node_the_field_and_the_fix(api: httpx.Client):
    document = chain(
        node("tick", "schedule-trigger", name="Nightly", every=0),
        node("echo", "json-transform", expression="scheduled_at"),
    )
    response = api.post("/api/flows", json={"name": "zero", "document": document})
    assert response.status_code == 422, response.text
    [issue] = [i for i in response.json()["error"]["issues"] if i["node_id"] == "tick"]
    assert issue["field"] == "every"
    assert issue["message"].startswith("Schedule Trigger 'Nightly': every is at least 1 second")

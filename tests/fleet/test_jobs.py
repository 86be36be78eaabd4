"""Launches as data: a Job survives the queue's JSON, and `execute` runs each kind against
a RunService exactly as the server's launches did."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nodeloom.engine.result import RunStatus
from nodeloom.errors import GraphError, Issue
from nodeloom.fleet.jobs import Job, execute
from nodeloom.fleet.service import WorkerRuns
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node


@pytest.fixture
async def runs(tmp_path: Path) -> AsyncIterator[WorkerRuns]:
    async with await Store.open(f"sqlite:///{tmp_path / 'db'}") as store:
        service = WorkerRuns(store)
        try:
            yield service
        finally:
            await service.aclose()


def test_a_job_comes_back_from_its_json_unchanged():
    for job in (
        Job.start("r1", flow_id="f", flow_version=2, message={"a": 1}, chat_id="c"),
        Job.start("r2", document={"nodes": [], "edges": []}, trigger={"x": 1}),
        Job.resume("r1", {"Approve": "yes"}, replay_external=True),
        Job.rerun("r1", "n2", new_run_id="r3"),
    ):
        assert Job.from_json(json.loads(json.dumps(job.to_json()))) == job


def test_a_message_that_is_not_a_job_is_refused_naming_what_is_wrong():
    with pytest.raises(ValueError, match="unknown job field"):
        Job.from_json({"kind": "start", "run_id": "r", "flow": "x"})
    with pytest.raises(ValueError, match="job kind 'stop'; valid"):
        Job.from_json({"kind": "stop", "run_id": "r"})


async def test_each_kind_of_job_runs_against_the_run_service(runs: WorkerRuns):
    document = chain(node("a", "json-transform", expression="1"), node("q", "human-input"))
    flow_id = (await runs.store.save_flow("f", document)).flow_id

    started = await execute(Job.start("r1", flow_id=flow_id, message="hi"), runs)
    assert (started.run_id, started.status) == ("r1", RunStatus.PAUSED)
    resumed = await execute(Job.resume("r1", {"q": "Ada"}), runs)
    assert resumed.status is RunStatus.COMPLETED
    again = await execute(Job.rerun("r1", "q", new_run_id="r2"), runs)
    assert (again.run_id, again.status) == ("r2", RunStatus.PAUSED)
    assert (await runs.store.get_run("r2")).rerun_of == "r1"


async def test_a_queued_run_is_claimed_and_run_once(runs: WorkerRuns):
    document = chain(node("a", "json-transform", expression="1"))
    record = await runs.store.create_run(document=document, status="queued", trigger={})
    done = await runs.start_queued(record.id)
    assert done.status is RunStatus.COMPLETED
    with pytest.raises(Exception, match="queued"):
        await runs.start_queued(record.id)  # a second delivery: the claim fails


async def test_a_worker_vets_each_flow_against_the_allow_list_once_and_refuses_a_bad_one(
    tmp_path: Path,
):
    vetted: list[dict] = []

    def check(document: dict) -> None:  # the allow-list's contract: raise to refuse
        vetted.append(document)
        if any(n["type"] == "human-input" for n in document["nodes"]):
            raise GraphError([Issue("python_tool_refused", "refused by the test's list")])

    good = chain(node("a", "json-transform", expression="1"))
    bad = chain(node("q", "human-input"))
    async with await Store.open(f"sqlite:///{tmp_path / 'db'}") as store:
        runs = WorkerRuns(store, check=check)
        try:
            for _ in range(3):
                record = await store.create_run(document=good, status="queued", trigger={})
                assert (await runs.start_queued(record.id)).status is RunStatus.COMPLETED
            assert len(vetted) == 1  # one compiled flow: vetted once
            for _ in range(2):  # refused every time: a refused flow is never taken as vetted
                record = await store.create_run(document=bad, status="queued", trigger={})
                with pytest.raises(GraphError, match="refused by the test's list"):
                    await runs.start_queued(record.id)
                assert (await store.get_run(record.id)).status == "failed"
            assert len(vetted) == 3
        finally:
            await runs.aclose()

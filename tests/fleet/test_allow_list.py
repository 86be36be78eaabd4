"""A worker vets what it runs against the Python allow-list (NODELOOM_PYTHON_TOOLS) as a
server does: the flow of a queued run (the list may have narrowed since it was enqueued),
and every Toolset import while the worker runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodeloom.errors import GraphError
from nodeloom.fleet.delivery import Deliveries
from nodeloom.fleet.host import WorkerHost
from nodeloom.testing.builders import graph, node
from nodeloom.tools import allow_list, loader

from .conftest import Redis


async def test_a_worker_refuses_a_queued_run_whose_flow_imports_a_function_off_the_allow_list(
    database: str, redis_server: Redis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import redis

    monkeypatch.setenv("NODELOOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(allow_list.ENV_PYTHON_TOOLS, raising=False)  # nothing is allowed
    document = graph(
        node("start", "chat-start"),
        node("kit", "toolset", name="Kit", functions=["os:system"]),
    )
    client = redis.Redis.from_url(redis_server.url)
    host = WorkerHost(database, lambda job: None, Deliveries(client), lambda: 0)
    await host.open()
    try:
        assert loader.restriction is not None  # imports are checked while the worker runs
        assert host.store is not None and host.runs is not None
        record = await host.store.create_run(document=document, status="queued")
        with pytest.raises(GraphError) as refused:
            await host.runs.start_queued(record.id)
        assert refused.value.issues[0].code == allow_list.CODE
        stored = await host.store.get_run(record.id)
        assert stored.status == "failed"
        assert stored.error is not None and "NODELOOM_PYTHON_TOOLS" in stored.error["message"]
    finally:
        await host.aclose()
        client.close()
    assert loader.restriction is None

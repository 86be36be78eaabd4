"""Storage grows linearly with the work: each run adds about the same bytes, and a graph
document is stored once however many runs use it."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from nodeloom.plugins.contract import Event
from nodeloom.store import Store, database_url

NODES = 10
GRAPH = {
    "nodes": [{"id": f"n{i}", "type": "set", "data": {"value": i}} for i in range(NODES)],
    "edges": [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(NODES - 1)],
}


async def one_run(store: Store, flow_id: str, number: int) -> None:
    run = await store.create_run(flow_id=flow_id, trigger={"message": f"run {number}"})
    value: object = {"message": f"run {number}"}
    seq = 1
    for index in range(NODES):
        node = f"n{index}"
        await store.record_node(run.id, node, status="started", inputs={"input": value})
        output = {"step": index, "text": f"output of {node} in run {number}"}
        await store.record_events(
            run.id,
            [
                Event("started", None, node, node, "set", run.id, seq),
                Event(
                    "completed", {"outputs": {"output": output}}, node, node, "set", run.id, seq + 1
                ),
            ],
        )
        await store.record_node(run.id, node, status="completed", outputs={"output": output})
        value, seq = output, seq + 2
    await store.finish_run(run.id, "completed", steps=NODES)


async def size_of(store: Store, url: str) -> int:
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as connection:  # reads through the WAL
            pages = connection.execute("PRAGMA page_count").fetchone()[0]
            free = connection.execute("PRAGMA freelist_count").fetchone()[0]
            page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        connection.close()
        return (pages - free) * page_size
    engine = create_async_engine(database_url(url))
    try:
        async with engine.connect() as conn:
            result = await conn.execute(
                text(
                    "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE c.relkind = 'r' AND n.nspname = 'public'"
                )
            )
            return int(result.scalar_one())
    finally:
        await engine.dispose()


@pytest.mark.slow
async def test_a_hundred_runs_of_a_flow_grow_storage_linearly(store: Store, store_url: str):
    flow = await store.save_flow("chain", GRAPH)
    sizes = []
    for number in range(100):
        await one_run(store, flow.flow_id, number)
        if number + 1 in (10, 55, 100):
            sizes.append(await size_of(store, store_url))
    first, second = sizes[1] - sizes[0], sizes[2] - sizes[1]  # 45 runs each
    assert 0.8 < second / first < 1.25, sizes
    per_node = second / 45 / NODES
    assert per_node < 4_096, f"{per_node:.0f} bytes per node execution"
    engine = create_async_engine(database_url(store_url))
    try:
        async with engine.connect() as conn:
            documents = (await conn.execute(text("SELECT COUNT(*) FROM documents"))).scalar()
    finally:
        await engine.dispose()
    assert documents == 1

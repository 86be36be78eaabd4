"""Large values: written to the blob directory in bounded memory, once, atomically."""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from nodeloom.store import NotFoundError, Store

MB = 1024 * 1024
SIZE = 50 * MB


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await Store.open(f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path / "blobs")
    try:
        yield opened
    finally:
        await opened.close()


async def peak_while(awaitable) -> tuple[object, int]:
    """The awaitable's result and the peak of memory allocated while it ran (all threads)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = await awaitable
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape",
    ["one string", "a structure"],
)
async def test_a_50_mb_value_is_spilled_to_a_blob_in_bounded_memory(store: Store, shape: str):
    if shape == "one string":
        value: object = "x" * SIZE
    else:
        value = [{"id": n, "text": "é" * 5_000} for n in range(SIZE // 10_020)]
    run = await store.create_run()
    _, peak = await peak_while(
        store.record_node(run.id, "big", status="completed", outputs={"output": value})
    )
    assert peak < SIZE * 0.2, f"writing a 50 MB value allocated {peak / MB:.1f} MB at peak"
    (node,) = await store.node_executions(run.id, resolve=False)
    ref = node.outputs["output"]
    assert ref["size"] >= SIZE and ref["mime"] == "application/json"
    loaded, _ = await peak_while(store.load_blob(ref))
    assert loaded == value


@pytest.mark.slow
async def test_a_50_mb_blob_streams_out_in_constant_memory(store: Store):
    run = await store.create_run()
    await store.record_node(run.id, "big", status="completed", outputs={"output": "y" * SIZE})
    (node,) = await store.node_executions(run.id, resolve=False)

    async def drain() -> int:
        return sum([len(chunk) async for chunk in store.open_blob(node.outputs["output"])])

    total, peak = await peak_while(drain())
    assert total == SIZE + 2
    assert peak < 4 * MB


@pytest.mark.slow
async def test_reading_a_50_mb_string_back_holds_one_copy(store: Store):
    run = await store.create_run()
    await store.record_node(run.id, "big", status="completed", outputs={"output": "z" * SIZE})
    nodes, peak = await peak_while(store.node_executions(run.id))
    assert nodes[0].outputs["output"] == "z" * SIZE
    assert peak < SIZE * 1.2, f"reading allocated {peak / MB:.1f} MB at peak"


async def test_a_blob_file_is_named_by_the_sha256_of_its_json(store: Store):
    run = await store.create_run()
    value = "v" * 300_000
    await store.record_node(run.id, "a", status="completed", outputs={"output": value})
    (node,) = await store.node_executions(run.id, resolve=False)
    sha = node.outputs["output"]["$ref"].removeprefix("blob:")
    path = store.blob_dir / sha[:2] / sha
    assert path.read_bytes() == f'"{value}"'.encode()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    assert store.blob_dir.parent.name == "blobs" and store.blob_dir.name == store.store_id


async def test_the_same_value_twice_is_one_file_and_leaves_no_temporary_file(store: Store):
    for _ in range(2):
        run = await store.create_run()
        await store.record_node(run.id, "a", status="completed", outputs={"output": "w" * 300_000})
    files = [p for p in store.blob_dir.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].parent.name != "tmp"


async def test_a_missing_blob_file_gives_not_found_with_the_fix(store: Store):
    run = await store.create_run()
    await store.record_node(run.id, "a", status="completed", outputs={"output": "m" * 300_000})
    for path in store.blob_dir.rglob("*"):
        if path.is_file():
            path.unlink()
    with pytest.raises(NotFoundError, match="restore it from the same backup"):
        await store.node_executions(run.id)


async def test_a_smaller_threshold_spills_smaller_values(tmp_path: Path):
    store = await Store.open(
        f"sqlite:///{tmp_path / 'n.db'}", blob_dir=tmp_path / "b", blob_threshold=1_000
    )
    try:
        run = await store.create_run()
        await store.record_node(run.id, "a", status="completed", outputs={"o": "q" * 2_000, "p": 1})
        (node,) = await store.node_executions(run.id, resolve=False)
        assert node.outputs["p"] == 1 and "$ref" in node.outputs["o"]
        assert (await store.node_executions(run.id))[0].outputs == {"o": "q" * 2_000, "p": 1}
    finally:
        await store.close()

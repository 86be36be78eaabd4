"""A run whose process is killed (SIGKILL) mid-flow is found and resumed from another
process: every node that had completed runs exactly once, and the event log stays
contiguous."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

PACK = Path(__file__).parent / "pack"
NODES = 8


def nodeloom(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodeloom", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def environment(store_url: str) -> dict[str, str]:
    """The CLI's environment: the fixture pack, and each backend's database."""
    return {**os.environ, "NODELOOM_NODES_PATH": str(PACK), "NODELOOM_DATABASE_URL": store_url}


async def wait_for_completed(url: str, count: int, timeout: float = 60) -> tuple[str, set[str]]:
    """Poll the store until a run has `count` completed nodes; its id and those nodes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            store = await Store.open(url)
        except Exception:  # the other process is creating the database
            await asyncio.sleep(0.02)
            continue
        try:
            for run in await store.list_runs():
                rows = await store.node_executions(run.id)
                done = {r.node_id for r in rows if r.status == "completed"}
                if len(done) >= count:
                    return run.id, done
        finally:
            await store.close()
        await asyncio.sleep(0.02)
    raise AssertionError(f"no run reached {count} completed nodes in {timeout} s")


@pytest.mark.slow
async def test_a_killed_run_resumes_in_a_new_process_running_each_completed_node_once(
    tmp_path: Path, environment: dict[str, str]
):
    log = tmp_path / "executions.log"
    graph = tmp_path / "chain.json"
    graph.write_text(
        json.dumps(
            chain(*(node(f"m{i}", "mark", log=str(log), seconds=0.3) for i in range(1, NODES + 1)))
        )
    )
    with (tmp_path / "first.stderr").open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "nodeloom", "run", str(graph), "--json"],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            url = environment["NODELOOM_DATABASE_URL"]
            run_id, done_before = await wait_for_completed(url, 3)
            process.send_signal(signal.SIGKILL)
        finally:
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    ran_before = Counter(log.read_text().split())
    assert set(ran_before) >= done_before  # (one more may have finished unrecorded)

    listed = nodeloom("runs", "list", "--status", "interrupted", "--json", env=environment)
    assert listed.returncode == 0, listed.stderr
    assert run_id in listed.stdout

    resumed = nodeloom("runs", "resume", run_id, "--json", env=environment)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout

    ran = Counter(log.read_text().split())
    assert set(ran) == {f"m{i}" for i in range(1, NODES + 1)}
    for node_id in done_before:
        assert ran[node_id] == 1, f"{node_id} completed before the crash and ran again"
    for node_id, times in ran.items():
        assert times <= 2, f"{node_id} ran {times} times"

    store = await Store.open(environment["NODELOOM_DATABASE_URL"])
    try:
        events = await store.events(run_id)
        record = await store.get_run(run_id)
    finally:
        await store.close()
    assert record.status == "completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    types = Counter(e.event_type for e in events)
    assert (types["run_started"], types["run_resumed"], types["run_completed"]) == (1, 1, 1)
    completed = Counter(e.node_id for e in events if e.event_type == "completed")
    assert completed == {f"m{i}": 1 for i in range(1, NODES + 1)}

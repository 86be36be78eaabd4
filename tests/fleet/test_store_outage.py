"""Postgres unreachable for a while under a queue deployment: workers back off and try
again; nothing is marked failed for it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodeloom.testing.builders import chain, node
from nodeloom.testing.stores import create_database, throwaway_postgres
from nodeloom.testing.stores.postgres import _as_postgres_user, _binary

from .conftest import Fleet, Redis, marks, save, wait_for

pytestmark = pytest.mark.slow


class Cluster:
    """A Postgres cluster of this test alone, so that it can be stopped and started."""

    def __init__(self, server: str) -> None:
        self.server = server
        port = server.rsplit(":", 1)[1]
        self.data, self.options = _postmaster(port)
        pg_ctl = _binary("pg_ctl")
        assert pg_ctl is not None
        self.pg_ctl = pg_ctl

    def stop(self) -> None:
        command = [self.pg_ctl, "-D", self.data, "-m", "fast", "-w", "stop"]
        subprocess.run(_as_postgres_user(command), check=True, capture_output=True)

    def start(self) -> None:
        log = str(Path(self.data).parent / "server.log")
        command = [self.pg_ctl, "-D", self.data, "-l", log, "-w", "-o", self.options, "start"]
        subprocess.run(_as_postgres_user(command), check=True, capture_output=True)


def _postmaster(port: str) -> tuple[str, str]:
    """The data folder and options of the postmaster listening on `port` (from /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode() for a in argv if a]
        if words and words[0].endswith("postgres") and "-D" in words and port in words:
            data = words[words.index("-D") + 1]
            return data, " ".join(words[words.index("-D") + 2 :])
    raise AssertionError(f"no postmaster on port {port}")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with throwaway_postgres() as server:
        yield Cluster(server)


def test_postgres_unreachable_for_a_while_fails_no_run_and_the_run_completes(
    cluster: Cluster, redis_server: Redis, tmp_path: Path
):
    database = asyncio.run(create_database(cluster.server))
    fleet = Fleet(tmp_path, database, redis_server)
    try:
        api = fleet.server().client()
        fleet.worker()
        log = tmp_path / "marks.txt"
        document = chain(
            node("m0", "mark", path=str(log)),
            node("m1", "mark", path=str(log), seconds=2.0),
            node("m2", "mark", path=str(log)),
        )
        run_id = api.post(f"/api/flows/{save(api, document)}/runs", json={}).json()["run_id"]
        wait_for(api, run_id, "running", fleet=fleet)
        deadline = time.monotonic() + 30
        while (
            not [  # m0's completion is on record, m1 runs
                row
                for row in api.get(f"/api/runs/{run_id}").json()["timeline"]
                if row["node_id"] == "m0" and row["status"] == "completed"
            ]
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        cluster.stop()  # m1 ends while the store is away: its completion cannot be written
        time.sleep(6.0)
        cluster.start()

        run = wait_for(api, run_id, "completed", "failed", within=90, fleet=fleet)
        assert run["status"] == "completed", run
        counted = Counter(marks(log))
        assert counted[f"{run_id} m0"] == 1  # on record before the outage: never again
        # m1 (and m2 after it) ended while their completion could not be recorded: the
        # run stopped there and was resumed from what was on record, so they ran again.
        assert counted[f"{run_id} m1"] in (1, 2) and counted[f"{run_id} m2"] in (1, 2)
        assert "store is unreachable" in fleet.logs()
    finally:
        fleet.stop()

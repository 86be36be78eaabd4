"""`configure_logging("json")`, what a `nodeloom worker` process calls: every line is a
JSON object; lines logged inside a run carry its id, inside a node the node's too, and no
credential shows (a bearer token, a provider's `?key=`, a decision link). Run in a
process of its own, as a worker is."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import asyncio, logging, sys
import nodeloom
from nodeloom.observability.logs import configure_logging
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

configure_logging("json")
folder = sys.argv[1]

async def main():
    async with await Store.open(f"sqlite:///{folder}/runs.db", blob_dir=folder) as store:
        runs = RunService(store)
        flow = nodeloom.load(chain(
            node("start", "chat-start"),
            node("parse", "json-transform", expression="$number('not a number') + $x()"),
        ))
        result = await runs.start(flow, "hi")
        print("RUN", result.run_id, file=sys.stdout, flush=True)
        await runs.aclose()
    logging.getLogger("worker").warning("sent Authorization: Bearer nl_secret123 upstream")
    logging.getLogger("worker").warning("GET %s", "https://g.example/v1?key=AIzaSECRET&alt=sse")
    logging.getLogger("worker").warning("GET /api/decisions/SIGNEDLINK HTTP/1.1")

asyncio.run(main())
"""


def test_json_lines_of_a_worker_process_carry_the_run_and_node_ids(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split("RUN ", 1)[1].split()[0]
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    in_run = [line for line in lines if line.get("run_id") == run_id]
    node_line = next(line for line in in_run if line.get("node_id") == "parse")
    assert node_line["logger"] == "nodeloom.runs" and "failed" in node_line["message"]
    ended = next(line for line in in_run if line["message"].startswith(f"run {run_id} failed"))
    assert "node_id" not in ended  # the run's end is logged outside any node
    outside = [line["message"] for line in lines if line["logger"] == "worker"]
    assert all("run_id" not in line for line in lines if line["logger"] == "worker")
    assert outside == [
        "sent Authorization: Bearer *** upstream",
        "GET https://g.example/v1?key=***&alt=sse",
        "GET /api/decisions/*** HTTP/1.1",
    ]
    for secret in ("nl_secret123", "AIzaSECRET", "SIGNEDLINK"):
        assert secret not in done.stderr

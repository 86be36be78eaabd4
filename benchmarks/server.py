"""Target 8: the server under load. Many concurrent runs of an agent flow (Chat Start ->
Agent, the model pointed at the scripted LLM server) against a real `nodeloom serve` on
loopback (SQLite in a temporary folder, a token). Each run is started with
`POST /api/flows/{id}/runs` and followed by its own SSE client, read to the end; every run
must deliver all its events, `seq` 1, 2, 3, ... without a gap, ending `run_completed`.

The floor: the same runs of the same flow in this process, recorded by a RunService on
SQLite, without HTTP. Time to first event: from sending the POST (from calling
`RunService.start`, for the floor) to the first event received.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

import nodeloom
from benchmarks.agents import REPLY, MockServer
from benchmarks.report import Figure, Verdict
from nodeloom.engine.events import CallbackSink
from nodeloom.runs import RunService
from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

FLOW = chain(node("start", "chat-start"), node("agent", "agent", history=False))
WARM_RUNS = 5


@dataclass(frozen=True, slots=True)
class Batch:
    """What one batch of concurrent runs measured."""

    wall: float  # seconds, the whole batch
    first_event_ms: list[float]  # per run

    def throughput(self) -> float:
        return len(self.first_event_ms) / self.wall

    def percentile(self, p: float) -> float:
        ordered = sorted(self.first_event_ms)
        return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


class ServeProcess:
    """`nodeloom serve` in a subprocess, with its own data folder, database and token."""

    def __init__(self, folder: Path, llm_url: str) -> None:
        self.env = {
            **os.environ,
            "NODELOOM_DATA_DIR": str(folder / "data"),
            "NODELOOM_DATABASE_URL": f"sqlite:///{folder / 'nodeloom.db'}",
            "OPENAI_BASE_URL": llm_url,
            "OPENAI_API_KEY": "benchmark",
            "AGNO_TELEMETRY": "false",
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
        }
        created = subprocess.run(
            [sys.executable, "-m", "nodeloom.cli", "token", "create", "bench", "--json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"`nodeloom token create` failed: {created.stderr}")
        self.token = json.loads(created.stdout)["token"]
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = folder / "server.log"
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "nodeloom.cli", "serve", "--port", str(port)],
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    async def wait_ready(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"`nodeloom serve` exited:\n{self.log.read_text()}")
                try:
                    if (await client.get(f"{self.url}/health", timeout=1)).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError(f"`nodeloom serve` did not start in {seconds:g} s:\n{self.log}")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _check_sequence(run: str, seqs: list[int], last: str) -> None:
    if seqs != list(range(1, len(seqs) + 1)):
        raise RuntimeError(f"run {run}: the events' seq are {seqs}, not 1..{len(seqs)}")
    if last != "run_completed":
        raise RuntimeError(f"run {run} ended with {last!r}, not run_completed")


async def _http_run(client: httpx.AsyncClient, flow_id: str) -> float:
    """One run over HTTP: start it, read its event stream to the end; ms to first event."""
    started = time.perf_counter()
    accepted = await client.post(f"/api/flows/{flow_id}/runs", json={"message": "hi"})
    if accepted.status_code != 202:
        raise RuntimeError(f"starting a run answered {accepted.status_code}: {accepted.text}")
    body = accepted.json()
    first: float | None = None
    seqs: list[int] = []
    last = ""
    async with client.stream("GET", body["events_url"]) as stream:
        if stream.status_code != 200:
            raise RuntimeError(f"the event stream answered {stream.status_code}")
        async for line in stream.aiter_lines():
            if not line.startswith("data:"):
                continue
            if first is None:
                first = time.perf_counter()
            event = json.loads(line.removeprefix("data:"))
            seqs.append(event["seq"])
            last = event["event_type"]
            if last == "completed" and event["node_id"] == "agent":
                response = event["data"]["outputs"]["output"]["response"]
                if response != REPLY:
                    raise RuntimeError(f"run {body['run_id']}: the agent said {response!r}")
    _check_sequence(body["run_id"], seqs, last)
    assert first is not None
    return (first - started) * 1000


async def _http_batch(client: httpx.AsyncClient, flow_id: str, runs: int) -> Batch:
    started = time.perf_counter()
    firsts = await asyncio.gather(*(_http_run(client, flow_id) for _ in range(runs)))
    return Batch(time.perf_counter() - started, list(firsts))


async def _service_run(service: RunService, flow: nodeloom.Flow) -> float:
    """The floor's run: the same flow, recorded, in this process; ms to first event."""
    first: list[float] = []
    seqs: list[int] = []
    last: list[str] = []

    def on_event(event: nodeloom.Event) -> None:
        if not first:
            first.append(time.perf_counter())
        seqs.append(event.seq)
        last[:] = [event.event_type]

    started = time.perf_counter()
    result = await service.start(flow, "hi", sink=CallbackSink(on_event))
    if result.outputs["agent"]["output"]["response"] != REPLY:
        raise RuntimeError(f"the in-process run failed: {result.error}")
    _check_sequence(result.run_id, seqs, last[0] if last else "")
    return (first[0] - started) * 1000


async def _service_batch(service: RunService, flow: nodeloom.Flow, runs: int) -> Batch:
    started = time.perf_counter()
    firsts = await asyncio.gather(*(_service_run(service, flow) for _ in range(runs)))
    return Batch(time.perf_counter() - started, list(firsts))


async def _over_http(folder: Path, llm_url: str, runs: int) -> Batch:
    serve = ServeProcess(folder / "server", llm_url)
    try:
        await serve.wait_ready()
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
        async with httpx.AsyncClient(
            base_url=serve.url,
            headers={"Authorization": f"Bearer {serve.token}"},
            limits=limits,
            timeout=httpx.Timeout(60),
        ) as client:
            saved = await client.post("/api/flows", json={"name": "bench", "document": FLOW})
            if saved.status_code != 201:
                raise RuntimeError(f"saving the flow answered {saved.status_code}: {saved.text}")
            flow_id = saved.json()["flow_id"]
            await _http_batch(client, flow_id, WARM_RUNS)
            return await _http_batch(client, flow_id, runs)
    except Exception as exc:
        exc.add_note(f"server log:\n{serve.log.read_text(errors='replace')[-4000:]}")
        raise
    finally:
        serve.close()


async def _in_process(folder: Path, llm_url: str, runs: int) -> Batch:
    os.environ.update(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY="benchmark")
    flow = nodeloom.load(FLOW)
    store = await Store.open(f"sqlite:///{folder / 'floor.db'}", blob_dir=folder / "blobs")
    service = RunService(store, flow.registry)
    try:
        await _service_batch(service, flow, WARM_RUNS)
        return await _service_batch(service, flow, runs)
    finally:
        await service.aclose()
        await flow.aclose()
        await store.close()


async def server_load(runs: int) -> tuple[list[Figure], Verdict]:
    llm = MockServer()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            served = await _over_http(root, llm.base_url, runs)
            floor = await _in_process(root, llm.base_url, runs)
    finally:
        llm.close()
    p50, p99 = served.percentile(50), served.percentile(99)
    figures = [
        Figure(
            "server.throughput",
            f"server: {runs:,} concurrent agent runs, each streamed over SSE: throughput",
            served.throughput(),
            "runs/s",
            floor.throughput(),
            higher_is_better=True,
        ),
        Figure(
            "server.ttfe.p50",
            "server: time to first event, POST to first SSE event (p50)",
            p50,
            "ms",
            floor.percentile(50),
        ),
        Figure(
            "server.ttfe.p99",
            "server: time to first event, POST to first SSE event (p99)",
            p99,
            "ms",
            floor.percentile(99),
        ),
    ]
    verdict = Verdict(
        8,
        True,  # a lost, repeated or out-of-order event raised above
        f"{runs:,} runs, every event delivered with seq 1, 2, 3, ...: "
        f"{served.throughput():,.0f} runs/s, time to first event p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms",
    )
    return figures, verdict


def main() -> None:
    """`python -m benchmarks.server [RUNS]`: this benchmark alone."""
    figures, verdict = asyncio.run(server_load(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
    for figure in figures:
        print(figure)
    print(verdict)


if __name__ == "__main__":
    main()

"""Resume finds each recorded execution by its position in the run, not by what it
received: a `nodeloom run` process is SIGKILLed mid-run and `nodeloom runs resume` takes it
up in a new process. A parameter that renders differently (`{{ now() }}`) or a credential
upstream (recorded masked) does not make a completed node run again; the difference is
reported (`replay_mismatch`); an `external` node that was running waits for a decision
whatever it receives now."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import nodeloom
from nodeloom import RunStatus
from nodeloom.runs import RunService
from nodeloom.secrets import Vault
from nodeloom.store import NodeExecution, Store
from nodeloom.testing.builders import chain, edge, graph, node

PACK = Path(__file__).parent / "pack"
SECRET = "tok-5d1f0c-very-secret"


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodeloom", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def environment(store_url: str, tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: the fixture pack, each backend's database, and a vault
    holding the credential `tok`."""
    data = tmp_path / "data"
    Vault(data).set("tok", SECRET)
    return {
        **os.environ,
        "NODELOOM_NODES_PATH": str(PACK),
        "NODELOOM_DATABASE_URL": store_url,
        "NODELOOM_DATA_DIR": str(data),
    }


async def wait_until(
    url: str, ready: Callable[[dict[str, NodeExecution]], bool], timeout: float = 60
) -> str:
    """Poll the store until a run's executions (by node id) satisfy `ready`; its id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            store = await Store.open(url)
        except Exception:  # the other process is creating the database
            await asyncio.sleep(0.02)
            continue
        try:
            for run in await store.list_runs():
                rows = {r.node_id: r for r in await store.node_executions(run.id)}
                if ready(rows):
                    return run.id
        finally:
            await store.close()
        await asyncio.sleep(0.02)
    raise AssertionError(f"no run got there in {timeout} s")


async def run_and_kill(tmp_path: Path, document: dict, env: dict[str, str], ready: Callable) -> str:
    graph = tmp_path / "flow.json"
    graph.write_text(json.dumps(document))
    with (tmp_path / "first.stderr").open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "nodeloom", "run", str(graph), "--json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            run_id = await wait_until(env["NODELOOM_DATABASE_URL"], ready)
            process.send_signal(signal.SIGKILL)
        finally:
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return run_id


async def recorded(url: str, run_id: str) -> tuple[list, list[NodeExecution], str]:
    store = await Store.open(url)
    try:
        events = await store.events(run_id)
        rows = await store.node_executions(run_id)
        status = (await store.get_run(run_id)).status
    finally:
        await store.close()
    return events, rows, status


def completed(*node_ids: str) -> Callable[[dict[str, NodeExecution]], bool]:
    return lambda rows: all(
        n in rows and rows[n].status == "completed" and rows[n].activation is not None
        for n in node_ids
    )


@pytest.mark.slow
async def test_a_node_whose_parameter_renders_differently_or_holds_a_credential_upstream_is_not_run_again_on_resume(  # noqa: E501
    tmp_path: Path, environment: dict[str, str]
):
    log = tmp_path / "executions.log"
    # Two branches, so that neither difference hides behind the other.
    document = graph(
        node("clock", "mark", log=str(log), seconds=0.2, note="at {{ now() }}"),
        node("later", "mark", log=str(log), seconds=0.2),
        node("auth", "mark", log=str(log), seconds=0.2, token="Bearer {{ $credentials.tok }}"),
        node("use", "mark", log=str(log), seconds=0.2),
        node("tail", "mark", log=str(log), seconds=0.6),
        edge("clock", "later"),
        edge("auth", "use"),
        edge("use", "tail"),
    )
    ready = completed("clock", "later", "auth", "use")
    run_id = await run_and_kill(tmp_path, document, environment, ready)
    await asyncio.sleep(0.01)  # `{{ now() }}` renders to another millisecond on resume

    resumed = cli("runs", "resume", run_id, "--json", env=environment)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout

    ran = Counter(log.read_text().split())
    assert ran == {"clock": 1, "later": 1, "auth": 1, "use": 1, "tail": 1}, ran
    events, rows, status = await recorded(environment["NODELOOM_DATABASE_URL"], run_id)
    assert status == "completed"
    # The changed rendering is reported, with the parameter that differs; the recorded
    # outputs are used all the same.
    mismatches = [e for e in events if e.event_type == "replay_mismatch"]
    assert [e.node_id for e in mismatches] == ["clock"], [e.to_json() for e in mismatches]
    found = mismatches[0].data
    assert (found["parameters"], found["inputs"], found["replayed"]) == (["note"], [], True)
    assert found["execution"] == 1 and found["recorded_hash"] != found["hash"]
    # Positions and rendered parameters are recorded, the credential masked.
    by_id = {r.node_id: r for r in rows}
    assert by_id["auth"].parameters["token"] == "***"  # a secret parameter is masked whole
    assert by_id["clock"].parameters["note"].startswith("at 20")
    assert {r.activation for r in rows} == {""}
    text = json.dumps([r.to_json() for r in rows], default=str)
    text += json.dumps([e.to_json() for e in events], default=str)
    assert SECRET not in text


@pytest.mark.slow
async def test_an_external_node_running_at_the_kill_waits_for_a_decision_though_its_parameters_render_differently(  # noqa: E501
    tmp_path: Path, environment: dict[str, str]
):
    log = tmp_path / "executions.log"
    document = chain(
        node("first", "mark", log=str(log), seconds=0.1),
        node(
            "charge",
            "mark",
            log=str(log),
            seconds=60,
            note="charged at {{ now() }}",
            side_effects="external",
        ),
        node("after", "mark", log=str(log)),
    )
    run_id = await run_and_kill(
        tmp_path,
        document,
        environment,
        lambda rows: "charge" in rows and rows["charge"].status == "started",
    )

    resumed = cli("runs", "resume", run_id, "--json", env=environment)
    assert resumed.returncode == 3, resumed.stderr + resumed.stdout  # paused
    events, _, status = await recorded(environment["NODELOOM_DATABASE_URL"], run_id)
    assert status == "paused"
    waiting = [e for e in events if e.event_type == "waiting" and e.node_id == "charge"]
    assert len(waiting) == 1
    assert waiting[0].data["value"]["reason"] == "external_interrupted"
    mismatch = [e for e in events if e.event_type == "replay_mismatch"]
    assert [(e.node_id, e.data["parameters"], e.data["replayed"]) for e in mismatch] == [
        ("charge", ["note"], False)
    ]
    assert Counter(log.read_text().split()) == {"first": 1}

    rejected = cli(
        "runs", "resume", run_id, "--respond", "charge=reject", "--json", env=environment
    )
    assert rejected.returncode == 1, rejected.stderr + rejected.stdout
    events, _, status = await recorded(environment["NODELOOM_DATABASE_URL"], run_id)
    assert status == "failed"
    errors = [e.data["error"]["code"] for e in events if e.event_type == "error"]
    assert errors == ["external_not_replayed"]
    assert Counter(log.read_text().split()) == {"first": 1}  # never ran again


def log_of(log: Path) -> Counter[str]:
    return Counter(log.read_text().split()) if log.exists() else Counter()


async def test_each_loop_iteration_finds_its_own_record_when_a_loop_is_resumed(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    body = graph(
        node("stamp", "mark", log=str(log), note="{{ $loop.index }} at {{ now() }}"),
        node("ok", "approval", prompt="Item {{ $loop.item }}?"),
        edge("stamp", "ok"),
    )
    document = graph(node("loop", "loop", items=["a", "b"], body=body, output_node="ok"))
    first = await service.start(nodeloom.load(document, registry=registry))
    assert first.status is RunStatus.PAUSED and log_of(log) == {"loop/stamp": 1}
    results = []
    for _ in range(2):  # each resume in a new service, as another process would
        await asyncio.sleep(0.005)  # `now()` renders to another millisecond
        other = RunService(store, registry)
        try:
            results.append(await other.resume(first.run_id, answers={"loop/ok": "yes"}))
        finally:
            await other.aclose()
    assert [r.status for r in results] == [RunStatus.PAUSED, RunStatus.COMPLETED]
    assert log_of(log) == {"loop/stamp": 2}
    rows = await store.node_executions(first.run_id)
    stamps = sorted((r.activation, r.execution) for r in rows if r.node_id == "loop/stamp")
    assert stamps == [("[0]", 1), ("[1]", 2)]
    # Each resume found the stamps on record rendered at another time, and said so.
    events = await store.events(first.run_id)
    found = [(e.node_id, e.data["execution"]) for e in events if e.event_type == "replay_mismatch"]
    assert found == [("loop/stamp", 1), ("loop/stamp", 1), ("loop/stamp", 2)]


async def test_an_each_node_fed_by_concurrent_branches_finds_each_delivery_s_record_on_resume(
    service: RunService, store: Store, registry, tmp_path: Path
):
    log = tmp_path / "log"
    document = graph(
        node("slow", "mark", log=str(log), seconds=0.05, note="A"),
        node("fast", "mark", log=str(log), note="B"),
        node("each", "mark", log=str(log), activation="each", note="{{ now() }}"),
        node("gate", "approval", prompt="go on?"),
        edge("slow", "each"),
        edge("fast", "each"),
    )
    first = await service.start(nodeloom.load(document, registry=registry))
    assert first.status is RunStatus.PAUSED
    assert log_of(log) == {"slow": 1, "fast": 1, "each": 2}
    await asyncio.sleep(0.005)
    # Resumed, `slow` and `fast` replay at once and in plan order: the deliveries reach
    # `each` in another order than they did, and each still finds its own record.
    other = RunService(store, registry)
    try:
        result = await other.resume(first.run_id, answers={"gate": "yes"})
    finally:
        await other.aclose()
    assert result.status is RunStatus.COMPLETED, result.error
    assert log_of(log) == {"slow": 1, "fast": 1, "each": 2}
    rows = [r for r in await store.node_executions(first.run_id) if r.node_id == "each"]
    by_position = {r.activation: r.inputs["input"]["note"] for r in rows}
    assert by_position == {"<fast.output:input>": "B", "<slow.output:input>": "A"}
    events = await store.events(first.run_id)
    found = [e.data for e in events if e.event_type == "replay_mismatch"]
    assert [(f["parameters"], f["inputs"]) for f in found] == [(["note"], [])] * 2

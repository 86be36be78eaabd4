"""`nodeloom run` of a flow file whose Execute Flow node runs a flow saved in the run store:
the child is recorded as a child of the file's run; without a store (--ephemeral) the node
says child runs need one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from nodeloom.store import Store
from nodeloom.testing.builders import chain, node

SHOUT = chain(
    node("start", "chat-start"),
    node("shout", "json-transform", name="Shout", expression='{"text": $uppercase(message)}'),
)
PARENT = chain(node("start", "chat-start"), node("call", "execute-flow", name="Call", flow="Shout"))


def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    url = f"sqlite:///{tmp_path / 'nodeloom.db'}"

    async def save() -> None:
        async with await Store.open(url) as store:
            await store.save_flow("Shout", SHOUT)

    asyncio.run(save())
    flow = tmp_path / "parent.json"
    flow.write_text(json.dumps(PARENT))
    return flow, {"NODELOOM_DATABASE_URL": url, "NODELOOM_DATA_DIR": str(tmp_path / "data")}


def test_a_flow_file_runs_a_saved_flow_as_a_recorded_child_run(tmp_path: Path, nodeloom: Any):
    flow, env = setup(tmp_path)
    done = nodeloom("run", str(flow), "--input", "loud", "--json", env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["outputs"]["Call"] == {"output": {"text": "LOUD"}}

    async def children() -> list[Any]:
        async with await Store.open(env["NODELOOM_DATABASE_URL"]) as store:
            return await store.list_runs(parent_run_id=result["run_id"])

    [child] = asyncio.run(children())
    assert child.status == "completed" and child.parent_node == "call"
    assert child.trigger == {"message": "loud"}


def test_an_unrecorded_run_says_child_runs_need_a_run_store(tmp_path: Path, nodeloom: Any):
    flow, env = setup(tmp_path)
    done = nodeloom("run", str(flow), "--input", "x", "--json", "--ephemeral", env=env)
    assert done.returncode == 1
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["error"]["code"] == "subflows_unavailable"
    assert "'Call' (call)" in result["error"]["message"]


def test_runs_show_names_the_parent_of_a_child_run(tmp_path: Path, nodeloom: Any):
    flow, env = setup(tmp_path)
    done = nodeloom("run", str(flow), "--input", "loud", "--json", env=env)
    parent = json.loads(done.stdout.splitlines()[-1])["run_id"]

    async def child_id() -> str:
        async with await Store.open(env["NODELOOM_DATABASE_URL"]) as store:
            return (await store.list_runs(parent_run_id=parent))[0].id

    shown = nodeloom("runs", "show", asyncio.run(child_id()), env={**env, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert f"child of   {parent} (node call)" in shown.stdout

"""Saved flows cannot run arbitrary Python in the server process: a Toolset function or an
Ethan `kind: python` tool naming `os:system` (or any module, or a file) is refused at
validation with 422 naming the node and NODELOOM_PYTHON_TOOLS; with the module on that
allow-list the flow runs. The CLI still runs a local `file.py#fn`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from nodeloom.testing.builders import graph, node

from .conftest import Server, nodeloom, serving, start_server, stop_server
from .test_runs import wait_for

TOOLS_MODULE = "trust_allowed_tools"


def ethan(impl: str) -> dict[str, Any]:
    """An Ethan flow whose one node calls the Python tool `impl` with `text`."""
    return yaml.safe_load(
        f"""
        tools:
          - {{id: t, kind: python, impl: "{impl}"}}
        graph:
          nodes:
            - id: call
              type: tool
              uses: t
              inputs: {{text: "hello"}}
              map: {{set: {{out: "{{{{ result }}}}"}}}}
        """
    )


def toolset(*functions: str) -> dict[str, Any]:
    return graph(
        node("start", "chat-start"),
        node("kit", "toolset", name="Kit", functions=list(functions)),
    )


def refused(response: httpx.Response, node_id: str, field: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    (issue,) = [
        i for i in error["issues"] if i["code"] == "python_tool_refused" and i["field"] == field
    ]
    assert issue["node_id"] == node_id, issue
    assert "NODELOOM_PYTHON_TOOLS" in issue["message"] and node_id in issue["message"]
    return dict(issue)


def test_a_toolset_naming_os_system_is_refused_when_saved_or_validated(api: httpx.Client):
    document = toolset("os:system", "tools.py#helper")
    issue = refused(
        api.post("/api/flows", json={"name": "rce", "document": document}), "kit", "functions[0]"
    )
    assert "'os'" in issue["message"]
    checked = api.post("/api/validate", json={"document": document}).json()
    assert checked["valid"] is False
    fields = {i["field"] for i in checked["issues"] if i["code"] == "python_tool_refused"}
    assert fields == {"functions[0]", "functions[1]"}  # a file is never imported either


def test_an_ethan_python_tool_naming_os_system_is_refused(api: httpx.Client):
    response = api.post("/api/flows", json={"name": "rce", "document": ethan("os:system")})
    refused(response, "call", "tool.impl")
    assert api.get("/api/flows").json()["flows"] == [] or all(
        f["name"] != "rce" for f in api.get("/api/flows").json()["flows"]
    )


@pytest.fixture(scope="module")
def allowing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose operator allows one module of functions, importable from its path."""
    folder = tmp_path_factory.mktemp("allowed")
    (folder / f"{TOOLS_MODULE}.py").write_text("def shout(text):\n    return text.upper()\n")
    yield from serving(
        tmp_path_factory,
        {"NODELOOM_PYTHON_TOOLS": f"{TOOLS_MODULE}, json:dumps", "PYTHONPATH": _path(folder)},
    )


def _path(folder: Path) -> str:
    import os

    return os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)


def test_an_allow_listed_module_runs_and_anything_else_is_still_refused(allowing: Server):
    api = allowing.client()
    saved = api.post("/api/flows", json={"name": "ok", "document": ethan(f"{TOOLS_MODULE}:shout")})
    assert saved.status_code == 201, saved.text
    started = api.post(f"/api/flows/{saved.json()['flow_id']}/runs", json={"inputs": {}})
    assert started.status_code == 202, started.text
    run = wait_for(api, started.json()["run_id"], "completed", "failed")
    assert run["status"] == "completed", run["error"]
    assert "HELLO" in json.dumps(run["timeline"])
    for impl in ("os:system", "json:loads"):  # another function of an allowed-by-name module
        response = api.post("/api/flows", json={"name": "no", "document": ethan(impl)})
        refused(response, "call", "tool.impl")


def test_the_cli_still_runs_a_local_file_function(server: Server, tmp_path: Path):
    (tmp_path / "tools.py").write_text("def shout(text):\n    return text.upper()\n")
    graph = tmp_path / "flow.yaml"
    graph.write_text(yaml.safe_dump(ethan("tools.py#shout")))
    done = nodeloom(server.env, "run", str(graph), "--json")
    assert done.returncode == 0, done.stderr
    assert "HELLO" in done.stdout


@pytest.mark.slow
def test_a_flow_saved_under_a_wider_allow_list_is_refused_when_run(
    tmp_path_factory: pytest.TempPathFactory,
):
    folder = tmp_path_factory.mktemp("narrowed")
    wide = start_server(folder, environment={"NODELOOM_PYTHON_TOOLS": "os"})
    try:
        saved = wide.client().post(
            "/api/flows", json={"name": "rce", "document": ethan("os:system")}
        )
        assert saved.status_code == 201, saved.text
    finally:
        stop_server(wide)
    narrow = start_server(folder)  # the same data: the operator removed `os`
    try:
        api = narrow.client()
        started = api.post(f"/api/flows/{saved.json()['flow_id']}/runs", json={"inputs": {}})
        refused(started, "call", "tool.impl")
        assert (
            api.get("/api/runs", params={"flow_id": saved.json()["flow_id"]}).json()["runs"] == []
        )
    finally:
        stop_server(narrow)

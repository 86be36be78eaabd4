"""Saved flows: create, list, read, new versions, delete; validation before anything is
saved, and 422/404 (never 500) for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from nodeloom.testing.builders import graph, node

from .conftest import Server, nodeloom
from .flows import shout, slow

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_a_flow_is_saved_as_version_1_and_listed(api: httpx.Client):
    created = api.post("/api/flows", json={"name": "Shout", "document": shout()})
    assert created.status_code == 201
    saved = created.json()
    assert saved["version"] == 1 and saved["name"] == "Shout"
    assert saved["document"]["nodes"][1]["type"] == "json-transform"

    listed = api.get("/api/flows").json()["flows"]
    assert {"id": saved["flow_id"], "name": "Shout", "latest_version": 1}.items() <= next(
        f for f in listed if f["id"] == saved["flow_id"]
    ).items()
    fetched = api.get(f"/api/flows/{saved['flow_id']}").json()
    assert fetched == saved


def test_put_saves_a_new_version_and_every_version_stays_readable(api: httpx.Client):
    flow_id = api.post("/api/flows", json={"name": "Slow", "document": slow(2)}).json()["flow_id"]
    updated = api.put(f"/api/flows/{flow_id}", json={"document": slow(3)})
    assert updated.status_code == 200
    assert updated.json()["version"] == 2 and updated.json()["name"] == "Slow"
    renamed = api.put(f"/api/flows/{flow_id}", json={"name": "Slower", "document": slow(4)})
    assert renamed.json()["version"] == 3 and renamed.json()["name"] == "Slower"

    versions = api.get(f"/api/flows/{flow_id}/versions").json()["versions"]
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert all(v["size"] > 0 for v in versions)
    first = api.get(f"/api/flows/{flow_id}", params={"version": 1}).json()
    assert len(first["document"]["nodes"]) == 2
    assert len(api.get(f"/api/flows/{flow_id}").json()["document"]["nodes"]) == 4


def test_an_invalid_graph_is_refused_with_every_issue_and_nothing_is_saved(api: httpx.Client):
    before = api.get("/api/flows").json()["flows"]
    bad = graph(node("a", "no-such-type"), node("b", "json-transform"))
    response = api.post("/api/flows", json={"name": "Bad", "document": bad})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_graph"
    located = {(issue["code"], issue["node_id"]) for issue in error["issues"]}
    assert ("unknown_node_type", "a") in located
    assert any(issue["node_id"] == "b" for issue in error["issues"])  # missing expression
    assert api.get("/api/flows").json()["flows"] == before


def test_an_invalid_new_version_is_refused_and_the_flow_keeps_its_versions(api: httpx.Client):
    flow_id = api.post("/api/flows", json={"name": "Keep", "document": shout()}).json()["flow_id"]
    response = api.put(f"/api/flows/{flow_id}", json={"document": graph(node("x", "nope"))})
    assert response.status_code == 422
    assert len(api.get(f"/api/flows/{flow_id}/versions").json()["versions"]) == 1


def test_validate_checks_without_saving(api: httpx.Client):
    before = api.get("/api/flows").json()["flows"]
    good = api.post("/api/validate", json={"document": shout()})
    assert good.status_code == 200
    assert good.json()["valid"] is True and good.json()["issues"] == []
    assert [n["id"] for n in good.json()["document"]["nodes"]] == ["start", "shout"]
    bad = api.post("/api/validate", json={"document": graph(node("a", "nope"))}).json()
    assert bad["valid"] is False
    assert bad["issues"][0]["code"] == "unknown_node_type"
    assert bad["issues"][0]["node_id"] == "a"
    assert api.get("/api/flows").json()["flows"] == before


def test_validate_converts_a_file_of_another_format_to_the_native_document(api: httpx.Client):
    text = (EXAMPLES / "workflow" / "review.workflow.json").read_text()
    answer = api.post("/api/validate", json={"document": text}).json()
    assert answer["valid"] is True, answer["issues"]
    native = answer["document"]
    original = json.loads(text)
    assert {n["id"] for n in native["nodes"]} >= {n["id"] for n in original["nodes"]}
    types = {n["id"]: n["type"] for n in native["nodes"]}
    assert types["start"] == "workflow-start" and types["writer"] == "workflow-agent"
    # The converted document saves and loads as any native one.
    saved = api.post("/api/flows", json={"name": "Converted", "document": native})
    assert saved.status_code == 201, saved.text


def test_validate_reads_yaml_text_and_refuses_what_is_not_a_graph(api: httpx.Client):
    yaml_text = "nodes:\n  - {id: start, type: chat-start}\nedges: []\n"
    assert api.post("/api/validate", json={"document": yaml_text}).json()["valid"] is True
    for text, says in (
        ("- just\n- a list\n", "must hold an object"),
        ("nodes: [unclosed", "neither JSON nor YAML"),
        ("a: &x [1]\nb: [*x, *x]\n", "aliases"),
    ):
        response = api.post("/api/validate", json={"document": text})
        assert response.status_code == 422, text
        error = response.json()["error"]
        assert error["code"] == "invalid_request" and says in error["message"]


def test_a_deleted_flow_is_gone_from_the_list_and_reads(api: httpx.Client):
    flow_id = api.post("/api/flows", json={"name": "Gone", "document": shout()}).json()["flow_id"]
    assert api.delete(f"/api/flows/{flow_id}").status_code == 204
    assert flow_id not in {f["id"] for f in api.get("/api/flows").json()["flows"]}
    assert api.get(f"/api/flows/{flow_id}").status_code == 404
    assert api.put(f"/api/flows/{flow_id}", json={"document": shout()}).status_code == 404
    assert api.delete(f"/api/flows/{flow_id}").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/flows/unknown"),
        ("GET", "/api/flows/unknown/versions"),
        ("DELETE", "/api/flows/unknown"),
    ],
)
def test_an_unknown_flow_is_404_with_a_json_error(api: httpx.Client, method, path):
    response = api.request(method, path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert "unknown" in response.json()["error"]["message"]


def test_an_unknown_version_is_404(api: httpx.Client):
    flow_id = api.post("/api/flows", json={"name": "V", "document": shout()}).json()["flow_id"]
    response = api.get(f"/api/flows/{flow_id}", params={"version": 7})
    assert response.status_code == 404
    assert "versions 1 to 1" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": "x"},
        {"document": {}},
        {"name": "", "document": {}},
        {"name": "x", "document": "examples/hello.json"},  # a path is not a document
        {"name": "x", "document": [1, 2]},
        {"name": "x", "document": {"nodes": "not a list"}},
        {"name": "x", "document": {"nodes": [{"id": 1, "type": None}], "edges": [{}]}},
        {"name": "x", "document": {"nodes": [], "edges": [{"source": "a", "target": "b"}]}},
        {"name": "x", "document": {"format": "no-such-format"}},
    ],
)
def test_bad_input_is_422_never_500(api: httpx.Client, body):
    response = api.post("/api/flows", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] in ("invalid_request", "invalid_graph")
    assert error["message"]


def test_a_body_that_is_not_json_is_422(api: httpx.Client):
    response = api.post(
        "/api/flows", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"


def test_an_unknown_endpoint_is_a_json_404(api: httpx.Client):
    response = api.get("/api/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_catalogue_is_what_nodeloom_nodes_json_prints(server: Server, api: httpx.Client):
    catalogue = api.get("/api/nodes").json()
    printed = nodeloom(server.env, "nodes", "--json")
    assert catalogue == json.loads(printed.stdout)
    types = {n["id"] for n in catalogue["nodes"]}
    assert {"json-transform", "chat-start", "sleep"} <= types  # built-ins and the pack
    assert catalogue["socket_types"] and catalogue["common_parameters"]
    assert catalogue["coercions"][0].keys() == {"from", "to"}
    assert catalogue["failures"] == []

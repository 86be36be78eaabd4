"""The connection rule's shared cases, run against the engine.

frontend/src/flow/connection-cases.json holds the cases of the one connection rule: which
socket types connect, and which wires a graph accepts and why not. The editor's Vitest
suite (frontend/src/flow/connections.test.ts) runs the same file against the UI's
`checkConnection`, so the canvas and the engine cannot drift apart. Here each wire is
added to the cases' graph and validated: a refused wire's first new issue has the expected
code and a message matching `reason`; an accepted wire brings no new issue.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from nodeloom.graph.sockets import can_connect, connection_refusal
from nodeloom.graph.validation import validate
from nodeloom.plugins.registry import Registry

CASES_FILE = Path(__file__).parents[2] / "frontend" / "src" / "flow" / "connection-cases.json"
CASES: dict[str, Any] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
WIRE = re.compile(  # "id: source.handle -> target.handle" (the id is optional)
    r"^(?:(?P<id>[\w-]+): )?(?P<source>[\w-]+)\.(?P<sh>[\w-]+)"
    r" -> (?P<target>[\w-]+)\.(?P<th>[\w-]+)$"
)


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.discover(use_entry_points=False, use_environment=False)


def catalogue_slice(catalogue: dict[str, Any], types: list[str]) -> dict[str, Any]:
    """What the rule reads of the served catalogue (GET /api/nodes), for `types`."""
    by_id = {n["id"]: n for n in catalogue["nodes"]}

    def port(p: dict[str, Any]) -> dict[str, Any]:
        shown = {"id": p["id"], "socket": p["socket"], "multiple": p["multiple"]}
        return shown | ({"repeat": p["repeat"]} if p.get("repeat") else {})

    def node(n: dict[str, Any]) -> dict[str, Any]:
        repeats = {p["repeat"] for p in n["outputs"] if p.get("repeat")}
        return {
            "id": n["id"],
            "execution_mode": n["execution_mode"],
            "inputs": [port(p) for p in n["inputs"]],
            "outputs": [port(p) for p in n["outputs"]],
            "parameters": [
                {"id": p["id"], "type": p["type"], "hybrid": p["hybrid"]}
                | ({"socket": p["socket"]} if p["hybrid"] else {})
                for p in n["parameters"]
                if p["hybrid"] or p["id"] in repeats
            ],
        }

    return {
        "nodes": [node(by_id[t]) for t in types],
        "socket_types": [
            {"id": s["id"], "structural": s["structural"]} for s in catalogue["socket_types"]
        ],
        "coercions": catalogue["coercions"],
    }


def wire_of(text: str, default_id: str = "new") -> dict[str, str]:
    match = WIRE.match(text)
    assert match, f"a wire is written 'id: source.handle -> target.handle', got {text!r}"
    return {
        "id": match["id"] or default_id,
        "source": match["source"],
        "sourceHandle": match["sh"],
        "target": match["target"],
        "targetHandle": match["th"],
    }


def issues_of(edges: list[dict[str, str]], registry: Registry) -> list[tuple[str, str]]:
    nodes = [{"id": n["id"], "type": n["type"], "data": n.get("data", {})} for n in CASES["nodes"]]
    checked = validate({"nodes": nodes, "edges": edges}, registry)
    return [(issue.code, issue.message) for issue in checked.issues]


def test_the_cases_catalogue_is_the_engines(registry):
    types = [n["id"] for n in CASES["catalogue"]["nodes"]]
    expected = catalogue_slice(registry.to_json(), types)
    assert CASES["catalogue"] == expected, (
        f"{CASES_FILE.name}'s catalogue differs from the engine's; replace it with:\n"
        + json.dumps(expected, indent=2)
    )


@pytest.mark.parametrize(("source", "target", "ok"), CASES["sockets"])
def test_socket_types_connect_as_the_cases_say(source, target, ok):
    assert can_connect(source, target) is ok
    if not ok:
        assert f"'{source}' socket cannot connect to a '{target}' socket" in connection_refusal(
            source, target
        )


@pytest.mark.parametrize("case", CASES["refusals"], ids=lambda c: f"{c[0]}->{c[1]}")
def test_a_refused_socket_pair_lists_what_it_connects_to(case):
    source, target, pattern = case
    assert re.search(pattern, connection_refusal(source, target))


@pytest.mark.parametrize(
    "case",
    [c for c in CASES["wires"] if c.get("only") != "ui"],
    ids=lambda c: c["it"],
)
def test_the_engine_accepts_or_refuses_each_wire_as_the_cases_say(case, registry):
    edges = [wire_of(e) for e in case.get("edges", [])]
    before = issues_of(edges, registry)
    after = issues_of([*edges, wire_of(case["wire"])], registry)
    new = [issue for issue in after if issue not in before]
    if case["ok"]:
        assert new == []
    else:
        # The editor names the first rule a wire breaks; the engine reports every issue.
        assert new and new[0][0] == case["code"], new
        assert re.search(case["reason"], new[0][1]), new[0][1]

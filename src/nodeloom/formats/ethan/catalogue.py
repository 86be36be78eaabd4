"""What the `ethan-*` node definitions share: type ids, ports and the `spec` parameter.

Imported by the definitions, so it must stay light (the plugin contract and the standard
library only).

Every converted node has:

- `spec` (code, JSON): the Ethan node as converted. It is kept raw because it holds Jinja
  templates (`{{ state.x }}`), which are not nodeloom expressions: the node renders them.
- `routes` (json): the target node id of each outgoing route; output port `route-<i>`
  fires when route i is taken. The route's condition (`when`) is in the spec.
- output port `result` (main): the node's result (a tool's normalized response, an LLM's
  reply, ...); it fires whenever the node succeeds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import Parameter, Port

# Ethan node type -> native type id. `start` and `on_error` have no Ethan counterpart: the
# converter adds them (the run's entry, and the router of a node's `on_error`).
TYPE_IDS: dict[str, str] = {
    "start": "ethan-start",
    "tool": "ethan-tool",
    "llm": "ethan-llm",
    "router": "ethan-router",
    "loop": "ethan-loop",
    "subgraph": "ethan-subgraph",
    "noop": "ethan-noop",
    "on_error": "ethan-on-error",
}

INPUT = Port(
    "input",
    required=False,
    description="A value arrives here each time a route of another node leads to this one; "
    "the node runs once per arrival (activation each).",
)
RESULT = Port("result", label="Result", description="The node's result, when it succeeds.")
ROUTE = Port(
    "route-{index}",
    label="→ {name}",
    repeat="routes",
    description="Fires when the route to the node named in `routes` is taken.",
)


def spec_parameter(description: str) -> Parameter:
    return Parameter(
        "spec",
        "code",
        "Ethan node",
        required=True,
        language="json",
        description=description
        + " Kept raw: its Jinja templates are rendered by the node when it runs.",
    )


ROUTES = Parameter(
    "routes",
    "json",
    "Routes",
    default=[],
    description="The target node id of each outgoing route, in order; port `route-<i>` "
    "fires when route i is taken. Conditions live in the spec.",
)


def check_spec(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The spec is a JSON object and `routes` a list of node ids, as many as the spec's."""
    text = data.get("spec")
    if not isinstance(text, str):
        return []  # the generic check reports a missing or non-text spec
    try:
        spec = json.loads(text)
    except ValueError as exc:
        return [("spec", f"the spec is not JSON: {exc}")]
    if not isinstance(spec, dict):
        return [("spec", "the spec is a JSON object")]
    routes = data.get("routes", [])
    if not isinstance(routes, list) or not all(isinstance(r, str) for r in routes):
        return [("routes", "routes is a list of node ids")]
    declared = spec.get("routes", [])
    if isinstance(declared, list) and len(declared) != len(routes):
        return [
            (
                "routes",
                f"routes lists {len(routes)} targets but the spec has {len(declared)} routes",
            )
        ]
    return []


__all__ = ["INPUT", "RESULT", "ROUTE", "ROUTES", "TYPE_IDS", "check_spec", "spec_parameter"]

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

MAX_CONCURRENCY = 64


def _check(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The body must end in one node, or say which node's output is the result."""
    body = data.get("body")
    if not isinstance(body, dict):
        return [("body", 'the body is an inner graph {"nodes": [...], "edges": [...]}')]
    nodes = [n for n in body.get("nodes") or [] if isinstance(n, dict)]
    names = {n.get("id") for n in nodes} | {
        (n.get("data") or {}).get("name") for n in nodes if isinstance(n.get("data"), dict)
    }
    output_node = data.get("output_node")
    if output_node:
        if output_node not in names:
            return [("output_node", f"output_node '{output_node}' is not a node of the body")]
        return []
    sources = {e.get("source") for e in body.get("edges") or [] if isinstance(e, dict)}
    ends = [n.get("id") for n in nodes if n.get("id") not in sources]
    if len(ends) > 1:
        listed = ", ".join(f"'{e}'" for e in ends)
        return [
            (
                "output_node",
                f"the body ends in several nodes ({listed}); set output_node "
                "to the one whose output is the iteration's result",
            )
        ]
    return []


definition = NodeDefinition(
    id="loop",
    name="Loop",
    category="flow",
    description="Runs an inner graph (the body) for each item of a list, or repeatedly "
    "until a condition holds; outputs the list of the body's results, one per iteration.",
    icon="Repeat",
    inputs=(Port("input", required=False),),
    outputs=(Port("output", description="[the body's result of each iteration]"),),
    parameters=(
        Parameter("mode", "enum", "Mode", default="forEach", options=("forEach", "repeat")),
        Parameter(
            "items",
            "json",
            "Items",
            description="forEach: the list to iterate "
            "(usually an expression); default: the spine input when it is a list",
        ),
        Parameter(
            "body",
            "graph",
            "Body",
            required=True,
            default=None,
            description='The inner graph {"nodes": [...], "edges": [...]}; '
            "its entry node receives the current item as its input",
        ),
        Parameter(
            "until",
            "expression",
            "Until",
            description="repeat: stop when this is "
            "true; $json is the iteration's result, $loop.index its index",
        ),
        Parameter(
            "concurrency",
            "integer",
            "Concurrency",
            default=1,
            minimum=1,
            maximum=MAX_CONCURRENCY,
            description="forEach: how many iterations run at once; the results stay in item "
            "order. 1 runs them one after the other. A body that may wait for a person "
            "needs 1.",
        ),
        Parameter("max_iterations", "integer", "Max iterations", default=10, minimum=1),
        Parameter(
            "on_max_iterations",
            "enum",
            "At max iterations",
            default="stop",
            options=("stop", "error"),
            description="repeat: what happens when max_iterations is reached before `until` holds",
        ),
        Parameter(
            "output_node",
            "string",
            "Result node",
            description="The body node whose "
            "output is the iteration's result; default: the body's only end node",
        ),
    ),
    check=_check,
)

"""The compiled form of a checked graph, shared by every run of a flow.

Everything the run loop needs per node is computed here once: incoming edges in file
order, outgoing edges by port, which inputs are spine and which are side sockets, the
static part of the parameters and how to render the dynamic part. A run then only keeps
small per-node lists (pending edge counts, outputs), so its cost does not depend on how
the graph was written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from nodeloom.expressions import Template
from nodeloom.graph.credential_placement import CREDENTIALS_ROOT
from nodeloom.graph.ordering import ancestors
from nodeloom.graph.parameters import RAW_TYPES, SETTINGS, RetryPolicy, parse_retry
from nodeloom.graph.validation import CheckedGraph
from nodeloom.plugins.contract import ERROR_PORT, NodeDefinition, Port
from nodeloom.plugins.registry import LoadedExecutor, Registry


@dataclass(slots=True)
class PlannedEdge:
    index: int
    id: str
    source: int
    source_port: str
    target: int
    target_port: str
    spine: bool  # into a spine port (data); False: into a hybrid parameter's side socket
    source_socket: str
    target_socket: str


# How one parameter gets its value at run time: (parameter id, wire edges, renderer).
Renderer = Callable[[Any], Any]  # scope -> value


@dataclass(slots=True)
class DynamicParameter:
    id: str
    wires: list[int]  # edge indices into this parameter's side socket
    render: Renderer | None  # expression renderer, or None (use the inline value)


@dataclass(slots=True)
class PlannedNode:
    index: int
    id: str
    name: str
    type: str
    definition: NodeDefinition
    executor: LoadedExecutor
    static: dict[str, Any]  # defaults + inline values that need no work at run time
    dynamic: list[DynamicParameter]
    in_edges: list[int]  # all incoming edges, in file order
    spine_ports: dict[str, list[int]]  # spine input port -> its incoming edges
    side_edges: list[int]
    out_edges: list[int]
    multiple_ports: frozenset[str]
    output_ports: frozenset[str]
    main_port: str
    on_error: str
    retry: RetryPolicy | None
    timeout: float | None
    side_effects: str = "pure"  # the node's setting, else its type's; wired tools: external
    pinned: dict[str, Any] | None = None  # outputs used instead of executing the node
    each: bool = False  # activation each: runs once per delivered value, never joins
    bodies: dict[str, FlowPlan] = field(default_factory=dict)
    body_result: dict[str, int] = field(default_factory=dict)  # param -> result node index

    @property
    def is_root(self) -> bool:
        return not self.in_edges


@dataclass(slots=True)
class FlowPlan:
    nodes: list[PlannedNode]
    edges: list[PlannedEdge]
    names: dict[str, int]  # node name and node id -> index
    indegree: list[int]
    roots: list[int]
    sinks: list[int]
    variables: dict[str, Any]
    prefix: str = ""
    may_wait: bool = False  # some node (or a Loop body's) may wait for human input

    def ancestors(self, index: int) -> set[int]:
        """Every node with a path to `index` (any edge kind)."""
        return ancestors(index, lambda i: (self.edges[e].source for e in self.nodes[i].in_edges))

    def descendants(self, index: int) -> set[int]:
        return ancestors(index, lambda i: (self.edges[e].target for e in self.nodes[i].out_edges))


def compile_plan(checked: CheckedGraph, registry: Registry) -> FlowPlan:
    """Compile a checked graph (without issues) into a FlowPlan of its flow part: nodes with
    a structural role and structural edges are phase 1's (see nodeloom.engine.build)."""
    graph = checked.graph
    roles, structural = checked.structure.roles, checked.structure.edges
    flow_nodes = [node for node in graph.nodes if node.id not in roles]
    index = {node.id: i for i, node in enumerate(flow_nodes)}
    edges: list[PlannedEdge] = []
    for edge in graph.edges:
        if edge.id in structural or edge.source not in index or edge.target not in index:
            continue
        source_info, target_info = checked.infos[edge.source], checked.infos[edge.target]
        in_port: Port = target_info.inputs[edge.target_handle]
        target_definition = target_info.definition
        assert target_definition is not None
        edges.append(
            PlannedEdge(
                index=len(edges),
                id=edge.id,
                source=index[edge.source],
                source_port=edge.source_handle,
                target=index[edge.target],
                target_port=edge.target_handle,
                spine=in_port.id in _spine_inputs(target_definition),
                source_socket=source_info.outputs[edge.source_handle].socket,
                target_socket=in_port.socket,
            )
        )
    incoming: list[list[int]] = [[] for _ in flow_nodes]
    outgoing: list[list[int]] = [[] for _ in flow_nodes]
    for edge in edges:
        incoming[edge.target].append(edge.index)
        outgoing[edge.source].append(edge.index)
    # Tools can do anything: an agent with tools wired in has external side effects.
    tooled = {e.target for e in graph.edges if e.id in structural and e.target_handle == "tools"}
    nodes = [
        _plan_node(i, checked, node.id, edges, incoming[i], outgoing[i], registry, tooled)
        for i, node in enumerate(flow_nodes)
    ]
    names: dict[str, int] = {}
    for node in nodes:
        names[node.id] = node.index
        names[node.name] = node.index
    return FlowPlan(
        nodes=nodes,
        edges=edges,
        names=names,
        indegree=[len(n.in_edges) for n in nodes],
        roots=[n.index for n in nodes if n.is_root],
        sinks=[n.index for n in nodes if not n.out_edges],
        variables=dict(graph.variables),
        prefix=checked.prefix,
        may_wait=any(
            n.definition.interactive or any(b.may_wait for b in n.bodies.values()) for n in nodes
        ),
    )


def _plan_node(
    i: int,
    checked: CheckedGraph,
    node_id: str,
    edges: list[PlannedEdge],
    in_edges: list[int],
    out_edges: list[int],
    registry: Registry,
    tooled: set[str],
) -> PlannedNode:
    info = checked.infos[node_id]
    node, definition = info.node, info.definition
    assert definition is not None
    spine_ports: dict[str, list[int]] = {}
    side_edges: list[int] = []
    wires: dict[str, list[int]] = {}
    for e in in_edges:
        edge = edges[e]
        if edge.spine:
            spine_ports.setdefault(edge.target_port, []).append(e)
        else:
            side_edges.append(e)
            wires.setdefault(edge.target_port, []).append(e)

    static: dict[str, Any] = {}
    dynamic: list[DynamicParameter] = []
    for parameter in definition.parameters:
        value = node.data.get(parameter.id, parameter.default)
        render = (
            _renderer(value, parameter.id, info.templates, parameter.secret)
            if parameter.type not in ("expression", *RAW_TYPES)
            else None
        )
        if render is None and parameter.id not in wires:
            static[parameter.id] = value
        else:
            static[parameter.id] = value if render is None else None
            dynamic.append(DynamicParameter(parameter.id, wires.get(parameter.id, []), render))

    timeout = node.data.get("timeout")
    if definition.interactive and definition.parameter("timeout") is not None:
        timeout = None  # a person's deadline is the node's own (wait_for_input's wake_at)
    planned = PlannedNode(
        index=i,
        id=node.id,
        name=node.name,
        type=node.type,
        definition=definition,
        executor=registry.executor(node.type),
        static=static,
        dynamic=dynamic,
        in_edges=in_edges,
        spine_ports=spine_ports,
        side_edges=side_edges,
        out_edges=out_edges,
        multiple_ports=_multiple_ports(definition),
        output_ports=_output_ports(frozenset(info.outputs)),
        main_port=definition.main_port,
        on_error=node.data.get("on_error", "stop"),
        retry=parse_retry(node.data["retry"]) if "retry" in node.data else None,
        timeout=float(timeout) if isinstance(timeout, (int, float)) else None,
        side_effects=node.data.get("side_effects")
        or ("external" if node_id in tooled else definition.side_effects),
        pinned=node.data.get("pinned"),
        each=node.data.get("activation") == "each",
    )
    for param, body in info.bodies.items():
        plan = compile_plan(body, registry)
        planned.bodies[param] = plan
        result_name = node.data.get("output_node")
        if isinstance(result_name, str) and result_name in plan.names:
            planned.body_result[param] = plan.names[result_name]
        elif plan.sinks:
            planned.body_result[param] = plan.sinks[-1]
    return planned


@lru_cache(maxsize=1024)
def _multiple_ports(definition: NodeDefinition) -> frozenset[str]:
    return frozenset(p.id for p in definition.inputs if p.multiple)


@lru_cache(maxsize=4096)
def _output_ports(ports: frozenset[str]) -> frozenset[str]:
    return ports | {ERROR_PORT}


@lru_cache(maxsize=1024)
def _spine_inputs(definition: NodeDefinition) -> frozenset[str]:
    return frozenset(p.id for p in definition.inputs)


def _renderer(
    value: Any, path: str, templates: dict[str, Template], secret: bool = False
) -> Renderer | None:
    """A function scope -> rendered value, or None if `value` holds no expression. In a
    `secret` parameter, what a text renders from `$credentials` is masked whole."""
    if isinstance(value, str):
        template = templates.get(path)
        if template is None:
            return None
        if secret and CREDENTIALS_ROOT in template.roots:
            return _masked_whole(template)
        return template.render
    if isinstance(value, dict):
        parts = {k: _renderer(v, f"{path}.{k}", templates, secret) for k, v in value.items()}
        if not any(parts.values()):
            return None

        def render_dict(scope: Any) -> dict[str, Any]:
            return {k: (parts[k](scope) if parts[k] else v) for k, v in value.items()}

        return render_dict
    if isinstance(value, list):
        items = [_renderer(v, f"{path}[{n}]", templates, secret) for n, v in enumerate(value)]
        if not any(items):
            return None

        def render_list(scope: Any) -> list[Any]:
            return [(items[n](scope) if items[n] else v) for n, v in enumerate(value)]

        return render_list
    return None


def _masked_whole(template: Template) -> Renderer:
    """Renders `template` and has the run mask the whole result (`Bearer <upper(key)>`,
    a slice, an encoding), not only the credential's own value."""

    def render_secret(scope: Any) -> Any:
        value = template.render(scope)
        scope.mask(value)
        return value

    return render_secret


__all__ = ["SETTINGS", "FlowPlan", "PlannedEdge", "PlannedNode", "compile_plan"]

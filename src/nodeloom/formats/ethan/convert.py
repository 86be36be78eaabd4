"""An Ethan YAML document -> a native graph of `ethan-*` nodes (see docs/formats/ethan.md).

    __start__ (ethan-start)  ->  each entry node of `graph` (a node nothing leads to)
    a node                   ->  ethan-<type>, `activation: each`, one output port
                                 `route-<i>` per route (edge, router case/default), chosen
                                 by the node after its work
    on_error                 ->  native `on_error: error_output`, and an `ethan-on-error`
                                 node `<id>.on_error` on the error port that routes to
                                 `to` and/or (resume) along the node's own routes
    loop                     ->  ethan-loop whose `body` inner graph holds a copy of the
                                 body node (run through FlowContext.run_body)
    subgraph                 ->  ethan-subgraph whose `graph` inner graph holds the
                                 subgraph, converted again at each depth up to
                                 --max-subgraph-depth (deeper: the node fails when run)
    retry / timeout          ->  the native `retry` / `timeout` settings
    graph.max_steps          ->  `limits.max_steps` (+1 for the start node)

Nodes no route can reach are left out (they could never run).
"""

from __future__ import annotations

import json
from typing import Any

from nodeloom.errors import GraphError, Issue
from nodeloom.formats.ethan import checks, providers, schema, templates, tools, topology
from nodeloom.formats.ethan.catalogue import TYPE_IDS
from nodeloom.formats.ethan.schema import (
    Document,
    Graph,
    LlmNode,
    LoopNode,
    Node,
    RouterNode,
    SubgraphNode,
    ToolNode,
)
from nodeloom.formats.ethan.wiring import native_edge, place, reachable, route_edges, unique
from nodeloom.formats.options import FormatOptions

DEFAULT_MAX_SUBGRAPH_DEPTH = 8
MAX_NODES = 5000
START = checks.START


def convert(document: Any, options: FormatOptions) -> dict[str, Any]:
    """The native graph document, or GraphError listing every problem, located."""
    parsed, issues = schema.parse(document)
    declared, tool_issues = tools.declarations(parsed, options.base_dir)
    messages, prompt_issues = checks.check_prompts(parsed)
    issues += tool_issues + prompt_issues + checks.check_state(parsed)
    graphs = [g for g in (parsed.graph, *parsed.subgraphs.values()) if g is not None]
    for graph in graphs:
        issues += checks.check_graph(graph, parsed, set(declared), parsed.prompts.partials)
        issues += topology.loop_body_cycles(graph)
    model = None
    if any(isinstance(node, LlmNode) for graph in graphs for _, node in graph.nodes):
        model, model_issues = providers.resolve(parsed.meta)
        issues += model_issues
    if issues or parsed.graph is None:
        raise GraphError(issues or [Issue("invalid_graph", "the file has no graph")])
    depth = options.max_subgraph_depth or DEFAULT_MAX_SUBGRAPH_DEPTH
    return _Converter(parsed, declared, messages, model, depth).document()


class _Converter:
    def __init__(
        self,
        document: Document,
        declared: dict[str, dict[str, Any]],
        messages: dict[str, list[dict[str, str]]],
        model: dict[str, Any] | None,
        max_depth: int,
    ) -> None:
        self.doc = document
        self.declared = declared
        self.messages = messages
        self.model = model
        self.max_depth = max_depth
        self.partials = document.prompts.partials
        self.count = 0

    def document(self) -> dict[str, Any]:
        root = self.doc.graph
        assert root is not None
        body = self.graph(root, depth=0)
        entry_routes = [_route(e, None, "edge") for e in topology.entries(root)]
        start = self.native(
            START,
            "start",
            {
                "id": START,
                "type": "start",
                "graph": root.name,
                "inputs": root.model.inputs,
                "outputs": root.model.outputs,
                "state": self.doc.state.model_dump(),
                "timeout": root.model.timeout.seconds if root.model.timeout else None,
                "routes": entry_routes,
            },
        )
        nodes, edges = [start, *body["nodes"]], [*route_edges(start), *body["edges"]]
        nodes, edges = reachable(nodes, edges, [START])
        place(nodes, edges, [START])
        graph: dict[str, Any] = {
            "format": "nodeloom",
            "limits": {"max_steps": root.model.max_steps + 1},
            "variables": {"ethan": {"inputs": root.model.inputs, "outputs": root.model.outputs}},
            "nodes": nodes,
            "edges": edges,
        }
        if self.doc.meta.name:
            graph["name"] = self.doc.meta.name
        return graph

    # -- graphs ---------------------------------------------------------------------------

    def graph(self, graph: Graph, depth: int) -> dict[str, Any]:
        """The native nodes and edges of `graph` (entry nodes without incoming edges)."""
        ids = {node.id for _, node in graph.nodes}
        taken = set(ids)
        nodes: list[dict[str, Any]] = []
        edges: list[dict[str, Any]] = []
        for _, node in graph.nodes:
            routes = self.routes(node, graph)
            converted = self.node(node, graph, depth, routes, in_body=False)
            nodes.append(converted)
            edges += route_edges(converted)
            if node.on_error is not None:
                helper = self.on_error(node, graph, routes, unique(f"{node.id}.on_error", taken))
                nodes.append(helper)
                edges.append(native_edge(node.id, "error", helper["id"]))
                edges += route_edges(helper)
        entries = topology.entries(graph) if depth else []
        if depth:
            nodes, edges = reachable(nodes, edges, entries)
            place(nodes, edges, entries)
        return {"nodes": nodes, "edges": edges}

    def routes(self, node: Node, graph: Graph) -> list[dict[str, Any]]:
        routes = []
        if isinstance(node, RouterNode):
            routes += [_route(case.to, self.expand(case.when), "case") for case in node.cases]
            if node.default:
                routes.append(_route(node.default, None, "default"))
        routes += [
            _route(edge.to, self.expand(edge.when), "edge")
            for _, edge in graph.edges
            if edge.from_ == node.id
        ]
        if isinstance(node, LoopNode):
            body = _node_by_id(graph, node.body)
            if body.on_error is not None and body.on_error.to:
                routes.append(_route(body.on_error.to, None, "body_error"))
        return routes

    # -- nodes ----------------------------------------------------------------------------

    def node(
        self,
        node: Node,
        graph: Graph,
        depth: int,
        routes: list[dict[str, Any]],
        *,
        in_body: bool,
    ) -> dict[str, Any]:
        self.count += 1
        if self.count > MAX_NODES:
            raise GraphError(
                [
                    Issue(
                        "invalid_graph",
                        f"expanding the subgraphs makes more than {MAX_NODES} nodes; lower "
                        "--max-subgraph-depth or make fewer subgraph calls per subgraph",
                        field="subgraphs",
                    )
                ]
            )
        spec: dict[str, Any] = {"id": node.id, "type": node.type, "graph": graph.name}
        for key in ("name", "description"):
            if getattr(node, key):
                spec[key] = getattr(node, key)
        directives = getattr(node, "map", None)
        spec["map"] = self.expand(directives.model_dump()) if directives is not None else None
        spec["routes"] = routes
        kind = node.type
        extra: dict[str, Any] = {}
        retry, timeout = node.retry, node.timeout
        if isinstance(node, ToolNode):
            tool = self.declared[node.uses]
            retry = (
                retry or _tool_model(self.doc, node.uses, "retry") or self.doc.meta.defaults.retry
            )
            timeout = (
                timeout
                or _tool_model(self.doc, node.uses, "timeout")
                or self.doc.meta.defaults.timeout
            )
            if tool["kind"] == "subgraph":
                kind = "subgraph"
                inputs = {**tool["config"], **node.inputs}
                extra = self.subgraph(tool["impl"], inputs, depth, spec, as_tool=node.uses)
            else:
                spec["tool"] = tool
                spec["inputs"] = self.expand(node.inputs)
        elif isinstance(node, LlmNode):
            assert self.model is not None
            spec["prompt"] = node.prompt
            spec["messages"] = self.messages[node.prompt]
            spec["model"] = {k: v for k, v in self.model.items() if k != "timeout"}
            retry = retry or self.doc.meta.defaults.retry
            timeout = timeout or self.doc.meta.defaults.timeout
            if timeout is None and self.model.get("timeout"):
                timeout = schema.Timeout(seconds=self.model["timeout"])
        elif isinstance(node, LoopNode):
            body = _node_by_id(graph, node.body)
            spec["body"] = node.body
            spec["until"] = self.expand(node.until)
            spec["max_iterations"] = node.max_iterations
            spec["body_on_error"] = body.on_error.model_dump() if body.on_error else None
            copy = self.node(body, graph, depth, [], in_body=True)
            extra["body"] = {"nodes": [copy], "edges": []}
        elif isinstance(node, SubgraphNode):
            extra = self.subgraph(node.graph, node.inputs, depth, spec, as_tool=None)
        if node.on_error is not None:
            spec["on_error"] = node.on_error.model_dump()
        native = self.native(node.id, kind, spec)
        data = native["data"]
        data.update(extra)
        if retry is not None and retry.max_attempts > 1:
            data["retry"] = {
                "max_attempts": retry.max_attempts,
                "initial_interval": retry.backoff,
                "backoff_factor": 1.0,
                "max_interval": retry.backoff,
            }
        if timeout is not None:
            data["timeout"] = timeout.seconds
        if node.on_error is not None:
            data["on_error"] = "continue" if in_body else "error_output"
        return native

    def subgraph(
        self,
        name: str,
        inputs: dict[str, Any],
        depth: int,
        spec: dict[str, Any],
        *,
        as_tool: str | None,
    ) -> dict[str, Any]:
        sub = self.doc.subgraphs[name]
        spec.update(
            subgraph=name,
            inputs=self.expand(inputs),
            declared_inputs=sub.model.inputs,
            outputs=sub.model.outputs,
            depth=depth + 1,
            max_depth=self.max_depth,
            depth_exceeded=depth + 1 > self.max_depth,
            timeout=sub.model.timeout.seconds if sub.model.timeout else None,
            as_tool=as_tool,
        )
        if depth + 1 > self.max_depth:
            return {}
        return {"graph": self.graph(sub, depth + 1)}

    def on_error(
        self, node: Node, graph: Graph, routes: list[dict[str, Any]], helper_id: str
    ) -> dict[str, Any]:
        assert node.on_error is not None
        taken: list[dict[str, Any]] = []
        if node.on_error.to:
            taken.append(_route(node.on_error.to, None, "error_to"))
        if node.on_error.resume:
            taken += [r for r in routes if r["kind"] in ("edge", "case", "default")]
        spec = {
            "id": node.id,
            "type": node.type,
            "graph": graph.name,
            "on_error": node.on_error.model_dump(),
            "routes": taken,
        }
        if isinstance(node, LlmNode):
            spec["prompt"] = node.prompt
        elif isinstance(node, ToolNode):
            spec["tool"] = {"id": node.uses}
        return self.native(helper_id, "on_error", spec)

    def native(self, node_id: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": node_id,
            "type": TYPE_IDS[kind],
            "data": {
                "activation": "each",
                "spec": _json(spec),
                "routes": [route["to"] for route in spec["routes"]],
            },
        }

    def expand(self, value: Any) -> Any:
        """`value` with the partials of its templates expanded (they are checked already)."""
        if isinstance(value, str):
            if templates.has_template(value):
                return templates.expand_partials(value, self.partials)
            return value
        if isinstance(value, dict):
            return {key: self.expand(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.expand(item) for item in value]
        return value


# -- helpers --------------------------------------------------------------------------------


def _route(target: str, when: Any, kind: str) -> dict[str, Any]:
    return {"to": target, "when": when, "kind": kind}


def _node_by_id(graph: Graph, node_id: str) -> Node:
    return next(node for _, node in graph.nodes if node.id == node_id)


def _tool_model(document: Document, tool_id: str, key: str) -> Any:
    for _, tool in document.tools:
        if tool.id == tool_id:
            return getattr(tool, key)
    return None


def _json(spec: dict[str, Any]) -> str:
    return json.dumps(spec, ensure_ascii=False)


__all__ = ["DEFAULT_MAX_SUBGRAPH_DEPTH", "START", "convert"]

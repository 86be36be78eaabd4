"""Rules a schema cannot express, checked before anything runs. Each problem is an Issue
located by its path in the file (and the Ethan node id, inside a node):

- references: a node's tool (`uses`), prompt, subgraph (`graph`), router targets, loop
  `body`, `on_error.to` and edge ends name things that exist (`unknown_reference`,
  `dangling_edge`); ids are unique (`duplicate_node_id`);
- templates compile (`invalid_template`), partials exist and do not include each other in
  a cycle, conditions use known JsonLogic operations (`invalid_condition`);
- a graph has an entry node and no cycle made only of plain edges (`topology.py`);
- the state: `init` keys are in `shape`, `shape` types are understood, `init` fits them.

The model is checked by `providers.py`, the tool declarations by `tools.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.ethan import logic, shapes, templates, topology
from nodeloom.formats.ethan.frames import BOOK
from nodeloom.formats.ethan.schema import (
    Document,
    Graph,
    LlmNode,
    LoopNode,
    MapOp,
    Node,
    RouterNode,
    SubgraphNode,
    ToolNode,
)

START = "__start__"  # the id of the start node the converter adds


def check_state(document: Document) -> list[Issue]:
    issues = []
    state = document.state
    for key, type_text in state.shape.items():
        problem = shapes.problem(type_text)
        if problem:
            issues.append(Issue("invalid_graph", problem, field=f"state.shape.{key}"))
    for key, value in state.init.items():
        if state.shape and key not in state.shape:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"'{key}' is not in state.shape; add it there or remove it from init",
                    field=f"state.init.{key}",
                )
            )
        elif key in state.shape:
            mismatch = shapes.mismatch(state.shape[key], value)
            if mismatch:
                issues.append(Issue("invalid_graph", mismatch, field=f"state.init.{key}"))
        if key == BOOK:
            issues.append(_reserved(f"state.init.{key}", None))
    return issues


def check_prompts(document: Document) -> tuple[dict[str, list[dict[str, str]]], list[Issue]]:
    """Each prompt's messages with partials expanded (system, messages, assistant, user),
    and the issues."""
    prompts = document.prompts
    expanded: dict[str, list[dict[str, str]]] = {}
    issues: list[Issue] = []
    for name, source in prompts.partials.items():
        for partial in templates.partial_names(source):
            if partial not in prompts.partials:
                issues.append(_unknown_partial(partial, f"prompts.partials.{name}", prompts))
    for name, template in prompts.templates.items():
        where = f"prompts.templates.{name}"
        parts: list[tuple[str, str, str]] = []
        if template.system:
            parts.append(("system", template.system, f"{where}.system"))
        for index, message in enumerate(template.messages or []):
            parts.append((message.role, message.content, f"{where}.messages[{index}].content"))
        if template.assistant:
            parts.append(("assistant", template.assistant, f"{where}.assistant"))
        if template.user:
            parts.append(("user", template.user, f"{where}.user"))
        messages = []
        for role, source, field in parts:
            try:
                text = templates.expand_partials(source, prompts.partials)
            except KeyError as exc:
                issues.append(_unknown_partial(str(exc.args[0]), field, prompts))
                continue
            except ValueError as exc:
                issues.append(Issue("invalid_template", str(exc), field=field))
                continue
            error = templates.check(text)
            if error:
                issues.append(Issue("invalid_template", f"does not compile: {error}", field=field))
            messages.append({"role": role, "content": text})
        expanded[name] = messages
    return expanded, issues


def _unknown_partial(name: str, field: str, prompts: Any) -> Issue:
    return _unknown("partial", name, list(prompts.partials), field, None)


def check_graph(
    graph: Graph,
    document: Document,
    tool_ids: set[str],
    partials: dict[str, str],
) -> list[Issue]:
    issues: list[Issue] = []
    ids: dict[str, int] = {}
    for index, node in graph.nodes:
        if "/" in node.id or node.id == START:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"the id {node.id!r} cannot be used: nodeloom names the nodes of inner "
                    f"graphs '<outer>/<inner>' and the start node '{START}'",
                    node_id=node.id,
                    field=f"{graph.node_where(index)}.id",
                )
            )
        if node.id in ids:
            issues.append(
                Issue(
                    "duplicate_node_id",
                    f"the id '{node.id}' is already used by {graph.node_where(ids[node.id])}",
                    node_id=node.id,
                    field=f"{graph.node_where(index)}.id",
                )
            )
        else:
            ids[node.id] = index
    if not graph.model.nodes:
        issues.append(
            Issue("invalid_graph", "the graph has no nodes", field=f"{graph.where}.nodes")
        )
    for index, node in graph.nodes:
        issues.extend(_node_issues(graph, index, node, ids, document, tool_ids, partials))
    for index, edge in graph.edges:
        where = f"{graph.where}.edges[{index}]"
        for end, target in (("from", edge.from_), ("to", edge.to)):
            if target not in ids:
                issues.append(
                    Issue(
                        "dangling_edge",
                        f"the edge's {end} '{target}' is not a node of this graph"
                        + _suggest(target, list(ids)),
                        edge_id=f"{edge.from_}->{edge.to}",
                        field=f"{where}.{end}",
                    )
                )
        if edge.when is not None:
            issues.extend(_condition(edge.when, f"{where}.when", partials, None))
    if any(i.code in ("dangling_edge", "unknown_reference") for i in issues):
        return issues
    issues.extend(topology.shape_issues(graph))
    return issues


def _node_issues(
    graph: Graph,
    index: int,
    node: Node,
    ids: dict[str, int],
    document: Document,
    tool_ids: set[str],
    partials: dict[str, str],
) -> Iterator[Issue]:
    where = graph.node_where(index)
    nid = node.id

    def reference(kind: str, name: str, known: Iterable[str], field: str) -> Iterator[Issue]:
        known = list(known)
        if name not in known:
            yield _unknown(kind, name, known, f"{where}.{field}", nid)

    if isinstance(node, ToolNode):
        yield from reference("tool", node.uses, sorted(tool_ids), "uses")
        yield from _templates(node.inputs, f"{where}.inputs", partials, nid)
    elif isinstance(node, LlmNode):
        yield from reference("prompt", node.prompt, document.prompts.templates, "prompt")
    elif isinstance(node, SubgraphNode):
        yield from reference("subgraph", node.graph, document.subgraphs, "graph")
        yield from _templates(node.inputs, f"{where}.inputs", partials, nid)
    elif isinstance(node, RouterNode):
        for case_index, case in enumerate(node.cases):
            field = f"cases[{case_index}]"
            yield from reference("node", case.to, ids, f"{field}.to")
            yield from _condition(case.when, f"{where}.{field}.when", partials, nid)
        if node.default is not None:
            yield from reference("node", node.default, ids, "default")
    elif isinstance(node, LoopNode):
        yield from reference("node", node.body, ids, "body")
        if node.until is not None:
            yield from _condition(node.until, f"{where}.until", partials, nid)
    if node.on_error is not None and node.on_error.to is not None:
        yield from reference("node", node.on_error.to, ids, "on_error.to")
    directives = getattr(node, "map", None)
    if isinstance(directives, MapOp):
        yield from _map_issues(directives, f"{where}.map", partials, nid)


def _map_issues(
    directives: MapOp, where: str, partials: dict[str, str], nid: str
) -> Iterator[Issue]:
    for part in ("set", "merge"):
        values = getattr(directives, part)
        for key in values:
            if not key or any(not piece for piece in key.split(".")):
                yield Issue(
                    "invalid_graph",
                    f"'{key}' is not a key or a.b path",
                    node_id=nid,
                    field=f"{where}.{part}.{key}",
                )
            if key.split(".")[0] == BOOK:
                yield _reserved(f"{where}.{part}.{key}", nid)
        yield from _templates(values, f"{where}.{part}", partials, nid)
    for index, key in enumerate(directives.delete):
        if key.split(".")[0] == BOOK:
            yield _reserved(f"{where}.delete[{index}]", nid)
    yield from _templates(directives.delete, f"{where}.delete", partials, nid)


def _templates(
    value: Any, where: str, partials: dict[str, str], nid: str | None
) -> Iterator[Issue]:
    if isinstance(value, str):
        if not templates.has_template(value):
            return
        try:
            text = templates.expand_partials(value, partials)
        except KeyError as exc:
            yield _unknown("partial", str(exc.args[0]), list(partials), where, nid)
            return
        except ValueError as exc:
            yield Issue("invalid_template", str(exc), node_id=nid, field=where)
            return
        error = templates.check(text)
        if error:
            yield Issue(
                "invalid_template", f"{value!r} does not compile: {error}", node_id=nid, field=where
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _templates(item, f"{where}.{key}", partials, nid)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _templates(item, f"{where}[{index}]", partials, nid)


def _condition(
    logic_value: Any, where: str, partials: dict[str, str], nid: str | None
) -> list[Issue]:
    template_issues = list(_templates(logic_value, where, partials, nid))
    if template_issues:
        return template_issues
    return [
        Issue("invalid_condition", problem, node_id=nid, field=where)
        for problem in logic.problems(logic_value)
    ]


def _unknown(kind: str, name: str, known: list[str], field: str, nid: str | None) -> Issue:
    listed = ", ".join(known) if known else "none"
    return Issue(
        "unknown_reference",
        f"there is no {kind} '{name}'{_suggest(name, known)}; {kind}s: {listed}",
        node_id=nid,
        field=field,
    )


def _suggest(name: str, known: list[str]) -> str:
    hint = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean '{hint[0]}'?)" if hint else ""


def _reserved(field: str, nid: str | None) -> Issue:
    return Issue(
        "invalid_graph",
        f"'{BOOK}' is reserved for nodeloom's bookkeeping; use another key",
        node_id=nid,
        field=field,
    )


__all__ = ["START", "check_graph", "check_prompts", "check_state"]

"""A checked plan as a native graph: a chain of plan-* nodes, with Toolsets for its tools.

    plan-start ─▶ nodes[0] ─▶ nodes[1] ─▶ ... ─▶ plan-finish
                     ▲ tools      ▲ tools
       Toolset "Plan tools" (--tools functions), Toolset "Built-in tools"

Node ids are `start`, `nodes[<index>]` (the node's place in the file) and `finish`; names are
the plan's `node_name`s (a repeated name gets " (2)", " (3)", ...). The threads live in the
run's shared state (`state["plan"]`); the finish node makes the run's result. Text is kept
literal: a `{{` in a prompt is escaped so nodeloom does not read it as an expression.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.plan.catalogue import ToolCatalogue
from nodeloom.formats.plan.schema import Plan, PlanNode, node_id
from nodeloom.models import ModelConfigError, parse_reference

MODEL_VARIABLE = "NODELOOM_PLAN_MODEL"
DEFAULT_MODEL = "openai:gpt-4o-mini"
FUNCTIONS_ID = "tools"
BUILTINS_ID = "builtin-tools"
_SPACING = 260


def plan_model(environ: Mapping[str, str] | None = None) -> tuple[str, list[Issue]]:
    """The model every LLM call of the plan uses: NODELOOM_PLAN_MODEL, else the default."""
    environ = os.environ if environ is None else environ
    value = environ.get(MODEL_VARIABLE, "").strip() or DEFAULT_MODEL
    try:
        parse_reference(value, where=MODEL_VARIABLE)
    except ModelConfigError as exc:
        return value, [Issue("model_not_configured", str(exc), field=MODEL_VARIABLE)]
    return value, []


def to_native(plan: Plan, catalogue: ToolCatalogue, model: str) -> dict[str, Any]:
    names = _Names(
        {"start", "finish", FUNCTIONS_ID, BUILTINS_ID}
        | {node_id(i) for i in range(len(plan.nodes))}
    )
    steps = [
        _step(index, node, names.take(node.node_name), model)
        for index, node in enumerate(plan.nodes)
    ]
    start = _node("start", "plan-start", 0, 0, name=names.take("Start"), task=_literal(plan.task))
    finish = _node("finish", "plan-finish", len(steps) + 1, 0, name=names.take("Finish"))
    chain = [start, *steps, finish]
    toolsets, tool_edges = _toolsets(plan, catalogue, names)
    document: dict[str, Any] = {
        "format": "nodeloom",  # read back as a native graph, never as a plan again
        "name": plan.name or "plan",
        "nodes": [*chain, *toolsets],
        "edges": _spine(chain) + tool_edges,
    }
    if len(chain) > 1000:  # the default step limit
        document["limits"] = {"max_steps": len(chain)}
    return document


def _spine(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"spine-{index}",
            "source": a["id"],
            "sourceHandle": "output",
            "target": b["id"],
            "targetHandle": "input",
        }
        for index, (a, b) in enumerate(itertools.pairwise(chain))
    ]


def _toolsets(
    plan: Plan, catalogue: ToolCatalogue, names: _Names
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A Toolset of the --tools functions the plan uses and one of the built-in toolsets it
    uses, each wired into the nodes using one of its tools (functions first: the first
    Toolset offering a name wins)."""
    used = {index: _tools_of(node) for index, node in enumerate(plan.nodes)}
    every = [name for names_of in used.values() for name in names_of]
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    references = catalogue.references_for(every)
    if references:
        name = names.take("Plan tools")
        nodes.append(_node(FUNCTIONS_ID, "toolset", 1, 1, name=name, functions=references))
        edges += _tool_edges(FUNCTIONS_ID, used, set(catalogue.functions))
    builtins = catalogue.toolsets_for(every)
    if builtins:
        offered = {
            tool
            for tool, toolset in catalogue.builtins.items()
            if toolset in builtins and tool not in catalogue.functions
        }
        name = names.take("Built-in tools")
        nodes.append(_node(BUILTINS_ID, "toolset", 1, 2, name=name, toolsets=builtins))
        edges += _tool_edges(BUILTINS_ID, used, offered)
    return nodes, edges


def _step(index: int, node: PlanNode, name: str, model: str) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": name,
        "thread_id": node.thread_id,
        "task_prompt": node.prompt,
        "tools": node.tool_names,
        "enable_tool_loop": bool(node.enable_tool_loop),
        "tools_limit": dict(node.tools_limit or {}),
        "data_in_thread": node.source_thread,
        "data_in_slice": node.data_in_slice,
        "data_out": bool(node.data_out),
        "data_out_thread": node.target_thread,
        "data_out_description": node.data_out_description or "",
        "model": model,
    }
    if node.node_type == "tool-first":
        data["initial_tool_name"] = node.initial_tool_name
        data["initial_tool_args"] = dict(node.initial_tool_args or {})
    kind = f"plan-{node.node_type}"
    return _node(node_id(index), kind, index + 1, 0, **{k: _literal(v) for k, v in data.items()})


def _tools_of(node: PlanNode) -> list[str]:
    names = list(node.tool_names)
    if node.initial_tool_name and node.initial_tool_name not in names:
        names.append(node.initial_tool_name)
    return names


def _tool_edges(source: str, used: dict[int, list[str]], offered: set[str]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{source}->{node_id(index)}",
            "source": source,
            "sourceHandle": "tools",
            "target": node_id(index),
            "targetHandle": "tools",
        }
        for index, names in used.items()
        if offered.intersection(names)
    ]


def _node(identifier: str, kind: str, column: int, row: int, **data: Any) -> dict[str, Any]:
    return {
        "id": identifier,
        "type": kind,
        "data": data,
        "position": {"x": column * _SPACING, "y": row * _SPACING // 2},
    }


def _literal(value: Any) -> Any:
    """`value` with every `{{` escaped, so the engine reads the text as written."""
    if isinstance(value, str):
        return value.replace("{{", "{{ '{{' }}") if "{{" in value else value
    if isinstance(value, dict):
        return {key: _literal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_literal(item) for item in value]
    return value


class _Names:
    """Display names, unique in the graph and distinct from every node id."""

    def __init__(self, ids: set[str]) -> None:
        self.taken = set(ids)

    def take(self, wanted: str) -> str:
        name, number = wanted, 2
        while name in self.taken:
            name = f"{wanted} ({number})"
            number += 1
        self.taken.add(name)
        return name


__all__ = ["DEFAULT_MODEL", "MODEL_VARIABLE", "plan_model", "to_native"]

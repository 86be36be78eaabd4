"""The Ethan YAML document as pydantic models, checked strictly and piece by piece.

`parse(document)` returns the parsed `Document` and every problem found, each an `Issue`
located by its path in the file (`field`: `graph.nodes[2].map.set`; `node_id`: the Ethan
node's id when the problem is inside a node). Types are strict (a string is not a number,
`"3"` is not `3`); an unknown field is `unknown_field` with a did-you-mean; a node whose
`type` is not one of tool, llm, router, loop, subgraph, noop is `unknown_node_type`.
Sections are parsed separately, so one bad node does not hide the problems of another.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from nodeloom.errors import Issue
from nodeloom.formats.ethan.issues import from_validation, unknown_field, wrong_type


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Retry(_Model):
    max_attempts: int = Field(1, ge=1)
    backoff: float = Field(1.0, ge=0)


class Timeout(_Model):
    seconds: float = Field(gt=0)

    @model_validator(mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:  # `timeout: 45` is short for `timeout: {seconds: 45}`
        if isinstance(value, int | float) and not isinstance(value, bool):
            return {"seconds": value}
        return value


class Defaults(_Model):
    llm: str | None = None
    temp: float | None = Field(None, ge=0)
    retry: Retry | None = None
    timeout: Timeout | None = None
    tracing: dict[str, Any] | None = None  # accepted; nodeloom's events replace it


class Provider(_Model):
    type: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = Field(None, ge=0)
    max_tokens: int | None = Field(None, ge=1)
    request_timeout: float | None = Field(None, gt=0)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    client_kwargs: dict[str, Any] = Field(default_factory=dict)


class Meta(_Model):
    schema_version: Literal[1] = 1
    name: str | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    providers: dict[str, Provider] = Field(default_factory=dict)


class StateConfig(_Model):
    shape: dict[str, Any] = Field(default_factory=dict)
    reducer: Literal["deepmerge", "replace"] = "deepmerge"
    init: dict[str, Any] = Field(default_factory=dict)


class PromptMessage(_Model):
    role: Literal["system", "user", "assistant"]
    content: str


class PromptTemplate(_Model):
    system: str | None = None
    user: str | None = None
    assistant: str | None = None
    messages: list[PromptMessage] | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> PromptTemplate:
        if not (self.system or self.user or self.assistant or self.messages):
            raise ValueError("a prompt template needs system, user, assistant or messages")
        return self


class Prompts(_Model):
    partials: dict[str, str] = Field(default_factory=dict)
    templates: dict[str, PromptTemplate] = Field(default_factory=dict)


class Memory(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    enabled: bool = False


class Tool(_Model):
    id: str = Field(min_length=1)
    kind: Literal["python", "http", "mcp", "subgraph", "langchain"]
    impl: str | None = None
    mode: Literal["callable", "class"] = "callable"
    config: dict[str, Any] = Field(default_factory=dict)
    retry: Retry | None = None
    timeout: Timeout | None = None


class OnError(_Model):
    to: str | None = None
    resume: bool = False

    @model_validator(mode="after")
    def _choice(self) -> OnError:
        if not self.to and not self.resume:
            raise ValueError("on_error needs `to: <node id>` or `resume: true`")
        return self


class MapOp(_Model):
    set: dict[str, Any] = Field(default_factory=dict)
    merge: dict[str, Any] = Field(default_factory=dict)
    delete: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_empty(self) -> MapOp:
        if not (self.set or self.merge or self.delete):
            raise ValueError("a map needs at least one of set, merge, delete")
        return self


class BaseNode(_Model):
    id: str = Field(min_length=1)
    type: str
    name: str | None = None
    description: str | None = None
    retry: Retry | None = None
    timeout: Timeout | None = None
    on_error: OnError | None = None


class ToolNode(BaseNode):
    type: Literal["tool"] = "tool"
    uses: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    map: MapOp | None = None


class LlmNode(BaseNode):
    type: Literal["llm"] = "llm"
    prompt: str
    map: MapOp | None = None


class RouterCase(_Model):
    when: dict[str, Any]
    to: str


class RouterNode(BaseNode):
    type: Literal["router"] = "router"
    cases: list[RouterCase] = Field(min_length=1)
    default: str | None = None


class LoopNode(BaseNode):
    type: Literal["loop"] = "loop"
    body: str
    until: dict[str, Any] | None = None
    max_iterations: int = Field(10, ge=1)


class SubgraphNode(BaseNode):
    type: Literal["subgraph"] = "subgraph"
    graph: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    map: MapOp | None = None


class NoopNode(BaseNode):
    type: Literal["noop"] = "noop"
    map: MapOp | None = None


Node = ToolNode | LlmNode | RouterNode | LoopNode | SubgraphNode | NoopNode
NODE_MODELS: dict[str, type[BaseNode]] = {
    "tool": ToolNode,
    "llm": LlmNode,
    "router": RouterNode,
    "loop": LoopNode,
    "subgraph": SubgraphNode,
    "noop": NoopNode,
}


class EdgeModel(_Model):
    from_: str = Field(alias="from")
    to: str
    when: dict[str, Any] | None = None


class GraphModel(_Model):
    inputs: list[str] = Field(default_factory=list)
    outputs: list[str] = Field(default_factory=list)
    nodes: list[Any]
    edges: list[Any] = Field(default_factory=list)
    max_steps: int = Field(200, ge=1)
    timeout: Timeout | None = None


@dataclass
class Graph:
    """A parsed graph (`graph` or one of `subgraphs`) and where it is in the file."""

    name: str  # "__root__" for `graph`
    where: str  # "graph" or "subgraphs.<name>"
    model: GraphModel
    nodes: list[tuple[int, Node]] = field(default_factory=list)  # (index in the file, node)
    edges: list[tuple[int, EdgeModel]] = field(default_factory=list)

    def node_where(self, index: int) -> str:
        return f"{self.where}.nodes[{index}]"


@dataclass
class Document:
    meta: Meta
    state: StateConfig
    prompts: Prompts
    tools: list[tuple[int, Tool]]
    graph: Graph | None
    subgraphs: dict[str, Graph]


TOP_LEVEL = ("meta", "state", "prompts", "memory", "tools", "graph", "subgraphs")
ROOT = "__root__"


def parse(document: Mapping[str, Any]) -> tuple[Document, list[Issue]]:
    issues: list[Issue] = []
    for key in document:
        if key not in TOP_LEVEL:
            issues.append(unknown_field(str(key), "", TOP_LEVEL, None))
    meta = _section(Meta, document.get("meta"), "meta", issues) or Meta()
    state = _section(StateConfig, document.get("state"), "state", issues) or StateConfig()
    prompts = _section(Prompts, document.get("prompts"), "prompts", issues) or Prompts()
    memory = _section(Memory, document.get("memory"), "memory", issues)
    if memory is not None and memory.enabled:
        issues.append(
            Issue(
                "unsupported_feature",
                "conversation memory is not supported by nodeloom's Ethan loader; remove "
                "`memory` (or set enabled: false)",
                field="memory.enabled",
            )
        )
    tools = _tools(document.get("tools"), issues)
    graph = None
    if "graph" not in document:
        issues.append(Issue("invalid_graph", "the file has no `graph` section", field="graph"))
    else:
        graph = _graph(ROOT, "graph", document["graph"], issues)
    subgraphs: dict[str, Graph] = {}
    raw = document.get("subgraphs")
    if raw is not None and not isinstance(raw, dict):
        issues.append(wrong_type("subgraphs", "an object of name -> graph", raw, None))
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        parsed = _graph(str(name), f"subgraphs.{name}", value, issues)
        if parsed is not None:
            subgraphs[str(name)] = parsed
    return Document(meta, state, prompts, tools, graph, subgraphs), issues


def _tools(raw: Any, issues: list[Issue]) -> list[tuple[int, Tool]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        issues.append(wrong_type("tools", "a list of tools", raw, None))
        return []
    tools = []
    for index, item in enumerate(raw):
        tool = _section(Tool, item, f"tools[{index}]", issues)
        if tool is not None:
            tools.append((index, tool))
    return tools


def _graph(name: str, where: str, raw: Any, issues: list[Issue]) -> Graph | None:
    model = _section(GraphModel, raw, where, issues)
    if model is None:
        return None
    graph = Graph(name, where, model)
    for index, item in enumerate(model.nodes):
        node = _node(item, f"{where}.nodes[{index}]", issues)
        if node is not None:
            graph.nodes.append((index, node))
    for index, item in enumerate(model.edges):
        edge = _section(EdgeModel, item, f"{where}.edges[{index}]", issues)
        if edge is not None:
            graph.edges.append((index, edge))
    return graph


def _node(raw: Any, where: str, issues: list[Issue]) -> Node | None:
    if not isinstance(raw, dict):
        issues.append(wrong_type(where, "a node (an object with id and type)", raw, None))
        return None
    node_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    kind = raw.get("type")
    model = NODE_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        if kind is None:
            message = f"the node has no `type`; types: {', '.join(NODE_MODELS)}"
        else:
            hint = difflib.get_close_matches(str(kind), list(NODE_MODELS), n=1)
            suggestion = f"did you mean '{hint[0]}'? " if hint else ""
            message = f"unknown node type {kind!r}; {suggestion}types: {', '.join(NODE_MODELS)}"
        issues.append(Issue("unknown_node_type", message, node_id=node_id, field=f"{where}.type"))
        return None
    return _section(model, raw, where, issues, node_id=node_id)  # type: ignore[return-value]


def _section(
    model: type[BaseModel],
    raw: Any,
    where: str,
    issues: list[Issue],
    *,
    node_id: str | None = None,
) -> Any:
    if raw is None and where in ("meta", "state", "prompts", "memory"):
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            issues.append(from_validation(error, where, model, node_id))
        return None


__all__ = [
    "NODE_MODELS",
    "ROOT",
    "BaseNode",
    "Document",
    "EdgeModel",
    "Graph",
    "LlmNode",
    "LoopNode",
    "MapOp",
    "Node",
    "NoopNode",
    "OnError",
    "RouterNode",
    "SubgraphNode",
    "Tool",
    "ToolNode",
    "parse",
]

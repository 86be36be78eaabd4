"""The plan.json node schema (seed 000) as pydantic models, and locating what is wrong.

Types are checked strictly (`"yes"` is not a boolean, `"5"` not an integer); `null` means
the field's default. Fields the original's GUI saves beside the schema (`id`, `fixed`,
`thread_view_index`, `temperature`, ...) are tolerated and ignored; an unknown field that
is a near miss of a schema field (`task_promt`) is reported with a did-you-mean, so a typo
does not silently turn into a default.

Locations read like paths into the file: `nodes[2].initial_tool_name` in a bare plan,
`patterns.research.nodes[2].initial_tool_name` in a file of patterns.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nodeloom.errors import Issue
from nodeloom.values import kind_of

NODE_TYPES = ("llm-first", "tool-first")
MAIN_THREAD = "main"

# Saved by the original's editor (simple-llm-playground) beside the schema; never near misses.
GUI_FIELDS = frozenset(
    {
        "id",
        "fixed",
        "thread_view_index",
        "parent_id",
        "parent_thread_id",
        "temperature",
        "top_p",
        "enable_search",
        "enable_thinking",
        "position",
    }
)


class PlanNode(BaseModel):
    """One node of a plan, as written in the file."""

    model_config = ConfigDict(strict=True, extra="allow")

    node_type: Literal["llm-first", "tool-first"]
    node_name: str
    thread_id: str
    task_prompt: str | None = ""
    tools: list[str] | None = None
    enable_tool_loop: bool | None = False
    tools_limit: dict[str, Annotated[int, Field(ge=1)]] | None = None
    initial_tool_name: str | None = None
    initial_tool_args: dict[str, Any] | None = None
    data_in_thread: str | None = None
    data_in_slice: Annotated[list[int | None], Field(min_length=2, max_length=2)] | None = None
    data_out: bool | None = False
    data_out_thread: str | None = None
    data_out_description: str | None = ""

    # `null` means the default: these read the effective values.
    @property
    def prompt(self) -> str:
        return self.task_prompt or ""

    @property
    def tool_names(self) -> list[str]:
        return list(dict.fromkeys(self.tools or []))

    @property
    def source_thread(self) -> str:
        return self.data_in_thread or MAIN_THREAD

    @property
    def target_thread(self) -> str:
        return self.data_out_thread or MAIN_THREAD


FIELDS = tuple(PlanNode.model_fields)


@dataclass(frozen=True, slots=True)
class Plan:
    """A plan chosen from the file: its task (may be empty) and its valid nodes."""

    name: str | None  # the pattern's name; None for a bare {nodes} file
    task: str
    indexed: list[tuple[int, PlanNode]]  # (index in the file, node) of each valid node

    @property
    def nodes(self) -> list[PlanNode]:
        return [node for _, node in self.indexed]


def where(prefix: str, *parts: str | int) -> str:
    """`prefix` followed by the path parts: where("patterns.a", "nodes", 2, "tools") ->
    "patterns.a.nodes[2].tools"."""
    text = prefix
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text = f"{text}.{part}" if text else part
    return text


def pattern_prefix(name: str) -> str:
    """How a pattern is located: patterns.research, or patterns["my plan"]."""
    if re.fullmatch(r"[A-Za-z_][\w-]*", name):
        return f"patterns.{name}"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'patterns["{escaped}"]'


def node_id(index: int) -> str:
    """The id of the native node a plan node becomes (also where its issues point)."""
    return f"nodes[{index}]"


def parse_plan(document: Any, prefix: str, name: str | None) -> tuple[Plan, list[Issue]]:
    """The plan in `document` ({task?, nodes}) and every problem found, each located.
    Invalid nodes are left out of the plan; the issues say why."""
    issues: list[Issue] = []
    if not isinstance(document, Mapping):
        issues.append(
            Issue(
                "invalid_plan",
                "a plan is an object with 'nodes' (and optionally 'task'), got "
                f"{kind_of(document)}",
                field=prefix or None,
            )
        )
        return Plan(name, "", []), issues
    task = document.get("task")
    if task is not None and not isinstance(task, str):
        issues.append(
            Issue(
                "invalid_plan",
                f"'task' must be a string, got {kind_of(task)}",
                field=where(prefix, "task"),
            )
        )
        task = None
    raw_nodes = document.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        got = "an empty list" if raw_nodes == [] else kind_of(raw_nodes)
        issues.append(
            Issue(
                "invalid_plan",
                f"'nodes' must be a non-empty list of plan nodes, got {got}",
                field=where(prefix, "nodes"),
            )
        )
        return Plan(name, task or "", []), issues
    indexed: list[tuple[int, PlanNode]] = []
    for index, raw in enumerate(raw_nodes):
        node, node_issues = parse_node(raw, prefix, index)
        issues.extend(node_issues)
        if node is not None and not node_issues:
            indexed.append((index, node))
    return Plan(name, task or "", indexed), issues


def parse_node(raw: Any, prefix: str, index: int) -> tuple[PlanNode | None, list[Issue]]:
    location = where(prefix, "nodes", index)
    if not isinstance(raw, Mapping):
        message = (
            f"a plan node is an object with node_type, node_name and thread_id, got {kind_of(raw)}"
        )
        return None, [Issue("invalid_plan", message, node_id=node_id(index), field=location)]
    issues = _near_misses(raw, location, index)
    try:
        node = PlanNode.model_validate(dict(raw))
    except ValidationError as exc:
        seen: set[str] = set()
        for error in exc.errors():
            field = where(location, *error["loc"])
            if field in seen:
                continue
            seen.add(field)
            issues.append(
                Issue("invalid_plan", _message(error), node_id=node_id(index), field=field)
            )
        return None, issues
    return node, issues


def _near_misses(raw: Mapping[str, Any], location: str, index: int) -> list[Issue]:
    issues = []
    for key in raw:
        if key in FIELDS or key in GUI_FIELDS or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.8)
        if close:
            issues.append(
                Issue(
                    "invalid_plan",
                    f"unknown field '{key}'; did you mean '{close[0]}'? (fields other "
                    "than the schema's are ignored, so a misspelt one would be lost)",
                    node_id=node_id(index),
                    field=where(location, key),
                )
            )
    return issues


def _message(error: Mapping[str, Any]) -> str:
    kind, value = error["type"], error.get("input")
    loc: Sequence[Any] = error["loc"]
    field = ".".join(str(part) for part in loc)
    if kind == "missing":
        return f"'{field}' is required"
    if kind == "literal_error":
        hint = difflib.get_close_matches(str(value), NODE_TYPES, n=1)
        suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
        return f"'{field}' must be 'llm-first' or 'tool-first', got {value!r}{suggestion}"
    wanted = {
        "string_type": "a string",
        "bool_type": "true or false",
        "int_type": "an integer",
        "list_type": "a list",
        "dict_type": "an object",
    }.get(kind)
    if wanted:
        return f"'{field}' must be {wanted}, got {kind_of(value)} {_short(value)}"
    if kind == "greater_than_equal":
        return f"'{field}' must be at least {error['ctx']['ge']}, got {value!r}"
    if kind in ("too_short", "too_long") and loc and loc[0] == "data_in_slice":
        return (
            f"'data_in_slice' is [start, end] (two integers or nulls), got {_short(value)}; "
            "null takes the source thread's last message"
        )
    return f"'{field}': {error['msg']}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = [
    "FIELDS",
    "MAIN_THREAD",
    "NODE_TYPES",
    "Plan",
    "PlanNode",
    "node_id",
    "parse_node",
    "parse_plan",
    "pattern_prefix",
    "where",
]

"""The seed's validation rules and what a linear plan lets us know before it runs.

1. A tool-first node requires `initial_tool_name`.
2. An llm-first node has no `initial_tool_name` (nor `initial_tool_args`): an error, not a
   warning, since the tool would never run.
3. An empty `task_prompt` is allowed: the node makes no LLM call.
4. `data_in_*` applies only when a node creates its thread; the source thread must exist by
   then (the plan is linear, so this is known statically).
5. Every tool name (`tools`, `initial_tool_name`, `tools_limit` keys) is a known tool, and
   `tools_limit` limits only tools the node uses.
"""

from __future__ import annotations

from nodeloom.errors import Issue
from nodeloom.formats.plan.catalogue import ToolCatalogue
from nodeloom.formats.plan.schema import MAIN_THREAD, PlanNode, node_id, where


class _Found:
    """Collects the issues of one node, located under its path in the file."""

    def __init__(self, issues: list[Issue], index: int, location: str) -> None:
        self.issues, self.index, self.location = issues, index, location

    def __call__(self, code: str, message: str, *parts: str | int) -> None:
        field = where(self.location, *parts)
        self.issues.append(Issue(code, message, node_id=node_id(self.index), field=field))


def check_plan(
    nodes: list[tuple[int, PlanNode]], catalogue: ToolCatalogue, prefix: str
) -> list[Issue]:
    """Every rule broken by the (individually valid) nodes, each located. `nodes` pairs
    each node with its index in the file."""
    issues: list[Issue] = []
    threads = {MAIN_THREAD}
    for index, node in nodes:
        issue = _Found(issues, index, where(prefix, "nodes", index))
        if not node.node_name.strip():
            issue("invalid_plan", "'node_name' is empty; name the node", "node_name")
        if not node.thread_id.strip():
            issue("invalid_plan", "'thread_id' is empty; name the thread (e.g. main)", "thread_id")
        _check_initial_tool(node, catalogue, issue)
        _check_tools(node, catalogue, issue)
        if node.thread_id not in threads:
            source = node.source_thread
            if source not in threads:
                issue(
                    "invalid_plan",
                    f"'{node.node_name}' creates thread '{node.thread_id}' from thread "
                    f"'{source}', which does not exist yet at this point of the plan "
                    f"(threads so far: {', '.join(sorted(threads))})",
                    "data_in_thread" if node.data_in_thread else "thread_id",
                )
            threads.add(node.thread_id)
        if node.data_out:
            threads.add(node.target_thread)
    return issues


def _check_tools(node: PlanNode, catalogue: ToolCatalogue, issue: _Found) -> None:
    for position, name in enumerate(node.tools or []):
        if not catalogue.knows(name):
            issue("unknown_tool", catalogue.unknown(name), "tools", position)
    used = set(node.tool_names)
    if node.initial_tool_name:
        used.add(node.initial_tool_name)
    for name in node.tools_limit or {}:
        if not catalogue.knows(name):
            issue("unknown_tool", catalogue.unknown(name), "tools_limit", name)
        elif name not in used:
            offered = ", ".join(sorted(used)) or "none"
            issue(
                "invalid_plan",
                f"tools_limit limits '{name}', which '{node.node_name}' does not use (its "
                f"tools: {offered}); add it to tools or remove the limit",
                "tools_limit",
                name,
            )


def _check_initial_tool(node: PlanNode, catalogue: ToolCatalogue, issue: _Found) -> None:
    if node.node_type == "tool-first":
        if not node.initial_tool_name:
            issue(
                "invalid_plan",
                "a tool-first node runs a tool first: set 'initial_tool_name' (and "
                "'initial_tool_args' if it takes arguments)",
                "initial_tool_name",
            )
        elif not catalogue.knows(node.initial_tool_name):
            issue("unknown_tool", catalogue.unknown(node.initial_tool_name), "initial_tool_name")
        return
    for field in ("initial_tool_name", "initial_tool_args"):
        if getattr(node, field):
            issue(
                "invalid_plan",
                f"an llm-first node runs no initial tool: remove '{field}', or make the node "
                "a tool-first",
                field,
            )


__all__ = ["check_plan"]

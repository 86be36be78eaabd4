"""The subagent rules of seed 002, one located issue per broken rule and place.

A subagent link is a connection from a parent agent's `subagent` handle to a child agent's
input. The tree they form is valid only when:

- source and target are both agent nodes (`subagent_source_not_agent`,
  `subagent_target_not_agent`);
- the source has `tools.subagents = true` (`subagents_disabled`);
- the link enters the target's input: `targetHandle` left out or `input`
  (`subagent_target_handle`);
- no agent is its own subagent (`subagent_self_reference`);
- the links form no cycle (`subagent_cycle`, with its path);
- a subagent has at most one parent (`subagent_multiple_parents`);
- a subagent is on no execution edge (`subagent_on_execution_edge`).
"""

from __future__ import annotations

from nodeloom.errors import Issue
from nodeloom.formats.workflow.document import Connection, Workflow, WorkflowNode


def subagent_issues(workflow: Workflow) -> list[Issue]:
    """The seed's subagent rules, one issue per broken rule and place."""
    nodes = workflow.by_id
    issues: list[Issue] = []
    tree: list[Connection] = []  # links between two agents, for the tree-shape rules
    for link in workflow.subagent_links():
        source, target = nodes.get(link.source), nodes.get(link.target)
        if source is None or target is None:
            continue  # dangling_edge
        if source.type != "agent":
            issues.append(
                Issue(
                    "subagent_source_not_agent",
                    f"a subagent link starts at the {source.type} node '{source.id}'; only an "
                    "agent node can delegate to subagents",
                    node_id=source.id,
                    edge_id=link.id,
                    field="source",
                )
            )
        if target.type != "agent":
            issues.append(
                Issue(
                    "subagent_target_not_agent",
                    f"a subagent link from '{source.id}' ends at the {target.type} node "
                    f"'{target.id}'; a subagent must be an agent node",
                    node_id=target.id,
                    edge_id=link.id,
                    field="target",
                )
            )
        if source.type == "agent" and not _subagents_enabled(source):
            issues.append(
                Issue(
                    "subagents_disabled",
                    f"agent '{source.id}' has subagent links but its Subagents tool is off; "
                    'set "tools": {"subagents": true} on it, or remove the links',
                    node_id=source.id,
                    edge_id=link.id,
                    field="data.tools.subagents",
                )
            )
        if link.target_handle not in (None, "input"):
            issues.append(
                Issue(
                    "subagent_target_handle",
                    f"the subagent link '{source.id}' -> '{target.id}' enters handle "
                    f"'{link.target_handle}'; a subagent link enters the target's input "
                    "(targetHandle 'input', or leave it out)",
                    node_id=target.id,
                    edge_id=link.id,
                    field="targetHandle",
                )
            )
        if source.id == target.id:
            issues.append(
                Issue(
                    "subagent_self_reference",
                    f"agent '{source.id}' is linked as its own subagent; link another agent",
                    node_id=source.id,
                    edge_id=link.id,
                    field="target",
                )
            )
        elif source.type == "agent" and target.type == "agent":
            tree.append(link)
    issues.extend(_parent_issues(tree))
    issues.extend(_execution_edge_issues(workflow, tree))
    issues.extend(_cycle_issues(tree))
    return issues


def _subagents_enabled(node: WorkflowNode) -> bool:
    tools = node.data.get("tools")
    return isinstance(tools, dict) and tools.get("subagents") is True


def _parent_issues(tree: list[Connection]) -> list[Issue]:
    parents: dict[str, list[Connection]] = {}
    for link in tree:
        parents.setdefault(link.target, []).append(link)
    issues = []
    for target, links in parents.items():
        names = ", ".join(f"'{link.source}'" for link in links)
        for link in links[1:]:
            issues.append(
                Issue(
                    "subagent_multiple_parents",
                    f"agent '{target}' is a subagent of {names}; a subagent has one parent "
                    "(duplicate the agent for another parent)",
                    node_id=target,
                    edge_id=link.id,
                    field="target",
                )
            )
    return issues


def _execution_edge_issues(workflow: Workflow, tree: list[Connection]) -> list[Issue]:
    subagents = {link.target for link in tree}
    issues = []
    for connection in workflow.execution():
        for node_id in dict.fromkeys((connection.source, connection.target)):
            if node_id in subagents:
                issues.append(
                    Issue(
                        "subagent_on_execution_edge",
                        f"agent '{node_id}' is a subagent, so it runs only when its parent "
                        f"calls it; it cannot also be on the execution edge "
                        f"'{connection.source}' -> '{connection.target}'. Remove that edge, or "
                        "the subagent link",
                        node_id=node_id,
                        edge_id=connection.id,
                    )
                )
    return issues


def _cycle_issues(tree: list[Connection]) -> list[Issue]:
    children: dict[str, list[Connection]] = {}
    for link in tree:
        children.setdefault(link.source, []).append(link)
    issues = []
    reported: set[str] = set()
    state: dict[str, str] = {}

    def visit(node_id: str, path: list[str]) -> None:
        state[node_id] = "visiting"
        for link in children.get(node_id, []):
            child = link.target
            if state.get(child) == "visiting":
                cycle = [*path[path.index(child) :], child]
                if not reported & set(cycle):
                    reported.update(cycle)
                    issues.append(
                        Issue(
                            "subagent_cycle",
                            "subagents form a cycle: "
                            + " -> ".join(f"'{n}'" for n in cycle)
                            + "; a subagent tree has no cycles (remove one of these links)",
                            node_id=child,
                            edge_id=link.id,
                            field="target",
                        )
                    )
            elif child not in state:
                visit(child, [*path, child])
        state[node_id] = "visited"

    for node_id in children:
        if node_id not in state:
            visit(node_id, [node_id])
    return issues

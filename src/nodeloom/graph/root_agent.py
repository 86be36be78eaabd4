"""The root agent: the Agent a chat turn's user-picked tools are merged into (Chat Start's
`includeUserTools`, docs/nodes/chat-start.md).

It is the Agent reached first from a Chat Start along the flow's spine (breadth first,
file order breaking ties); a sub-agent (wired into another Agent's tools) is never it.
"""

from __future__ import annotations

from collections import deque

from nodeloom.errors import Issue
from nodeloom.graph.model import Graph
from nodeloom.graph.structure import Structure

CHAT_START = "chat-start"
AGENT = "agent"


def root_agent(graph: Graph, structure: Structure) -> str | None:
    """The id of the root agent, or None if no Agent is reached from a Chat Start."""
    types = {node.id: node.type for node in graph.nodes}
    successors: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.id not in structure.edges and edge.target in types:
            successors.setdefault(edge.source, []).append(edge.target)
    queue = deque(node.id for node in graph.nodes if node.type == CHAT_START)
    seen = set(queue)
    while queue:
        node_id = queue.popleft()
        if types[node_id] == AGENT and node_id not in structure.roles:
            return node_id
        for target in successors.get(node_id, ()):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return None


def accepts_user_tools(graph: Graph) -> bool:
    """Whether a Chat Start of the graph has `includeUserTools` on. Only then is a
    trigger's `tools` the user's tools (another trigger may have a `tools` of its own)."""
    return any(
        node.type == CHAT_START and node.data.get("includeUserTools") is True
        for node in graph.nodes
    )


USER_TOOLS_DISABLED = (
    "this turn brings tools ({tools}) but the flow's Chat Start has includeUserTools off: "
    "turn it on to merge the user's tools into the root agent, or send the turn without tools"
)


def check_user_tools(graph: Graph, structure: Structure, prefix: str = "") -> list[Issue]:
    """A Chat Start with `includeUserTools` needs a root agent to give the tools to."""
    wanting = [
        node
        for node in graph.nodes
        if node.type == CHAT_START and node.data.get("includeUserTools") is True
    ]
    if not wanting or root_agent(graph, structure) is not None:
        return []
    return [
        Issue(
            "no_root_agent",
            "includeUserTools is on but no Agent is reached from this Chat Start: wire an "
            "Agent after it (its first Agent takes the user's tools), or turn "
            "includeUserTools off",
            node_id=prefix + node.id,
            field="includeUserTools",
        )
        for node in wanting
    ]

"""Socket types: what a port carries, how it looks, and which connections are allowed.

The data spine (`data`) carries untyped JSON between flow nodes. Every other type is a
typed side socket (seed 004): hybrid parameters, model wires, structural `tools` and
`agent` wires. Colours and shapes are served in the catalogue so the UI draws them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SocketType:
    id: str
    color: str
    shape: str  # circle | square | diamond | dashed-circle
    description: str
    structural: bool = False


SOCKET_TYPES: dict[str, SocketType] = {
    s.id: s
    for s in (
        SocketType("data", "#e5e7eb", "circle", "The data spine: untyped JSON"),
        SocketType("agent", "#7c3aed", "circle", "Agent composition", structural=True),
        SocketType("tools", "#f59e0b", "square", "Tool attachment", structural=True),
        SocketType("model", "#06b6d4", "circle", "Provider and model reference"),
        SocketType("string", "#3b82f6", "circle", "Short strings"),
        SocketType("text", "#06b6d4", "circle", "Long-form text"),
        SocketType("float", "#a1a1aa", "circle", "Decimal numbers"),
        SocketType("int", "#71717a", "circle", "Integers"),
        SocketType("boolean", "#10b981", "diamond", "True/false"),
        SocketType("color", "#eab308", "circle", "Colour values"),
        SocketType("json", "#f97316", "circle", "Structured objects"),
        SocketType("binary", "#ec4899", "square", "File/blob references"),
        SocketType("array", "#8b5cf6", "square", "Ordered lists"),
        SocketType("message", "#a855f7", "circle", "A chat message {role, content}"),
        SocketType("messages", "#a855f7", "circle", "[{role, content}] arrays"),
        SocketType("document", "#84cc16", "square", "{text, metadata} for RAG"),
        SocketType("vector", "#14b8a6", "diamond", "Embedding vectors"),
        SocketType("trigger", "#ef4444", "diamond", "Execution signal (no data)"),
        SocketType("any", "#6b7280", "dashed-circle", "Wildcard: accepts anything"),
    )
}

STRUCTURAL_SOCKETS = frozenset(s.id for s in SOCKET_TYPES.values() if s.structural)

# Safe implicit coercions: the union of the tables in seeds 003 and 004.
COERCIONS: frozenset[tuple[str, str]] = frozenset(
    {
        ("int", "float"),
        ("int", "string"),
        ("float", "string"),
        ("boolean", "string"),
        ("string", "text"),
        ("text", "string"),
        ("json", "string"),
        ("json", "text"),
        ("document", "text"),
        ("document", "json"),
        ("string", "messages"),
        ("text", "messages"),
        ("messages", "string"),
        ("agent", "tools"),
    }
)


def can_connect(source: str, target: str) -> bool:
    """Whether a wire from a `source`-typed port may enter a `target`-typed port.

    `any` accepts everything and is accepted everywhere (coerced at run time); the spine
    type `data` behaves like `any` for value sockets but never joins a structural one.
    """
    if source == target:
        return True
    if source in STRUCTURAL_SOCKETS or target in STRUCTURAL_SOCKETS:
        return (source, target) in COERCIONS
    if "any" in (source, target) or "data" in (source, target):
        return True
    return (source, target) in COERCIONS


def connection_refusal(source: str, target: str) -> str:
    """Why a connection is refused, in words a user can act on."""
    allowed = sorted(t for s, t in COERCIONS if s == source)
    targets = (
        ", ".join([source, *allowed, "any"])
        if source not in STRUCTURAL_SOCKETS
        else (", ".join([source, *allowed]))
    )
    return (
        f"a '{source}' socket cannot connect to a '{target}' socket; '{source}' connects to: "
        f"{targets}. Use a Type Converter node for other conversions"
    )

"""Which Python functions a saved flow may import in the server and worker processes.

A Toolset's `functions` (`module:function`, `file.py#fn`) and an Ethan `kind: python`
tool's `impl` import and call whatever they name, `os:system` included. In the server,
where whoever holds a token writes the flows, a reference resolves only from the
operator's allow-list:

    NODELOOM_PYTHON_TOOLS="my_tools, company.agent_tools, helpers:word_count"

An entry is a module (every function of it and of its submodules) or `module:function`
(that one). A file reference (`file.py#fn`) is never allowed in the server. Elsewhere is
refused: at validation (`issues`: saving, validating or running a flow answers 422 naming
the node and the setting) and again when a tool is imported (`enforce` installs the check
into the Toolset loader for the server's lifetime). The CLI does not call `enforce`: a
local user runs their own files as before.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

from nodeloom.errors import GraphError, Issue, NodeError
from nodeloom.tools import loader
from nodeloom.tools.references import (
    Reference,
    ReferenceSyntaxError,
    parse_reference,
)

ENV_PYTHON_TOOLS = "NODELOOM_PYTHON_TOOLS"
CODE = "python_tool_refused"


def allowed_entries() -> tuple[str, ...]:
    """The allow-list's entries (read each call, so a test may change it)."""
    text = os.environ.get(ENV_PYTHON_TOOLS, "")
    return tuple(entry.strip() for entry in text.replace(";", ",").split(",") if entry.strip())


def refusal(text: str) -> str | None:
    """Why the server may not import the reference `text`, or None if it may."""
    try:
        reference = parse_reference(text)
    except ReferenceSyntaxError:
        return None  # the node's own check reports it
    return _refusal(reference)


def _refusal(reference: Reference) -> str | None:
    entries = allowed_entries()
    listed = f"it lists {', '.join(entries)}" if entries else "it is not set"
    if reference.module is None:
        return (
            f"the function reference {reference.text!r} is a file: the server imports no "
            f"file a flow names, only modules on its allow-list {ENV_PYTHON_TOOLS} ({listed}). "
            "Install the functions as a module and add it to "
            f"{ENV_PYTHON_TOOLS}, or run the flow with the CLI (`nodeloom run`)"
        )
    module, function = reference.module, f"{reference.module}:{reference.attribute}"
    for entry in entries:
        if entry in (module, function) or module.startswith(entry + "."):
            return None
    return (
        f"the function reference {reference.text!r} is not on the server's allow-list "
        f"{ENV_PYTHON_TOOLS} ({listed}). If the operator trusts it, add '{module}' (the "
        f"module) or '{function}' (the function) to {ENV_PYTHON_TOOLS}; or run the flow "
        "with the CLI (`nodeloom run`)"
    )


def issues(document: Mapping[str, Any]) -> list[Issue]:
    """An issue for each Python reference in `document` (a native graph, inner graphs
    included) that the server may not import."""
    found = []
    for node, field, text in _references(document):
        reason = refusal(text)
        if reason is not None:
            name = node.get("data", {}).get("name") or node.get("name") or node["id"]
            found.append(
                Issue(CODE, f"node '{name}' (id '{node['id']}'): {reason}", node["id"], field)
            )
    return found


def check(document: Mapping[str, Any]) -> None:
    """Raise GraphError listing `issues(document)`, if any."""
    found = issues(document)
    if found:
        raise GraphError(found)


def _references(value: Any) -> Iterator[tuple[Mapping[str, Any], str, str]]:
    """(node, field, reference text) for every Python reference under `value`."""
    if isinstance(value, list):
        for item in value:
            yield from _references(item)
        return
    if not isinstance(value, Mapping):
        return
    data = value.get("data")
    if isinstance(value.get("id"), str) and isinstance(data, Mapping):
        if value.get("type") == "toolset" and isinstance(data.get("functions"), list):
            for index, text in enumerate(data["functions"]):
                if isinstance(text, str):
                    yield value, f"functions[{index}]", text
        if "spec" in data:  # an Ethan node: its tool, or the tools an LLM node may call
            field = "tool.impl" if value.get("type") == "ethan-tool" else "spec.tools"
            for impl in _python_impls(_spec(data["spec"])):
                yield value, field, impl
    for item in value.values():
        yield from _references(item)


def _python_impls(value: Any) -> Iterator[str]:
    """The `impl` of every `kind: python` tool declaration under `value`."""
    if isinstance(value, list):
        for item in value:
            yield from _python_impls(item)
    elif isinstance(value, Mapping):
        if value.get("kind") == "python" and isinstance(value.get("impl"), str):
            yield value["impl"]
        for item in value.values():
            yield from _python_impls(item)


def _spec(spec: Any) -> dict[str, Any]:
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError:
            return {}
    return spec if isinstance(spec, dict) else {}


def _on_import(reference: Reference) -> None:
    reason = _refusal(reference)
    if reason is not None:
        raise NodeError(reason, code=CODE, retryable=False, details={"reference": reference.text})


def enforce(on: bool = True) -> None:
    """Check every Toolset/Ethan import against the allow-list (the server, for its
    lifetime), or stop checking (`on=False`)."""
    loader.restriction = _on_import if on else None


__all__ = ["CODE", "ENV_PYTHON_TOOLS", "check", "enforce", "issues", "refusal"]

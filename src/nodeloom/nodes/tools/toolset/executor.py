"""Toolset: gather built-in toolsets and referenced functions into one ToolsResult.

Nothing is wrapped: Agno builds each tool's schema from the function's name, signature
and docstring. A Toolset that would give an agent no tool, or a name the model would see
twice, is an error: an agent must never run silently without the tools it was wired with.
"""

from __future__ import annotations

from typing import Any

from nodeloom.errors import NodeError
from nodeloom.plugins.contract import BuildContext, ToolsResult
from nodeloom.tools.builtins import build_toolset
from nodeloom.tools.loader import load_tool, not_found
from nodeloom.tools.references import (
    EXAMPLES,
    Reference,
    ReferenceSyntaxError,
    parse_reference,
)
from nodeloom.tools.toolsets import TOOLSETS, unknown_toolset_message


class ToolsetExecutor:
    node_type = "toolset"

    def build(self, data: dict[str, Any], context: BuildContext) -> ToolsResult:
        toolsets = _toolset_names(data, context)
        references = _references(data, context)
        if not toolsets and not references:
            raise NodeError(
                "the Toolset gives the agent no tool: list built-in toolsets in `toolsets` "
                f"({', '.join(TOOLSETS)}) or functions in `functions` ({EXAMPLES})",
                code="no_tools",
                retryable=False,
            )
        tools: list[Any] = []
        names: list[str] = []
        origin: dict[str, str] = {}
        sources: list[str] = []
        for name in toolsets:
            built, built_names = build_toolset(name, data)
            tools.extend(built)
            _add_names(names, origin, built_names, f"toolset '{name}'")
            sources.append(name)
        for reference in references:
            tool, tool_names = load_tool(reference)
            tools.append(tool)
            _add_names(names, origin, tool_names, f"function {reference.text!r}")
            sources.append(reference.text)
        return ToolsResult(tools=tools, names=names, source=f"toolset: {', '.join(sources)}")


def _toolset_names(data: dict[str, Any], context: BuildContext) -> list[str]:
    value = _list_parameter(data, context, "toolsets", '["calculator", "datetime"]')
    names: list[str] = []
    for name in value:
        if not isinstance(name, str) or name not in TOOLSETS:
            raise not_found(unknown_toolset_message(name), str(name))
        if name not in names:
            names.append(name)
    return names


def _references(data: dict[str, Any], context: BuildContext) -> list[Reference]:
    value = _list_parameter(data, context, "functions", '["my_tools.py#word_count"]')
    references: list[Reference] = []
    for text in value:
        try:
            references.append(parse_reference(text))
        except ReferenceSyntaxError as exc:
            raise not_found(f"a function reference does not parse: {exc}", str(text)) from None
    return references


def _list_parameter(
    data: dict[str, Any], context: BuildContext, parameter: str, example: str
) -> list[Any]:
    if parameter in context.deferred:
        raise NodeError(
            f"`{parameter}` depends on the flow, but tools are built before the flow runs: "
            "use a plain list, or an expression of $vars and $trigger only",
            code="invalid_parameter",
            retryable=False,
            details={"field": parameter},
        )
    value = data.get(parameter)
    if value is None:
        return []
    if not isinstance(value, list):
        raise NodeError(
            f"`{parameter}` must be a list such as {example}, not {type(value).__name__}",
            code="invalid_parameter",
            retryable=False,
            details={"field": parameter},
        )
    return value


def _add_names(names: list[str], origin: dict[str, str], new: list[str], source: str) -> None:
    for name in new:
        if name in origin:
            raise NodeError(
                f"two tools are named '{name}' ({origin[name]} and {source}); the model "
                "calls tools by name, so each name must be unique: drop or rename one",
                code="duplicate_tool",
                retryable=False,
                details={"tool": name},
            )
        origin[name] = source
        names.append(name)


executor = ToolsetExecutor()

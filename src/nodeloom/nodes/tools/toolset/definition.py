"""Toolset: built-in tools and Python functions for an Agent, wired into its `tools` socket."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodeloom.plugins.contract import NodeDefinition, Parameter, Port
from nodeloom.tools.references import ReferenceSyntaxError, parse_reference
from nodeloom.tools.toolsets import TOOLSETS, unknown_toolset_message


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def check_toolset(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Static checks that need no import: toolset names and reference syntax."""
    issues: list[tuple[str, str]] = []
    toolsets = data.get("toolsets")
    if toolsets is not None and not _is_expression(toolsets):
        if not isinstance(toolsets, list):
            issues.append(("toolsets", 'toolsets must be a list of names, e.g. ["calculator"]'))
        else:
            unknown = [
                n
                for n in toolsets
                if not _is_expression(n) and (not isinstance(n, str) or n not in TOOLSETS)
            ]
            if unknown:
                issues.append(("toolsets", unknown_toolset_message(unknown[0])))
    functions = data.get("functions")
    if functions is not None and not _is_expression(functions):
        if not isinstance(functions, list):
            issues.append(
                ("functions", 'functions must be a list of references, e.g. ["tools.py#lookup"]')
            )
        else:
            for reference in functions:
                if _is_expression(reference):
                    continue
                try:
                    parse_reference(reference)
                except ReferenceSyntaxError as exc:
                    issues.append(("functions", str(exc)))
                    break
    if (
        isinstance(toolsets, list | None)
        and isinstance(functions, list | None)
        and not toolsets
        and not functions
    ):
        issues.append(
            (
                "toolsets",
                "the toolset is empty: name a built-in toolset "
                f"({', '.join(TOOLSETS)}) or a function in `functions`",
            )
        )
    return issues


definition = NodeDefinition(
    id="toolset",
    name="Toolset",
    category="tools",
    description="Tools for an Agent: built-in toolsets (calculator, datetime, http_fetch) "
    "and your own Python functions. Wire its `tools` socket into an Agent's `tools`.",
    icon="Wrench",
    execution_mode="structural",
    inputs=(),
    outputs=(
        Port(
            "tools",
            socket="tools",
            label="Tools",
            description="Wire into an Agent's `tools` input.",
        ),
    ),
    parameters=(
        Parameter(
            "toolsets",
            "json",
            "Built-in toolsets",
            default=[],
            description="A list of built-in toolsets: "
            + "; ".join(f"{name} ({', '.join(tools)})" for name, tools in TOOLSETS.items()),
            placeholder='["calculator", "datetime"]',
        ),
        Parameter(
            "functions",
            "json",
            "Functions",
            default=[],
            description="A list of Python functions, each 'package.module:function', "
            "'package.module#function' or 'path/to/file.py#function' (relative to the "
            "working directory). The function's name, signature and docstring are what "
            "the model sees.",
            placeholder='["my_tools.py#word_count"]',
        ),
        Parameter(
            "allow_private_network",
            "boolean",
            "Allow private network",
            default=False,
            description="Let http_fetch reach loopback, private and link-local addresses "
            "(localhost, 10.x, 192.168.x, 169.254.169.254). Off, they are refused. "
            "NODELOOM_ALLOW_PRIVATE_NETWORK=1 allows them for every node.",
        ),
    ),
    side_effects="external",
    check=check_toolset,
)

"""Calling a Python function tool: imported by reference with the Toolset's loader, called
with the tool's `config` as default keyword arguments and the node's rendered `inputs`.

A plain function runs in a worker thread, so the event loop (and the node's timeout) is
never blocked by it; a timed-out call's thread cannot be stopped and finishes in the
background. An `async def` function is awaited.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from nodeloom.errors import NodeError
from nodeloom.tools.loader import load_tool
from nodeloom.tools.references import parse_reference


def resolve(impl: str) -> Any:
    function, _ = load_tool(parse_reference(impl))
    return function


async def call(function: Any, arguments: dict[str, Any]) -> Any:
    try:
        inspect.signature(function).bind(**arguments)
    except TypeError as exc:
        raise NodeError(
            f"the function does not take these arguments ({exc}); it takes "
            f"{_signature(function)}, and got {', '.join(arguments) or 'none'}",
            code="tool_arguments",
            retryable=False,
        ) from None
    except ValueError:
        pass  # no signature to check (a builtin): let the call tell
    if inspect.iscoroutinefunction(function):
        return await function(**arguments)
    value = await asyncio.to_thread(lambda: function(**arguments))
    if inspect.isawaitable(value):
        value = await value
    return value


def _signature(function: Any) -> str:
    try:
        return f"{getattr(function, '__name__', 'function')}{inspect.signature(function)}"
    except (TypeError, ValueError):
        return "its own arguments"


__all__ = ["call", "resolve"]

"""The tools of one plan node, with their quotas, called one by one.

Tools reach a plan node through Toolset nodes wired into its `tools` socket (phase 1 builds
them). The node's build keeps the tools it names, as Agno `Function`s: their JSON schemas are
offered to the model, and nodeloom runs each call itself, so that it can

- answer a call of a tool the node does not offer with an error message (never leave it
  unanswered);
- count calls per tool and per node execution against `tools_limit` (default: one call per
  tool, as in the original), and answer a call past the limit with an over-quota message;
- answer malformed arguments and a tool's exception with an error message the model reads.

The initial tool of a tool-first node counts against its quota too, but a failure there
fails the node (`tool_failed`): its arguments come from the plan, not from the model.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nodeloom.errors import NodeError
from nodeloom.formats.plan.messages import as_text
from nodeloom.plugins.contract import ToolsResult

DEFAULT_LIMIT = 1
Status = Literal["ok", "failed", "unknown_tool", "over_quota", "invalid_arguments"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one tool call: `text` is what the model is told."""

    status: Status
    text: str
    value: Any = None

    @property
    def ran(self) -> bool:
        return self.status in ("ok", "failed")


def select_tools(results: Iterable[ToolsResult], wanted: list[str]) -> ToolsResult | None:
    """The `wanted` tools out of the Toolsets wired into a node, as Agno Functions (the
    first Toolset wired that offers a name wins). NodeError `tool_not_found` if one is
    missing."""
    if not wanted:
        return None
    found: dict[str, Any] = {}
    offered: list[str] = []
    for result in results:
        for function in _functions(result.tools, set(wanted) - set(found)):
            found[function.name] = function
        offered += result.names
    missing = [name for name in wanted if name not in found]
    if missing:
        wired = ", ".join(dict.fromkeys(offered)) or "nothing"
        raise NodeError(
            f"the node uses tool(s) {', '.join(missing)}, but the Toolsets wired into its "
            f"`tools` socket offer: {wired}",
            code="tool_not_found",
            retryable=False,
            details={"tools": missing},
        )
    return ToolsResult(tools=[found[name] for name in wanted], names=list(wanted), source="plan")


def _functions(tools: Iterable[Any], wanted: set[str]) -> list[Any]:
    """Agno Functions (schema processed) named in `wanted`, from toolkits, Functions and
    plain callables."""
    from agno.tools import Toolkit
    from agno.tools.function import Function

    functions = []
    for tool in tools:
        if isinstance(tool, Toolkit):
            candidates = [f for name, f in tool.functions.items() if name in wanted]
        elif isinstance(tool, Function):
            candidates = [tool] if tool.name in wanted else []
        elif getattr(tool, "__name__", None) in wanted:
            functions.append(Function.from_callable(tool))
            continue
        else:
            candidates = []
        for candidate in candidates:
            function = candidate.model_copy(deep=True)
            function.process_entrypoint()
            functions.append(function)
    return functions


class Toolbox:
    """The tools one node execution may call, and how many calls each has left."""

    def __init__(
        self,
        functions: Mapping[str, Any],
        offered: list[str],
        limits: Mapping[str, int] | None = None,
    ) -> None:
        self.functions = dict(functions)
        self.offered = [name for name in dict.fromkeys(offered) if name in self.functions]
        self.limits = dict(limits or {})
        self.used: dict[str, int] = {}

    @classmethod
    def of(cls, built: Any, offered: list[str], limits: Mapping[str, int] | None) -> Toolbox:
        functions = {}
        if isinstance(built, ToolsResult):
            functions = {function.name: function for function in built.tools}
        return cls(functions, offered, limits)

    def limit(self, name: str) -> int:
        return self.limits.get(name, DEFAULT_LIMIT)

    def remaining(self, name: str) -> int:
        return self.limit(name) - self.used.get(name, 0)

    @property
    def exhausted(self) -> bool:
        """Every offered tool has used its quota (or none is offered)."""
        return all(self.remaining(name) <= 0 for name in self.offered)

    def schemas(self) -> list[dict[str, Any]]:
        """The offered tools as OpenAI-style function tools (the form Agno's models take)."""
        schemas = []
        for name in self.offered:
            spec = self.functions[name].to_dict()
            function = {
                key: spec[key] for key in ("name", "description", "parameters") if spec.get(key)
            }
            schemas.append({"type": "function", "function": function})
        return schemas

    async def call(self, name: str, arguments: Any) -> Outcome:
        """Run one call the model made; every outcome has a text for the model."""
        if name not in self.offered:
            available = ", ".join(self.offered) or "none"
            return Outcome(
                "unknown_tool",
                f"Error: there is no tool named '{name}' here. The tools you can call are: "
                f"{available}.",
            )
        if self.remaining(name) <= 0:
            limit = self.limit(name)
            return Outcome(
                "over_quota",
                f"Error: tool '{name}' has reached its limit of {limit} call"
                f"{'s' if limit != 1 else ''} for this step and was not run. Answer with the "
                "information you already have.",
            )
        parsed = _arguments(arguments)
        if isinstance(parsed, str):
            return Outcome("invalid_arguments", f"Error: tool '{name}' was not run: {parsed}")
        self.used[name] = self.used.get(name, 0) + 1
        try:
            value = await invoke(self.functions[name], parsed)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if _is_validation_error(exc):
                self.used[name] -= 1
                return Outcome(
                    "invalid_arguments",
                    f"Error: tool '{name}' was not run: its arguments do not fit: {exc}",
                )
            return Outcome("failed", f"Error: tool '{name}' failed: {type(exc).__name__}: {exc}")
        return Outcome("ok", as_text(value), value)

    async def run_initial(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run a tool-first node's initial tool; its result, or NodeError `tool_failed`."""
        if name not in self.functions:
            raise NodeError(
                f"the initial tool '{name}' is not among the node's tools; wire a Toolset "
                "offering it into the node's `tools`",
                code="tool_not_found",
                retryable=False,
                details={"tool": name},
            )
        self.used[name] = self.used.get(name, 0) + 1
        try:
            return await invoke(self.functions[name], dict(arguments))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise NodeError(
                f"the initial tool '{name}' failed with initial_tool_args "
                f"{json.dumps(dict(arguments), ensure_ascii=False)}: {type(exc).__name__}: {exc}",
                code="tool_failed",
                retryable=False,
                details={"tool": name},
            ) from exc


async def invoke(function: Any, arguments: dict[str, Any]) -> Any:
    """Call an Agno Function's entrypoint: async ones in the event loop, sync ones in a
    worker thread (a slow tool must not stall the run)."""
    entrypoint = function.entrypoint
    if inspect.iscoroutinefunction(entrypoint):
        result = await entrypoint(**arguments)
    else:
        result = await asyncio.to_thread(entrypoint, **arguments)
    if inspect.isawaitable(result):
        result = await result
    return result


def _arguments(arguments: Any) -> dict[str, Any] | str:
    """The call's arguments as an object, or what is wrong with them."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"its arguments are not valid JSON ({exc.msg}): {arguments[:200]!r}"
    if not isinstance(arguments, dict):
        return f"its arguments must be a JSON object, got {json.dumps(arguments)[:200]}"
    return arguments


def _is_validation_error(exc: Exception) -> bool:
    from pydantic import ValidationError

    return isinstance(exc, ValidationError)


__all__ = ["DEFAULT_LIMIT", "Outcome", "Toolbox", "invoke", "select_tools"]

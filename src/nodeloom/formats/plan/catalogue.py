"""The tools a plan may name: nodeloom's built-in tools, and every public function of the
`--tools` files.

The files are read, not run: a public function is a top-level `def` or `async def` whose
name does not start with `_` (decorated ones included, such as Agno's `@tool`). They are
imported when the run starts (phase 1), through the Toolset node, so loading, validating
and converting a plan never executes user code. A function of a `--tools` file takes
precedence over a built-in tool of the same name.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nodeloom.errors import Issue
from nodeloom.tools.toolsets import TOOLSETS


@dataclass(frozen=True)
class ToolCatalogue:
    builtins: dict[str, str] = field(default_factory=dict)  # tool name -> built-in toolset
    functions: dict[str, str] = field(default_factory=dict)  # tool name -> absolute file path

    def knows(self, name: str) -> bool:
        return name in self.functions or name in self.builtins

    def unknown(self, name: str) -> str:
        """What to say about a tool name nobody defines: a did-you-mean and the fix."""
        if name in TOOLSETS:
            tools = ", ".join(TOOLSETS[name])
            return f"'{name}' is a built-in toolset, not a tool; name its tools instead: {tools}"
        names = [*self.functions, *(n for n in self.builtins if n not in self.functions)]
        close = difflib.get_close_matches(name, names, n=1)
        suggestion = f"did you mean '{close[0]}'? " if close else ""
        files = (
            f"functions of the --tools files: {', '.join(self.functions)}"
            if self.functions
            else "no --tools file was given"
        )
        return (
            f"unknown tool '{name}'; {suggestion}built-in tools: {', '.join(self.builtins)}; "
            f"{files}. Pass the Python file that defines it with --tools FILE"
        )

    def toolsets_for(self, names: Iterable[str]) -> list[str]:
        """The built-in toolsets that provide `names` (those not shadowed by a function)."""
        found = {self.builtins[n] for n in names if n not in self.functions and n in self.builtins}
        return [toolset for toolset in TOOLSETS if toolset in found]

    def references_for(self, names: Iterable[str]) -> list[str]:
        """Toolset function references (`/abs/file.py#name`) for the functions in `names`."""
        wanted = set(names)
        return [f"{path}#{name}" for name, path in self.functions.items() if name in wanted]


def read_catalogue(paths: Sequence[str]) -> tuple[ToolCatalogue, list[Issue]]:
    builtins = {tool: toolset for toolset, tools in TOOLSETS.items() for tool in tools}
    functions: dict[str, str] = {}
    issues: list[Issue] = []
    for text in paths:
        path = Path(text).expanduser().resolve()  # relative to the working directory
        names, problem = _public_functions(path)
        if problem:
            issues.append(Issue("invalid_tools_file", problem, field="tools"))
            continue
        for name in names:
            if name in functions:
                issues.append(
                    Issue(
                        "duplicate_tool",
                        f"two --tools files define '{name}' ({functions[name]} and {path}); "
                        "the model calls tools by name, so rename or drop one",
                        field="tools",
                    )
                )
                continue
            functions[name] = str(path)
    return ToolCatalogue(builtins, functions), issues


def _public_functions(path: Path) -> tuple[list[str], str | None]:
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], f"--tools {path}: no such file"
    except (OSError, UnicodeDecodeError) as exc:
        return [], f"--tools {path}: cannot read it: {exc}"
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        return [], f"--tools {path}: SyntaxError: {exc.msg} (line {exc.lineno})"
    names = [
        statement.name
        for statement in tree.body
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
        and not statement.name.startswith("_")
    ]
    if not names:
        return [], (
            f"--tools {path} defines no public function (a top-level def whose name does "
            "not start with _), so it offers no tool"
        )
    return names, None


__all__ = ["ToolCatalogue", "read_catalogue"]

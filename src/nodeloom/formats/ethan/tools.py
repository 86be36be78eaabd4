"""`tools:` declarations, checked and turned into what an `ethan-tool` node calls.

    kind: python    impl: file.py#fn (relative to the YAML file's folder, or absolute),
                    or module.path:fn / module.path#fn (imported with the working
                    directory on the import path). `config` holds default arguments.
    kind: http      nodeloom's SSRF-guarded HTTP client; `impl` is not needed (and not
                    imported). `config` holds default request fields (method, url, params,
                    headers, json, data, timeout, allow_redirects) and
                    `allow_private_network`.
    kind: mcp       a tool of an MCP server: `config.command` (stdio) or `config.url`
                    (streamable HTTP), `config.tool` (the tool's name), and optionally
                    `env`, `arguments` (default arguments), `allow_private_network`,
                    `connect_timeout`, `call_timeout`. `impl` (`mcp://name`) is a label.
    kind: subgraph  `impl` names a subgraph; the tool node runs it as a subgraph node does.

`langchain` tools and `mode: class` are not supported (`unsupported_feature`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nodeloom.errors import Issue
from nodeloom.formats.ethan.schema import Document, Tool
from nodeloom.tools.references import ReferenceSyntaxError, parse_reference

HTTP_FIELDS = ("method", "url", "params", "headers", "json", "data", "timeout", "allow_redirects")
HTTP_CONFIG = (*HTTP_FIELDS, "allow_private_network")
MCP_CONFIG = (
    "command",
    "url",
    "tool",
    "env",
    "arguments",
    "allow_private_network",
    "connect_timeout",
    "call_timeout",
)


def declarations(
    document: Document, base_dir: Path
) -> tuple[dict[str, dict[str, Any]], list[Issue]]:
    """Each tool id -> what its nodes' spec holds: {"id", "kind", "impl", "config"}."""
    found: dict[str, dict[str, Any]] = {}
    issues: list[Issue] = []
    for index, tool in document.tools:
        where = f"tools[{index}]"
        if tool.id in found:
            issues.append(
                Issue(
                    "invalid_graph",
                    f"the tool id '{tool.id}' is declared twice",
                    field=f"{where}.id",
                )
            )
            continue
        problems = _check(tool, where, base_dir, document)
        issues.extend(problems)
        found[tool.id] = {
            "id": tool.id,
            "kind": tool.kind,
            "impl": _impl(tool, base_dir) if not problems else tool.impl,
            "config": tool.config,
        }
    return found, issues


def _check(tool: Tool, where: str, base_dir: Path, document: Document) -> list[Issue]:
    if tool.kind == "langchain":
        return [
            Issue(
                "unsupported_feature",
                "langchain tools are not supported; wrap the tool in a Python function "
                "(kind: python)",
                field=f"{where}.kind",
            )
        ]
    if tool.mode == "class":
        return [
            Issue(
                "unsupported_feature",
                "mode: class is not supported; name a function (a module-level instance's "
                "method works: file.py#instance.method)",
                field=f"{where}.mode",
            )
        ]
    if tool.kind == "python":
        return _check_python(tool, where, base_dir)
    if tool.kind == "http":
        return _unknown_keys(tool.config, HTTP_CONFIG, f"{where}.config")
    if tool.kind == "mcp":
        return _check_mcp(tool, where)
    if not tool.impl:
        return [
            Issue(
                "invalid_graph",
                "a subgraph tool names its subgraph in `impl`",
                field=f"{where}.impl",
            )
        ]
    if tool.impl not in document.subgraphs:
        known = ", ".join(document.subgraphs) or "none"
        return [
            Issue(
                "unknown_reference",
                f"there is no subgraph '{tool.impl}'; subgraphs: {known}",
                field=f"{where}.impl",
            )
        ]
    return []


def _check_python(tool: Tool, where: str, base_dir: Path) -> list[Issue]:
    if not tool.impl:
        return [
            Issue(
                "invalid_graph",
                "a python tool names its function in `impl`: 'file.py#function' or "
                "'module.path:function'",
                field=f"{where}.impl",
            )
        ]
    try:
        reference = parse_reference(tool.impl)
    except ReferenceSyntaxError as exc:
        return [Issue("invalid_graph", str(exc), field=f"{where}.impl")]
    if reference.path is not None:
        path = _file(reference.path, base_dir)
        if not path.is_file():
            return [
                Issue(
                    "unknown_reference",
                    f"no file {path} (relative paths start at the YAML file's folder, {base_dir})",
                    field=f"{where}.impl",
                )
            ]
    return []


def _check_mcp(tool: Tool, where: str) -> list[Issue]:
    config = tool.config
    issues = _unknown_keys(config, MCP_CONFIG, f"{where}.config")
    command, url = config.get("command"), config.get("url")
    if bool(command) == bool(url):
        issues.append(
            Issue(
                "invalid_graph",
                "an mcp tool sets exactly one of config.command (a stdio server, e.g. "
                "'python server.py') and config.url (a streamable-HTTP server)",
                field=f"{where}.config",
            )
        )
    for key in ("command", "url", "tool"):
        if key in config and not isinstance(config[key], str):
            issues.append(
                Issue(
                    "invalid_graph", f"config.{key} must be a string", field=f"{where}.config.{key}"
                )
            )
    if not isinstance(config.get("tool"), str) or not config.get("tool"):
        issues.append(
            Issue(
                "invalid_graph",
                "an mcp tool names the server's tool to call in config.tool",
                field=f"{where}.config.tool",
            )
        )
    for key in ("env", "arguments"):
        if key in config and not isinstance(config[key], dict):
            issues.append(
                Issue(
                    "invalid_graph",
                    f"config.{key} must be an object",
                    field=f"{where}.config.{key}",
                )
            )
    return issues


def _unknown_keys(config: dict[str, Any], valid: tuple[str, ...], where: str) -> list[Issue]:
    return [
        Issue(
            "unknown_field",
            f"unknown field '{key}'; valid fields: {', '.join(valid)}",
            field=f"{where}.{key}",
        )
        for key in config
        if key not in valid
    ]


def _impl(tool: Tool, base_dir: Path) -> str | None:
    """A python file reference made absolute (against the YAML file's folder)."""
    if tool.kind != "python" or not tool.impl:
        return tool.impl
    reference = parse_reference(tool.impl)
    if reference.path is None:
        return reference.text
    return f"{_file(reference.path, base_dir)}#{reference.attribute}"


def _file(path: str, base_dir: Path) -> Path:
    candidate = Path(path).expanduser()
    return (candidate if candidate.is_absolute() else base_dir / candidate).resolve()


__all__ = ["HTTP_CONFIG", "HTTP_FIELDS", "MCP_CONFIG", "declarations"]

"""Read File: a file under the files root, as text, JSON or a file reference."""

from collections.abc import Mapping
from typing import Any

from nodeloom.files import path_problem
from nodeloom.plugins.contract import NodeDefinition, Parameter, Port

READ_AS = ("auto", "text", "json", "binary")


def check_path(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A path written inline that can never be under the files root."""
    path = data.get("path")
    if isinstance(path, str) and path and "{{" not in path:
        problem = path_problem(path)
        if problem:
            return [("path", problem)]
    return []


definition = NodeDefinition(
    id="read-file",
    name="Read File",
    category="integration",
    description="Reads a file under the files root (NODELOOM_FILES_ROOT) as text, JSON, or "
    "a file reference {$ref, mime, size, name} that later nodes stream from.",
    icon="FileInput",
    inputs=(
        Port(
            "input",
            required=False,
            description="Optional: the spine value, for expressions in the parameters ($json).",
        ),
    ),
    outputs=(
        Port(
            "output",
            description="The text, the parsed JSON, or a file reference (as binary).",
        ),
    ),
    parameters=(
        Parameter(
            "path",
            "string",
            "Path",
            required=True,
            hybrid=True,
            socket="string",
            placeholder="reports/q3.csv",
            description="Relative to the files root; `..`, absolute paths and symbolic "
            "links are refused.",
        ),
        Parameter(
            "as",
            "enum",
            "Read as",
            default="auto",
            options=READ_AS,
            description="auto: by media type (JSON types as json, text types as text, the "
            "rest as binary). text and json read at most 10 MB; binary any size.",
        ),
    ),
    side_effects="pure",
    output_shape={"$ref": "string", "mime": "string", "size": "int", "name": "string"},
    check=check_path,
)
